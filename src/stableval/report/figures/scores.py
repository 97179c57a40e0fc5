"""Figures of agent scores: the forest plot of scores with intervals and the win-probability heatmap.

>>> import stableval
>>> table = stableval.read_any(stableval.example_path(), duplicates="keep")
>>> figure = forest_plot(stableval.score_agents(table, ["mv", "stableval"], bootstrap=50))
>>> figure.axes[0].get_title()
'Agent scores with 95% bootstrap intervals'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from stableval.aggregate.registry import method_entry, primary_method
from stableval.evaluate.scores import AgentScores
from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

def forest_plot(result: AgentScores) -> Figure:
    """Score per agent and method with its bootstrap interval (agents ordered by the primary method's score)."""
    scores: pd.DataFrame = result.scores
    methods = list(result.methods)
    order = (scores[scores["method"] == primary_method(methods)].sort_values("score")["agent"].tolist())
    fig = new_figure(7.5, 1.2 + 0.45 * len(order))
    ax = fig.add_subplot()
    offsets = np.linspace(-0.25, 0.25, len(methods)) if len(methods) > 1 else np.zeros(1)
    for offset, method in zip(offsets, methods, strict=True):
        part = scores[scores["method"] == method].set_index("agent").loc[order]
        y = np.arange(len(order)) + offset
        low = (part["score"] - part["ci_low"]).clip(lower=0).to_numpy()
        high = (part["ci_high"] - part["score"]).clip(lower=0).to_numpy()
        entry = method_entry(method)
        ax.errorbar(part["score"], y, xerr=[low, high] if np.isfinite(low).all() else None, fmt="o", ms=5,
                    capsize=3, color=entry.colour, label=entry.title)
    ax.set_yticks(np.arange(len(order)), order)
    ax.set_xlabel("Agent score (mean item credit, 0–1)")
    ax.set_ylabel("Agent")
    confidence = round(100 * result.settings.get("confidence", 0.95))
    ax.set_title(f"Agent scores with {confidence}% bootstrap intervals")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def win_heatmap(matrix: pd.DataFrame, title: str = "P(row agent scores above column agent)") -> Figure:
    """Heatmap of a square agents × agents probability matrix, with the value in each cell."""
    order = list(matrix.index)
    values = matrix.loc[order, order].to_numpy(float)
    fig = new_figure(1.6 + 0.75 * len(order), 1.2 + 0.6 * len(order))
    ax = fig.add_subplot()
    image = ax.imshow(values, vmin=0, vmax=1, cmap="RdBu_r")
    for i in range(len(order)):
        for j in range(len(order)):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if abs(values[i, j] - 0.5) > 0.35 else "black")
    ax.set_xticks(range(len(order)), order, rotation=40, ha="right")
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("Column agent")
    ax.set_ylabel("Row agent")
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="Probability (0–1)", shrink=0.8)
    return fig
