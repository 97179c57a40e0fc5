"""Figure of ranking stability: mean Kendall tau-b against the rater-subset size, one line per method.

>>> import stableval
>>> from stableval.evaluate.stability import ranking_stability
>>> table = stableval.read_any(stableval.example_path(), duplicates="keep")
>>> result = ranking_stability(table, ["mv"], sizes=[0.5], repetitions=3)
>>> stability_figure(result).axes[0].get_xlabel()
'raters in subset (count, of 65)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stableval.aggregate.registry import method_entry
from stableval.evaluate.stability import StabilityResult
from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["stability_figure"]


def stability_figure(result: StabilityResult) -> Figure:
    """Mean tau-b against subset size (raters), one line per method with its confidence band."""
    figure = new_figure(6.4, 4.2, layout="tight", dpi=120)
    axes = figure.add_subplot()
    level = round(float(result.settings["confidence"]) * 100)
    for method in result.methods:
        entry = method_entry(method)
        rows = result.summary[result.summary["method"] == method].sort_values("raters")
        x = rows["raters"].to_numpy()
        line = axes.plot(x, rows["tau_mean"], marker="o", label=entry.label, color=entry.colour)[0]
        axes.fill_between(x, rows["tau_ci_low"].to_numpy(dtype=float), rows["tau_ci_high"].to_numpy(dtype=float),
                          color=line.get_color(), alpha=0.2, linewidth=0)
    total = result.dataset["raters"]
    axes.set_title(f"Ranking stability under rater subsampling\n({result.settings['repetitions']} subsets per size, "
                   f"{level}% CI of the mean)")
    axes.set_xlabel(f"raters in subset (count, of {total})")
    axes.set_ylabel("Kendall τ-b with the all-rater ranking (unitless)")
    lows = result.summary[["tau_mean", "tau_ci_low"]].to_numpy(dtype=float)
    lows = lows[np.isfinite(lows)]
    axes.set_ylim(max(-1.05, (float(lows.min()) if lows.size else 0.0) - 0.05), 1.02)
    axes.grid(alpha=0.3)
    axes.legend(title="method")
    return figure
