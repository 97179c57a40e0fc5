"""Figures of pairwise leaderboards: Bradley–Terry ratings with their intervals, one panel per criterion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def rating_plot(board: Any) -> Figure:
    """Bradley–Terry ratings with bootstrap intervals, one panel per criterion."""
    ratings: pd.DataFrame = board.ratings
    criteria = list(dict.fromkeys(ratings["criterion"]))
    agents = ratings["agent"].nunique()
    fig = new_figure(6.5 * min(len(criteria), 2), (1.2 + 0.45 * agents) * int(np.ceil(len(criteria) / 2)))
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
