"""Plackett–Luce for partial rankings with ties: each item's options get strengths; a ranking is a run of choices.

Model (Luce 1959; Plackett 1975): option j of an item has strength λ_j > 0, and a ranking is read as successive
Luce choices, each option chosen from a set S with probability λ_j / Σ_{k∈S} λ_k; the sets, ties and the options a
ranking leaves out are those of :mod:`~stableval.aggregate.rankings.choices` (a tied option is chosen over what
ranks below its group; one pool slot stands for the options none of the item's rankings names). The plausibility
of an item is its strengths normalised.

Estimation, maximum a posteriori with independent Gamma(a, 1) priors on the strengths (``prior_shape`` a; a = 1:
maximum likelihood, which exists only when, within each item, every option both wins and loses a choice — Hunter
2004, Assumption 1):

* ``solver="mm"`` (default), the minorise–maximise algorithm of Hunter (2004), "MM algorithms for generalized
  Bradley–Terry models", Annals of Statistics 32(1):384–406: λ_j ← (a − 1 + w_j) / (b + Σ_{e∋j} 1/Λ_e) with w_j
  the choices j wins and Λ_e the total strength of choice set e (the prior terms as in the EM for the posterior
  mode of Caron & Doucet 2012, "Efficient Bayesian inference for generalized Bradley–Terry models", JCGS 21(1);
  b = 1 when a > 1, else the strengths are rescaled each step). Each step increases the posterior.
* ``solver="ilsr"``: iterative Luce spectral ranking of Maystre & Grossglauser (2015), "Fast and accurate inference
  of Plackett–Luce models", NeurIPS 28: the strengths are the stationary distribution of the Markov chain whose
  rate from a loser j to the winner w of choice e is 1/Λ_e, recomputed until it settles. Maximum likelihood only
  (``prior_shape`` 1).

Both are checked against ``choix`` (Maystre's reference implementation) in the tests.

>>> from stableval.data.rankings import Rankings
>>> rankings = Rankings.from_records([(None, "q", ["a", "b"]), (None, "q", ["b", "a"]), (None, "q", ["a", "b"])])
>>> PlackettLuce(prior_shape=1, tol=1e-14).fit(rankings).distributions()    # a beat b 2:1 → strengths 2:1
{'q': {'a': 0.666666666667, 'b': 0.333333333333}}
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stableval.aggregate.rankings.base import RankingAggregator
from stableval.aggregate.rankings.choices import ChoiceEvents, Slots, choice_events
from stableval.aggregate.rankings.methods import PRIOR_SHAPE as PRIOR_SHAPE, SOLVERS, declared
from stableval.data.rankings import Rankings

__all__ = ["METHOD", "PRIOR_SHAPE", "PlackettLuce", "fit_strengths", "warm_start"]



def warm_start(start: RankingAggregator | None, slots: Slots, rankings: Rankings) -> np.ndarray | None:
    """Per-slot plausibility of a previous fit where its items and options carry the same names (the rest get
    their item's mean), or None without a usable previous fit."""
    if start is None or not hasattr(start, "plausibility_"):
        return None
    old = start.rankings_
    old_items = {old.item_name(i): i for i in range(old.n_items)}
    names = rankings.option_names()
    old_options = {name: j for j, name in enumerate(old.option_names())}
    old_slots = start.slots_
    old_key = dict(zip(zip(old_slots.item.tolist(), old_slots.option.tolist(), strict=True),
                       start.plausibility_.tolist(), strict=True))
    values = np.full(slots.n_slots, np.nan)
    for k, (item, option) in enumerate(zip(slots.item.tolist(), slots.option.tolist(), strict=True)):
        i = old_items.get(rankings.item_name(item))
        j = -1 if option < 0 else old_options.get(names[option], -2)
        if i is not None and (i, j) in old_key:
            values[k] = old_key[(i, j)]
    if np.all(np.isnan(values)):
        return None
    means = np.add.reduceat(np.nan_to_num(values), slots.offsets[:-1]) / np.maximum(
        np.add.reduceat(~np.isnan(values), slots.offsets[:-1]), 1)
    filled = np.where(np.isnan(values), np.repeat(means, np.diff(slots.offsets)), values)
    return np.where(filled > 0, filled, 1.0 / np.repeat(np.diff(slots.offsets), np.diff(slots.offsets)))


def fit_strengths(events: ChoiceEvents, slots: Slots, *, prior_shape: float, solver: str = "mm",
                  weights: np.ndarray | None = None, start: np.ndarray | None = None, max_iter: int = 10_000,
                  tol: float = 1e-10) -> tuple[np.ndarray, int, bool]:
    """Strengths (K,) normalised per item, iterations used and whether they converged (largest change of a log
    strength below ``tol``). ``weights``: one per choice (default 1)."""
    k = slots.n_slots
    weights = np.ones(events.n_events) if weights is None else np.asarray(weights, dtype=float)
    wins = np.bincount(events.winner, weights=weights, minlength=k)
    shape = prior_shape - 1.0
    rate = 1.0 if prior_shape > 1 else 0.0
    strength = slots.normalise(np.ones(k) if start is None else np.asarray(start, dtype=float))
    if rate > 0:  # the posterior mode's scale: each item's strengths sum to (a - 1) per candidate
        strength = strength * shape * np.repeat(np.diff(slots.offsets), np.diff(slots.offsets))
    if solver == "ilsr":
        if prior_shape != 1:
            raise ValueError("solver='ilsr' is maximum likelihood only: use prior_shape=1, or solver='mm'")
        return _ilsr(events, slots, weights, strength, max_iter, tol)
    if solver != "mm":
        raise ValueError(f"solver={solver!r}; allowed: {', '.join(SOLVERS)}")
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        totals = events.set_sums(strength)
        inverse = np.bincount(events.member_slot, weights=(weights / totals)[events.member_event], minlength=k)
        new = (shape + wins) / (rate + inverse)
        if rate == 0.0:
            new = slots.normalise(new)
        change = _largest_log_change(strength, new)
        strength = new
        if change < tol:
            converged = True
            break
    return slots.normalise(strength), iteration, converged


def _largest_log_change(old: np.ndarray, new: np.ndarray) -> float:
    both = (old > 0) & (new > 0)
    if not both.any():
        return 0.0
    return float(np.max(np.abs(np.log(new[both]) - np.log(old[both]))))


def _ilsr(events: ChoiceEvents, slots: Slots, weights: np.ndarray, strength: np.ndarray, max_iter: int,
          tol: float) -> tuple[np.ndarray, int, bool]:
    """Iterative Luce spectral ranking: per item, the stationary distribution of the choice Markov chain."""
    k = slots.n_slots
    local = np.arange(k) - slots.offsets[slots.item]                     # position of each slot in its item
    size = np.diff(slots.offsets)
    loser = events.member_slot != events.winner[events.member_event]
    source, target = events.member_slot[loser], events.winner[events.member_event[loser]]
    item = slots.item[source]
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        rate = (weights / events.set_sums(strength))[events.member_event[loser]]
        new = np.zeros(k)
        for m in np.unique(size):
            items = np.flatnonzero(size == m)
            if m == 1:
                new[slots.offsets[items]] = 1.0
                continue
            row = np.full(slots.n_items, -1)
            row[items] = np.arange(items.size)
            chosen = row[item] >= 0
            chain = np.zeros((items.size, m, m))
            np.add.at(chain, (row[item[chosen]], local[source[chosen]], local[target[chosen]]), rate[chosen])
            generator = chain - np.eye(m)[None] * chain.sum(axis=2)[:, :, None]
            system = np.swapaxes(generator, 1, 2).copy()
            system[:, -1, :] = 1.0
            rhs = np.zeros((items.size, m))
            rhs[:, -1] = 1.0
            try:
                pi = np.linalg.solve(system, rhs[..., None])[..., 0]
            except np.linalg.LinAlgError:
                pi = np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(system, rhs, strict=True)])
            new[slots.offsets[items][:, None] + np.arange(m)[None, :]] = np.maximum(pi, 0.0)
        new = slots.normalise(new)
        change = _largest_log_change(strength, new)
        strength = new
        if change < tol:
            converged = True
            break
    return strength, iteration, converged


#: the declaration this estimator reads (its hyper-parameters: :attr:`PlackettLuce.PARAMETERS`)
METHOD = declared("pl")


class PlackettLuce(RankingAggregator):
    """Plackett–Luce strengths of each item's options, by MM or I-LSR (see the module docstring).

    Args:
        prior_shape: Gamma(a, 1) prior shape on each strength; 1 = maximum likelihood.
        solver: ``"mm"`` (Hunter 2004) or ``"ilsr"`` (Maystre & Grossglauser 2015; maximum likelihood only).
        max_iter, tol: stop when no log strength moves by more than ``tol`` in a step, or after ``max_iter``.

    Attributes after fitting: ``plausibility_`` (normalised strengths per slot), ``n_iter_``, ``converged_``.
    """

    pooled = True
    PARAMETERS = METHOD.params

    def __init__(self, prior_shape: float = 2.0, solver: str = "mm", max_iter: int = 10_000,
                 tol: float = 1e-9) -> None:
        self._set_checked(prior_shape=prior_shape, solver=solver, max_iter=max_iter, tol=tol)
        if solver == "ilsr" and self.prior_shape != 1:
            raise ValueError("solver='ilsr' is maximum likelihood only: use prior_shape=1, or solver='mm'")

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        events = choice_events(rankings, slots)
        strength, self.n_iter_, self.converged_ = fit_strengths(
            events, slots, prior_shape=self.prior_shape, solver=self.solver, start=warm_start(start, slots, rankings),
            max_iter=self.max_iter, tol=self.tol)
        return strength

    def summary(self) -> dict[str, Any]:
        return {"n_iter": int(self.n_iter_), "converged": bool(self.converged_)}
