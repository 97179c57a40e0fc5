"""Figure of reliability against quality control: the evaluators × metrics matrix of NVIDIA's notebook.

>>> import pandas as pd
>>> from stableval.evaluate.reliability import reliability_vs_qc
>>> frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "rater": ["qc", "ann", "qc", "ann"],
...                       "label": ["A", "A", "B", "A"]})
>>> figure = reliability_figure(reliability_vs_qc(frame, qc_rater="qc", min_items=1))
>>> figure.axes[0].get_title()
'Reliability against QC (rater): overall 50.00%'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stableval.evaluate.reliability import ReliabilityResult
from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["reliability_figure"]


def reliability_figure(result: ReliabilityResult) -> Figure:
    """The evaluators × metrics matrix (reliability %, flag mismatch %, total items; N in every cell).

    Reliability is coloured red (0%) to green (100%), flag mismatch green (0%) to red (100%), as in the
    notebook; an ``Overall`` row closes the matrix, and evaluators with few applicable items are starred.
    """
    from matplotlib import colormaps

    rows = result.table()
    n = len(rows)
    colours = np.ones((n, 3, 4))
    cmap = colormaps["RdYlGn"]
    rel = rows["reliability"].to_numpy(dtype=float)
    mis = rows["flag_mismatch_pct"].to_numpy(dtype=float)
    colours[:, 0] = np.where(np.isfinite(rel)[:, None], cmap(np.nan_to_num(rel)), 1.0)
    colours[:, 1] = np.where(np.isfinite(mis)[:, None], cmap(1.0 - np.nan_to_num(mis) / 100.0), 1.0)
    colours[:, 2] = (0.93, 0.93, 0.93, 1.0)
    fig = new_figure(7.5, max(3.0, 1.4 + 0.42 * n), layout="tight")
    ax = fig.add_subplot()
    ax.imshow(colours, aspect="auto")
    applicable = rows["applicable"].to_numpy(dtype=np.int64)
    compared = rows["flag_compared"].to_numpy(dtype=np.int64)
    totals = rows["total_items"].to_numpy(dtype=np.int64)
    names = [str(name) for name in rows["evaluator"]]
    for i in range(n):
        weight = "bold" if names[i] == "Overall" else "normal"
        cells = (
            "N/A" if not np.isfinite(rel[i]) else f"{100 * rel[i]:.0f}%",
            "N/A" if not np.isfinite(mis[i]) else f"{mis[i]:.0f}%",
            f"{totals[i]}",
        )
        ns = (f"N={applicable[i]}", f"N={compared[i]}", "items")
        for j, (text, sub) in enumerate(zip(cells, ns, strict=True)):
            luminance = float(colours[i, j, :3] @ np.array([0.299, 0.587, 0.114]))
            ax.text(j, i, f"{text}\n{sub}", ha="center", va="center", fontsize=8, fontweight=weight,
                    color="white" if luminance < 0.45 else "black")
    ax.set_xticks(range(3), ["Reliability (%)", "Flag mismatch (%)", "Total items (count)"])
    ax.set_yticks(range(n), [name + (" *" if few else "") for name, few in zip(names, rows["few_items"],
                                                                                strict=True)])
    ax.xaxis.tick_top()
    ax.set_xlabel(f"metric (N = items in the denominator; * = fewer than {result.settings['min_items']} "
                  "applicable items)")
    ax.set_ylabel("evaluator")
    overall = float(result.overall["reliability"])
    ax.set_title(f"Reliability against QC ({result.settings['qc']}): overall "
                 + ("N/A" if not np.isfinite(overall) else f"{100 * overall:.2f}%"), pad=28)
    return fig
