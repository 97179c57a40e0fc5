"""Figures of NRP results in the spirit of Heineking et al. (2024), Figures 1 and 2: mean NRP per model grouped by
prompt, and mean NRP against model size. Both take the summary of :func:`stableval.nrp.score_answers`.

>>> import pandas as pd
>>> summary = pd.DataFrame({"model": ["big", "small"], "prompt": ["plain", "plain"], "params": [7e9, 1.24e8],
...                         "mean_nrp": [0.8, 0.5], "ci_low": [0.7, 0.4], "ci_high": [0.9, 0.6]})
>>> nrp_by_prompt_figure(summary).axes[0].get_xlabel()
'prompt'
>>> nrp_vs_size_figure(summary).axes[0].get_title()
'Model size vs NRP (prompt: plain)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["nrp_by_prompt_figure", "nrp_vs_size_figure"]


def nrp_by_prompt_figure(summary: pd.DataFrame, *, title: str = "NRP by model, grouped by prompt") -> Figure:
    """Grouped bars: mean NRP per model (bars, lowest mean first) within each prompt (groups), with the
    bootstrap intervals as error bars when they were computed."""
    prompts = list(pd.unique(summary["prompt"]))
    models = list(summary.groupby("model")["mean_nrp"].mean().sort_values().index)
    width = 0.8 / max(len(models), 1)
    figure = new_figure(max(6.0, 1.2 * len(prompts) * max(len(models), 1) * 0.35 + 3), 4.5, layout="tight",
                        dpi=120)
    axes = figure.add_subplot()
    x = np.arange(len(prompts))
    for i, model in enumerate(models):
        part = summary[summary["model"] == model].set_index("prompt").reindex(prompts)
        mean = part["mean_nrp"].to_numpy(dtype=float)
        low = part["ci_low"].to_numpy(dtype=float)
        high = part["ci_high"].to_numpy(dtype=float)
        err = np.vstack([mean - low, high - mean]) if not np.isnan(low).all() else None
        axes.bar(x + (i - (len(models) - 1) / 2) * width, mean, width, yerr=err, capsize=2, label=model)
    axes.set_xticks(x, prompts)
    axes.set_xlabel("prompt")
    axes.set_ylabel("mean NRP (0–1, higher = ranked above more documents)")
    axes.set_ylim(0, 1.05)
    axes.set_title(title)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), title="model")
    return figure


def nrp_vs_size_figure(summary: pd.DataFrame, *, prompt: str | None = None, title: str | None = None) -> Figure:
    """Mean NRP against the number of model parameters (log scale) for one prompt (default: the first), models
    without a size left out."""
    prompt = prompt if prompt is not None else str(summary["prompt"].iloc[0])
    part = summary[(summary["prompt"] == prompt) & summary["params"].notna()]
    figure = new_figure(6.5, 4.5, layout="tight", dpi=120)
    axes = figure.add_subplot()
    axes.errorbar(part["params"], part["mean_nrp"],
                  yerr=np.vstack([part["mean_nrp"] - part["ci_low"], part["ci_high"] - part["mean_nrp"]])
                  if part["ci_low"].notna().all() else None, fmt="o", capsize=3)
    for row in part.itertuples(index=False):
        axes.annotate(str(row.model), (row.params, row.mean_nrp), textcoords="offset points", xytext=(4, 4),
                      fontsize="small")
    axes.set_xscale("log")
    axes.set_xlabel("model size (parameters, log scale)")
    axes.set_ylabel("mean NRP (0–1)")
    axes.set_title(title or f"Model size vs NRP (prompt: {prompt})")
    return figure
