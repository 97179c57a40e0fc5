"""Figures of rater diagnostics: accuracy against leniency and strictness, and the least reliable raters'
confusion matrices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def rater_scatter(diagnostics: Any) -> Figure:
    """Each rater's class-balanced accuracy against leniency and against strictness (point size = ratings)."""
    raters: pd.DataFrame = diagnostics.raters
    fig = new_figure(10, 4.2)
    chance = 1.0 / len(diagnostics.levels)
    sizes = 12 + 60 * np.sqrt(raters["ratings"] / max(float(raters["ratings"].max()), 1.0))
    flagged = raters["below_chance"] | raters["near_uniform"]
    for k, (column, label) in enumerate((("leniency", "Leniency: P(top level given), mean over true levels"),
                                         ("strictness", "Strictness: P(bottom level given), mean over true levels"))):
        ax = fig.add_subplot(1, 2, k + 1)
        ax.scatter(raters[column][~flagged], raters["accuracy"][~flagged], s=sizes[~flagged], alpha=0.6,
                   color="#1f77b4", label="rater")
        if flagged.any():
            ax.scatter(raters[column][flagged], raters["accuracy"][flagged], s=sizes[flagged], alpha=0.9,
                       color="#d62728", marker="x", label="flagged (≤ chance or near-uniform)")
        ax.axhline(chance, color="grey", linestyle="--", linewidth=1, label=f"chance (1/K = {chance:.2f})")
        ax.set_xlabel(f"{label} (0–1)")
        ax.set_ylabel("Class-balanced accuracy (0–1)")
        ax.set_title(f"Raters: accuracy vs {column}")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize="x-small", loc="lower right")
    return fig


def confusion_grid(diagnostics: Any, n: int = 6, min_ratings: int = 5) -> Figure:
    """Confusion matrices of the ``n`` least accurate raters with at least ``min_ratings`` ratings."""
    raters: pd.DataFrame = diagnostics.raters
    chosen = raters[raters["ratings"] >= min_ratings].sort_values("accuracy").head(n)
    if chosen.empty:
        chosen = raters.sort_values("accuracy").head(n)
    levels = list(diagnostics.levels)
    columns = min(3, len(chosen))
    rows = int(np.ceil(len(chosen) / columns))
    fig = new_figure(3.3 * columns, 3.0 * rows + 0.4)
    for k, row in enumerate(chosen.itertuples(index=False)):
        ax = fig.add_subplot(rows, columns, k + 1)
        matrix = diagnostics.confusion[diagnostics.raters_order.index(str(row.rater))]
        ax.imshow(matrix, vmin=0, vmax=1, cmap="Blues")
        for i in range(len(levels)):
            for j in range(len(levels)):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if matrix[i, j] > 0.6 else "black")
        ax.set_xticks(range(len(levels)), levels, rotation=30, fontsize=7)
        ax.set_yticks(range(len(levels)), levels, fontsize=7)
        ax.set_xlabel("Level given")
        ax.set_ylabel("True level")
        ax.set_title(f"{row.rater}: accuracy {row.accuracy:.2f}, n={row.ratings}", fontsize=9)
    fig.suptitle("Confusion matrices of the least reliable raters (probability, 0–1)")
    return fig
