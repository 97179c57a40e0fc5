"""What every ranking aggregator shares: ``fit(rankings)``, and each item's plausibility over its options.

A ranking aggregator turns the partial rankings of each item (:class:`~stableval.data.rankings.Rankings`) into a
*plausibility*: a distribution over the item's options (Stutz et al. 2023, arXiv:2307.02191, call the distribution
over conditions a case's plausibility). It is kept per candidate slot (:class:`~.choices.Slots`: the options the
item's rankings name, and for the Plackett–Luce models one pool for all the others); :meth:`plausibility_matrix`
spreads it over every option, :meth:`distributions` names it, and :func:`top_entries` finds the options tied for
the top of each item (of the fit, or of each of many samples).

Estimators follow the shape of the label aggregators (:class:`~stableval.aggregate._base.Estimator`):
hyper-parameters only in ``__init__``, each declared once in ``PARAMETERS``; results in trailing-underscore
attributes after ``fit``.

>>> from stableval.aggregate.rankings import IRN
>>> from stableval.data.rankings import Rankings
>>> fit = IRN().fit(Rankings.from_records([(None, "q", ["x", "y"]), (None, "q", ["y"])]))
>>> fit.distributions()
{'q': {'x': 0.4, 'y': 0.6}}
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from stableval.aggregate._base import Estimator
from stableval.aggregate.rankings.choices import Slots, candidate_slots
from stableval.data.rankings import Rankings

__all__ = ["RankingAggregator", "top_entries"]

#: Values within this relative distance of an item's maximum tie for its top (sums of 1/g in another order).
TIE_TOLERANCE = 1e-9


class RankingAggregator(Estimator):
    """Base class: ``fit(rankings)`` sets ``slots_`` (the candidates) and ``plausibility_`` (K,), a distribution
    over each item's slots; subclasses implement :meth:`_fit`.

    Attributes after fitting: ``rankings_`` (what was fitted), ``slots_``, ``plausibility_``.
    """

    #: whether the options no ranking of an item names share one candidate slot (the Plackett–Luce models) or get
    #: nothing (point scores such as IRN and Borda)
    pooled: ClassVar[bool] = False

    rankings_: Rankings
    slots_: Slots
    plausibility_: np.ndarray

    def fit(self, rankings: Rankings, start: RankingAggregator | None = None) -> Self:
        """Fit on partial rankings; ``start`` (a fitted aggregator of the same kind) warm-starts an iterative fit
        where items, options and raters carry the same names."""
        if not isinstance(rankings, Rankings):
            raise TypeError(f"fit() takes stableval.data.rankings.Rankings, got {type(rankings).__name__}")
        self.rankings_ = rankings
        self.slots_ = candidate_slots(rankings, pool=self.pooled)
        self.plausibility_ = self._fit(rankings, self.slots_, start)
        return self

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    # ---------------------------------------------------------------- views
    def plausibility_matrix(self) -> np.ndarray:
        """(N, C): each item's plausibility over every option (a pool's share spread evenly over its options)."""
        return self.slots_.dense(self.plausibility_)

    def top_entries(self) -> tuple[np.ndarray, np.ndarray]:
        """(item, option) of the options tied for the top of each item's plausibility (:func:`top_entries`)."""
        return top_entries(self.slots_, self.plausibility_)

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate: ``item``, ``option`` (``(others)`` for a pool), ``plausibility``, ``rank``
        (1 = the item's most plausible; ties share the best rank)."""
        slots, rankings = self.slots_, self.rankings_
        names = np.asarray((*rankings.option_names(), "(others)"), dtype=object)
        frame = pd.DataFrame({"item": [rankings.item_name(int(i)) for i in slots.item],
                              "option": names[slots.option], "plausibility": self.plausibility_})
        frame["rank"] = frame.groupby("item", sort=False)["plausibility"].rank(ascending=False, method="min")
        return frame.astype({"rank": int})

    def distributions(self) -> dict[str, dict[str, float]]:
        """``{item: {option: plausibility}}`` over each item's candidates (a pool under ``(others)``), rounded to
        12 digits: what a caller outside Python reads."""
        out: dict[str, dict[str, float]] = {}
        frame = self.to_frame()
        for item, option, value in zip(frame["item"], frame["option"], frame["plausibility"].to_numpy(float),
                                       strict=True):
            out.setdefault(str(item), {})[str(option)] = round(float(value), 12)
        return out

    def summary(self) -> dict[str, Any]:
        """Fit statistics worth recording (iterations, convergence); empty for a closed-form aggregator."""
        return {}


def top_entries(slots: Slots, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, option) of every option tied for the top of each item, sorted by row; ``values`` is (K,) or (S, K)
    (then row = s · N + item). A pool at the top stands for every option its item's rankings leave out.

    >>> from stableval.data.rankings import Rankings
    >>> from stableval.aggregate.rankings.choices import candidate_slots
    >>> slots = candidate_slots(Rankings.from_records([(None, "q", ["x"])], options=["x", "y", "z"]), pool=True)
    >>> [r.tolist() for r in top_entries(slots, np.array([[0.9, 0.1], [0.3, 0.7]]))]
    [[0, 1, 1], [0, 1, 2]]
    """
    values = np.atleast_2d(values)
    n = slots.n_items
    best = np.maximum.reduceat(values, slots.offsets[:-1], axis=1)          # (S, N)
    counts = np.diff(slots.offsets)
    top = values >= np.repeat(best, counts, axis=1) * (1 - TIE_TOLERANCE)   # (S, K)
    sample, slot = np.nonzero(top)
    row = sample * n + slots.item[slot]
    option = slots.option[slot]
    pooled = option < 0
    if not pooled.any():
        return row, option
    named = np.zeros((n, slots.n_options), dtype=bool)
    keep = slots.option >= 0
    named[slots.item[keep], slots.option[keep]] = True
    pool_rows = row[pooled]
    extra_row, extra_option = np.nonzero(~named[pool_rows % n])
    rows = np.concatenate([row[~pooled], pool_rows[extra_row]])
    options = np.concatenate([option[~pooled], extra_option])
    order = np.lexsort((options, rows))
    return rows[order], options[order]
