"""Plots of NRP results in the spirit of Heineking et al. (2024), Figures 1 and 2 (PNG, Agg backend)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["plot_by_prompt", "plot_vs_size"]


def plot_by_prompt(summary: pd.DataFrame, path: str | Path, *, title: str = "NRP by model, grouped by prompt") -> Path:
    """Grouped bars: mean NRP per model (bars) within each prompt (groups), with the bootstrap intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prompts = list(pd.unique(summary["prompt"]))
    models = list(summary.groupby("model")["mean_nrp"].mean().sort_values().index)
    width = 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(prompts) * max(len(models), 1) * 0.35 + 3), 4.5))
    x = np.arange(len(prompts))
    for i, model in enumerate(models):
        part = summary[summary["model"] == model].set_index("prompt").reindex(prompts)
        mean = part["mean_nrp"].to_numpy(dtype=float)
        low = part["ci_low"].to_numpy(dtype=float)
        high = part["ci_high"].to_numpy(dtype=float)
        err = np.vstack([mean - low, high - mean]) if not np.isnan(low).all() else None
        ax.bar(x + (i - (len(models) - 1) / 2) * width, mean, width, yerr=err, capsize=2, label=model)
    ax.set_xticks(x, prompts)
    ax.set_xlabel("prompt")
    ax.set_ylabel("mean NRP (0–1, higher = ranked above more documents)")
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), title="model")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)


def plot_vs_size(summary: pd.DataFrame, path: str | Path, *, prompt: str | None = None,
                 title: str | None = None) -> Path:
    """Mean NRP against the number of model parameters (log scale) for one prompt (default: the first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    prompt = prompt if prompt is not None else str(summary["prompt"].iloc[0])
    part = summary[(summary["prompt"] == prompt) & summary["params"].notna()]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    ax.errorbar(part["params"], part["mean_nrp"],
                yerr=np.vstack([part["mean_nrp"] - part["ci_low"], part["ci_high"] - part["mean_nrp"]])
                if part["ci_low"].notna().all() else None, fmt="o", capsize=3)
    for row in part.itertuples(index=False):
        ax.annotate(str(row.model), (row.params, row.mean_nrp), textcoords="offset points", xytext=(4, 4),
                    fontsize="small")
    ax.set_xscale("log")
    ax.set_xlabel("model size (parameters, log scale)")
    ax.set_ylabel("mean NRP (0–1)")
    ax.set_title(title or f"Model size vs NRP (prompt: {prompt})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
