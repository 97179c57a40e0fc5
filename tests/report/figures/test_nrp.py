"""NRP figures are figures, without pyplot state."""

from __future__ import annotations

import numpy as np
import pandas as pd


def test_nrp_figures_are_figures_without_pyplot_state(tmp_path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from stableval.report.figures import nrp_by_prompt_figure, nrp_vs_size_figure, save_figure

    summary = pd.DataFrame({"model": ["a", "b", "a", "b"], "prompt": ["p1", "p1", "p2", "p2"],
                            "params": [1e9, np.nan, 1e9, np.nan], "mean_nrp": [0.9, 0.4, 0.8, 0.5],
                            "ci_low": [np.nan] * 4, "ci_high": [np.nan] * 4})
    before = plt.get_fignums()
    bars = nrp_by_prompt_figure(summary, title="demo")
    size = nrp_vs_size_figure(summary, prompt="p2")
    assert isinstance(bars, Figure) and isinstance(size, Figure) and plt.get_fignums() == before
    axes = bars.axes[0]
    assert axes.get_title() == "demo" and [t.get_text() for t in axes.get_xticklabels()] == ["p1", "p2"]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["b", "a"]  # lowest mean first
    assert size.axes[0].get_xscale() == "log" and len(size.axes[0].texts) == 1  # model b has no size
    assert save_figure(bars, tmp_path / "bars.png").stat().st_size > 1000
