"""Figures of the report, one function each, returning matplotlib figures (titles, axis labels and units always).

>>> import stableval
>>> table = stableval.read_any(stableval.example_path(), duplicates="keep")
>>> figure = forest_plot(stableval.score_agents(table, ["mv", "stableval"], bootstrap=50))
>>> figure.axes[0].get_title()
'Agent scores with 95% bootstrap intervals'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

METHOD_COLOURS = {"mv": "#7f7f7f", "ds": "#1f77b4", "stableval": "#d62728"}
METHOD_NAMES = {"mv": "Majority vote", "ds": "Dawid–Skene", "stableval": "STABLEVAL"}


def _figure(width: float, height: float) -> Figure:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def forest_plot(result: Any) -> Figure:
    """Score per agent and method with its bootstrap interval (agents ordered by the last method's score)."""
    scores: pd.DataFrame = result.scores
    methods = list(result.methods)
    order = (scores[scores["method"] == methods[-1]].sort_values("score")["agent"].tolist())
    fig = _figure(7.5, 1.2 + 0.45 * len(order))
    ax = fig.add_subplot()
    offsets = np.linspace(-0.25, 0.25, len(methods)) if len(methods) > 1 else np.zeros(1)
    for offset, method in zip(offsets, methods, strict=True):
        part = scores[scores["method"] == method].set_index("agent").loc[order]
        y = np.arange(len(order)) + offset
        low = (part["score"] - part["ci_low"]).clip(lower=0).to_numpy()
        high = (part["ci_high"] - part["score"]).clip(lower=0).to_numpy()
        ax.errorbar(part["score"], y, xerr=[low, high] if np.isfinite(low).all() else None, fmt="o", ms=5,
                    capsize=3, color=METHOD_COLOURS.get(method, None), label=METHOD_NAMES.get(method, method))
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
    fig = _figure(1.6 + 0.75 * len(order), 1.2 + 0.6 * len(order))
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


def rating_plot(board: Any) -> Figure:
    """Bradley–Terry ratings with bootstrap intervals, one panel per criterion."""
    ratings: pd.DataFrame = board.ratings
    criteria = list(dict.fromkeys(ratings["criterion"]))
    agents = ratings["agent"].nunique()
    fig = _figure(6.5 * min(len(criteria), 2), (1.2 + 0.45 * agents) * int(np.ceil(len(criteria) / 2)))
    for k, criterion in enumerate(criteria):
        ax = fig.add_subplot(int(np.ceil(len(criteria) / 2)), min(len(criteria), 2), k + 1)
        part = ratings[ratings["criterion"] == criterion].sort_values("rating")
        y = np.arange(len(part))
        err = None
        if part["ci_low"].notna().all():
            err = [(part["rating"] - part["ci_low"]).clip(lower=0), (part["ci_high"] - part["rating"]).clip(lower=0)]
        ax.errorbar(part["rating"], y, xerr=err, fmt="o", capsize=3, color="#d62728")
        ax.set_yticks(y, part["agent"])
        ax.set_xlabel("Bradley–Terry rating (Elo-like points)")
        ax.set_ylabel("Agent")
        ax.set_title(f"Pairwise ratings — {criterion}")
        ax.grid(axis="x", alpha=0.3)
    return fig


def rater_scatter(diagnostics: Any) -> Figure:
    """Each rater's class-balanced accuracy against leniency and against strictness (point size = ratings)."""
    raters: pd.DataFrame = diagnostics.raters
    fig = _figure(10, 4.2)
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
    fig = _figure(3.3 * columns, 3.0 * rows + 0.4)
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


def figure_to_svg(fig: Figure) -> str:
    """The figure as an inline SVG string (no external references)."""
    import io

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]
