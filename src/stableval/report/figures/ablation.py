"""Figure of one ablation sweep: each metric against the swept setting, one line per method with its 95% band.

>>> import pandas as pd
>>> from stableval.simulate.grid_config import Sweep
>>> from stableval.simulate.grid_summary import summarise
>>> rows = [{"sweep": "hard", "parameter": "hard", "value": f"{v:g}", "index": i, "method": "mv", "trial": t,
...          "mse": 0.1 * v + 0.01 * t, "rank_accuracy": 0.9, "kendall_tau": 0.8, "stability": 0.7}
...         for i, v in enumerate((0.0, 0.2)) for t in range(3)]
>>> figure = sweep_figure(summarise(pd.DataFrame(rows)), Sweep("hard", "hard", (0.0, 0.2), ("0", "0.2")), trials=3)
>>> len(figure.axes)
4
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from stableval.aggregate.registry import method_entry
from stableval.report.figures.base import new_figure
from stableval.simulate.grid_config import Sweep
from stableval.simulate.grid_summary import METRIC_LABELS, METRIC_UNITS
from stableval.simulate.metrics import METRICS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["sweep_figure"]


def sweep_figure(summary: pd.DataFrame, sweep: Sweep, *, trials: int) -> Figure:
    """Each metric against the sweep's setting, one line per method with its 95% CI band (one sweep's summary)."""
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in sweep.values)
    x = np.asarray(sweep.values, dtype=float) if numeric else np.arange(len(sweep.values), dtype=float)
    figure = new_figure(10, 7.5, layout=None, dpi=110)
    axes = figure.subplots(2, 2)
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.08, top=0.87, wspace=0.28, hspace=0.38)
    for ax, metric in zip(axes.ravel(), METRICS, strict=True):
        part = summary[summary["metric"] == metric]
        for method in dict.fromkeys(part["method"]):
            rows = part[part["method"] == method].sort_values("index")
            xs = x[rows["index"].to_numpy()]
            entry = method_entry(str(method))
            line = ax.plot(xs, rows["mean"], marker="o", label=entry.label, color=entry.colour)[0]
            ax.fill_between(xs, rows["ci_low"], rows["ci_high"], color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_title(METRIC_LABELS[metric], fontsize=10)
        ax.set_xlabel(sweep.axis_label)
        ax.set_ylabel(METRIC_UNITS[metric])
        if not numeric:
            ax.set_xticks(x, list(sweep.labels))
        ax.grid(alpha=0.3)
    axes[0, 0].legend(title="method")
    figure.suptitle(f"Ablation sweep '{sweep.name}': metrics vs {sweep.axis_label}\n"
                    f"(mean over {trials} trials per setting, bands = 95% CI)")
    return figure
