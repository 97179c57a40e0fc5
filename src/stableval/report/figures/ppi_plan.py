"""The budget planner's figure: interval width against the extra human budget, people only, PPI++ and active.

>>> import pandas as pd
>>> curve = pd.DataFrame({"extra": [0, 100], "width_people": [0.2, 0.1], "width_ppi": [0.1, 0.07],
...                       "width_active": [0.09, 0.06]})
>>> plan_figure(curve, target=0.08).axes[0].get_xlabel()
'Extra people-rated responses (all agents)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["plan_figure"]


def plan_figure(curve: pd.DataFrame, *, target: float | None = None) -> Figure:
    """Mean interval width over agents against extra people-rated responses (``BudgetPlan.curve``), with the
    target width as a dashed line."""
    fig = new_figure(6.4, 4.0)
    ax = fig.add_subplot()
    for column, label, style in (("width_people", "people only", "-"), ("width_ppi", "PPI++ (random sample)", "-"),
                                 ("width_active", "PPI++ active (Zrnic & Candès 2024)", "--")):
        ax.plot(curve["extra"], curve[column], style, label=label)
    if target is not None:
        ax.axhline(target, color="grey", linestyle=":", label=f"target {target:.3g}")
    ax.set_xlabel("Extra people-rated responses (all agents)")
    ax.set_ylabel("Mean interval width (credit)")
    ax.set_title("Interval width against the human budget")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    return fig
