"""One case of partial rankings: every rater's ranking beside the aggregated plausibility (as the DDx blog's
Figure 4, Stutz et al. 2023, arXiv:2307.02191).

Left, one row per ranking of the case and one column per condition any of them names (most plausible first): the
cell holds the condition's group in that ranking (1 = ranked first; tied conditions share a number), darker for
better groups, blank where the ranking leaves it out. Right, the aggregated plausibility of those conditions (and
of the pool of unnamed ones, for the Plackett–Luce models), with the 95% interval of the posterior samples where
the method has them.

>>> from stableval.aggregate.rankings import PlackettLuce
>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([("r1", "c1", [["a"], ["b", "c"]]), ("r2", "c1", ["b"])])
>>> figure = ddx_case_figure(PlackettLuce().fit(rankings), "c1")
>>> [axis.get_title() for axis in figure.axes]
['partial rankings of case c1', 'plausibility (PlackettLuce)']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stableval.report.figures.base import drawable_text, new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from stableval.aggregate.rankings.base import RankingAggregator

__all__ = ["ddx_case_figure"]


def ddx_case_figure(fit: RankingAggregator, case: str, *, top: int = 12) -> Figure:
    """The rankings of item ``case`` (its name in the fitted rankings) and its plausibility under ``fit`` (the
    ``top`` most plausible candidates)."""
    rankings = fit.rankings_
    names = [rankings.item_name(i) for i in range(rankings.n_items)]
    if case not in names:
        raise ValueError(f"no case {case!r}; cases are named {names[0]!r} … {names[-1]!r}")
    item = names.index(case)
    slots = fit.slots_
    span = slice(int(slots.offsets[item]), int(slots.offsets[item + 1]))
    values = fit.plausibility_[span]
    order = np.argsort(-values, kind="stable")[:top]
    option_names = (*rankings.option_names(), "(others)")
    labels = [drawable_text(option_names[int(o)]) for o in slots.option[span][order]]
    columns = {int(o): j for j, o in enumerate(slots.option[span][order])}
    ids = np.flatnonzero(rankings.item_of == item)
    grid = np.full((max(len(ids), 1), len(order)), np.nan)
    for row, r in enumerate(ids):
        start, stop = int(rankings.offsets[r]), int(rankings.offsets[r + 1])
        for option, group in zip(rankings.option[start:stop].tolist(), rankings.group[start:stop].tolist(),
                                 strict=True):
            if option in columns:
                grid[row, columns[option]] = group
    fig = new_figure(4 + 0.55 * len(order), 1.6 + 0.32 * (len(ids) + len(order)))
    left, right = fig.subplots(1, 2, width_ratios=[max(len(order), 1), 4])
    shown = np.where(np.isnan(grid), 0.0, 1.0 / np.where(np.isnan(grid), 1.0, grid))
    left.imshow(shown, cmap="Blues", vmin=0, vmax=1.2, aspect="auto")
    for (row, column), group in np.ndenumerate(grid):
        if not np.isnan(group):
            left.text(column, row, str(int(group)), ha="center", va="center", fontsize=8,
                      color="white" if group == 1 else "black")
    left.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8)
    left.set_yticks(range(len(ids)), [drawable_text(rankings.raters[rankings.rater_of[r]]) if rankings.n_raters > 1
                                      else f"ranking {k + 1}" for k, r in enumerate(ids)], fontsize=8)
    left.set_title(f"partial rankings of case {drawable_text(case)}")
    positions = np.arange(len(order))
    bars = values[order]
    right.barh(positions, bars, color="#1f77b4")
    samples = getattr(fit, "sample_plausibility_", None)
    if samples is not None:
        low, high = np.percentile(np.asarray(samples[:, span], dtype=float)[:, order], [2.5, 97.5], axis=0)
        right.errorbar(bars, positions, xerr=[bars - low, high - bars], fmt="none", ecolor="black", capsize=2)
    right.set_yticks(positions, labels, fontsize=8)
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_title(f"plausibility ({type(fit).__name__})")
    return fig
