"""The budget planner's figure (issue 30)."""

from __future__ import annotations

import pandas as pd

from stableval.report.figures import plan_figure


def test_three_curves_and_the_target() -> None:
    curve = pd.DataFrame({"extra": [0, 50, 100], "width_people": [0.2, 0.15, 0.1], "width_ppi": [0.1, 0.08, 0.07],
                          "width_active": [0.1, 0.07, 0.06]})
    axes = plan_figure(curve, target=0.08).axes[0]
    assert len(axes.lines) == 4 and axes.get_ylabel() == "Mean interval width (credit)"
    assert [text.get_text() for text in axes.get_legend().get_texts()][-1] == "target 0.08"
