"""Rater-aware Plackett–Luce: every rater has a reliability that sharpens or flattens their rankings.

Model (Plackett–Luce with a reliability per rater, as the ordinal peer-grading models with grader reliabilities of
Raman & Joachims 2014, "Methods for ordinal peer grading", KDD, arXiv:1404.3656): option j of item i has a score
θ_ij, rater r a reliability β_r ≥ 0, and rater r's ranking of item i is a run of Luce choices (the choices, ties
and pool of :mod:`~stableval.aggregate.rankings.choices`) with probabilities ∝ exp(β_r θ_ij). β_r = 0 is a rater
whose rankings are random; β_r = 1 the typical rater; a larger β_r a rater who follows the consensus closely. So
an unreliable rater's rankings count less — the ranking counterpart of the Dawid–Skene raters of the label methods.

Priors: θ_ij ~ Normal(0, σ²) (``prior_scale`` σ) and β_r ~ Gamma(s, s) (``reliability_shape`` s; mean 1, so the
typical rater anchors the scale). The posterior mode over (θ, log β) is found by L-BFGS (scipy) with the exact
gradient. An item's plausibility is softmax(θ_i): the choice probabilities of a typical rater.

Per-rater diagnostics (``raters_``): the reliability with an approximate interval (Laplace, from the curvature in
log β with the scores held fixed), the rankings and choices, the log-likelihood gain per choice over random
rankings, the share of the rater's rankings whose first group holds the consensus top option, and a flag when the
reliability is below ``FLAG_BELOW`` (one half) of the median rater's. Rankings with unknown raters share one
reliability. :func:`fit_rater_rankings` is the entry point for callers outside Python's types (the portal):
records in, raters and distributions out, and a previous fit warm-starts the next.

>>> records = [(r, f"q{i}", ["a", "b", "c"]) for r in ("ann", "bob") for i in range(6)]
>>> records += [("eve", f"q{i}", ["c", "a", "b"] if i % 2 else ["b", "c", "a"]) for i in range(6)]
>>> fit = fit_rater_rankings(records)
>>> fit.raters_.set_index("rater")["reliability"].round(2).to_dict()
{'ann': 1.86, 'bob': 1.86, 'eve': 0.12}
>>> fit.raters_.set_index("rater")["flagged"].to_dict()
{'ann': False, 'bob': False, 'eve': True}
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from stableval.aggregate.rankings.base import RankingAggregator
from stableval.aggregate.rankings.choices import ChoiceEvents, Slots, choice_events
from stableval.aggregate.rankings.methods import declared
from stableval.data.rankings import Rankings

__all__ = ["FLAG_BELOW", "METHOD", "RaterPlackettLuce", "fit_rater_rankings"]

#: A rater whose reliability is below this share of the median rater's is flagged in ``raters_``.
FLAG_BELOW = 0.5

#: z of the two-sided 95% interval of the reliabilities
_Z95 = 1.959963984540054


#: the declaration this estimator reads (its hyper-parameters: :attr:`RaterPlackettLuce.PARAMETERS`)
METHOD = declared("rater-pl")


class RaterPlackettLuce(RankingAggregator):
    """Plackett–Luce with a reliability (inverse temperature) per rater, by maximum a posteriori.

    Args:
        prior_scale: standard deviation σ of the Normal(0, σ²) prior on every option score.
        reliability_shape: shape s of the Gamma(s, s) prior on every rater's reliability (mean 1); larger keeps
            reliabilities nearer 1.
        max_iter, tol: L-BFGS iterations and tolerance.

    Attributes after fitting: ``plausibility_`` (softmax of the scores per item), ``scores_`` (K,) θ per slot,
    ``reliability_`` (R,) β per rater, ``raters_`` (the diagnostics frame), ``n_iter_``, ``converged_``,
    ``log_posterior_``.
    """

    pooled = True
    PARAMETERS = METHOD.params

    def __init__(self, prior_scale: float = 2.0, reliability_shape: float = 2.0, max_iter: int = 2000,
                 tol: float = 1e-8) -> None:
        self._set_checked(prior_scale=prior_scale, reliability_shape=reliability_shape, max_iter=max_iter, tol=tol)

    def _fit(self, rankings: Rankings, slots: Slots, start: RankingAggregator | None) -> np.ndarray:
        from scipy.optimize import minimize

        events = choice_events(rankings, slots)
        rater = rankings.rater_of[events.ranking]
        n_raters = rankings.n_raters
        x0 = self._start(start, rankings, slots)
        objective = _Objective(events, rater, n_raters, slots.n_slots, self.prior_scale, self.reliability_shape)
        result = minimize(objective, x0, jac=True, method="L-BFGS-B",
                          options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol * 1e-3})
        k = slots.n_slots
        self.scores_ = np.asarray(result.x[:k])
        self.reliability_ = np.exp(result.x[k:])
        self.n_iter_ = int(result.nit)
        self.converged_ = bool(result.success)
        self.log_posterior_ = float(-result.fun)
        plausibility = _softmax(self.scores_, slots)
        self.raters_ = self._diagnostics(events, rater, rankings, slots, plausibility)
        return plausibility

    def _start(self, start: RankingAggregator | None, rankings: Rankings, slots: Slots) -> np.ndarray:
        """Scores and log reliabilities to start from: a previous fit's where names match, else 0."""
        x0 = np.zeros(slots.n_slots + rankings.n_raters)
        if not isinstance(start, RaterPlackettLuce) or not hasattr(start, "scores_"):
            return x0
        old = start.rankings_
        old_items = {old.item_name(i): i for i in range(old.n_items)}
        old_options = {name: j for j, name in enumerate(old.option_names())}
        old_score = dict(zip(zip(start.slots_.item.tolist(), start.slots_.option.tolist(), strict=True),
                             start.scores_.tolist(), strict=True))
        names = rankings.option_names()
        for k, (item, option) in enumerate(zip(slots.item.tolist(), slots.option.tolist(), strict=True)):
            i = old_items.get(rankings.item_name(item))
            j = -1 if option < 0 else old_options.get(names[option], -2)
            x0[k] = old_score.get((i, j), 0.0) if i is not None else 0.0
        old_raters = dict(zip(old.raters, np.log(np.maximum(start.reliability_, 1e-12)).tolist(), strict=True))
        x0[slots.n_slots:] = [old_raters.get(name, 0.0) for name in rankings.raters]
        return x0

    def _diagnostics(self, events: ChoiceEvents, rater: np.ndarray, rankings: Rankings, slots: Slots,
                     plausibility: np.ndarray) -> pd.DataFrame:
        beta = self.reliability_
        theta = self.scores_
        n_raters = rankings.n_raters
        # choice probabilities and moments of the scores per choice, at the fit
        prob, log_total = _choice_probabilities(theta, beta[rater], events)
        mean_score = np.add.reduceat(prob * theta[events.member_slot], events.starts[:-1])
        mean_square = np.add.reduceat(prob * theta[events.member_slot] ** 2, events.starts[:-1])
        variance = np.maximum(mean_square - mean_score ** 2, 0.0)
        gap = theta[events.winner] - mean_score
        gradient = beta * np.bincount(rater, weights=gap, minlength=n_raters)
        information = (beta ** 2 * np.bincount(rater, weights=variance, minlength=n_raters) - gradient
                       + self.reliability_shape * beta)
        se = 1.0 / np.sqrt(np.maximum(information, 1e-12))
        set_size = np.diff(events.starts)
        log_lik = beta[rater] * theta[events.winner] - log_total
        gain = np.bincount(rater, weights=log_lik + np.log(set_size), minlength=n_raters)
        choices = np.bincount(rater, minlength=n_raters)
        # does the ranking's first group hold the consensus top option of its item?
        top = np.zeros(slots.n_slots, dtype=bool)
        best = np.maximum.reduceat(plausibility, slots.offsets[:-1])
        top[plausibility >= np.repeat(best, np.diff(slots.offsets)) * (1 - 1e-9)] = True
        first = rankings.group == 1
        item = rankings.item_of[rankings.ranking_of]
        hit = np.zeros(rankings.n_rankings, dtype=bool)
        hit[rankings.ranking_of[first][top[slots.lookup(item[first], rankings.option[first])]]] = True
        count = np.bincount(rankings.rater_of, minlength=n_raters)
        agree = np.bincount(rankings.rater_of, weights=hit, minlength=n_raters)
        return pd.DataFrame({
            "rater": list(rankings.raters), "reliability": beta,
            "ci_low": beta * np.exp(-_Z95 * se), "ci_high": beta * np.exp(_Z95 * se),
            "rankings": count, "choices": choices,
            "gain_per_choice": np.divide(gain, choices, out=np.full(n_raters, np.nan), where=choices > 0),
            "top_agreement": np.divide(agree, count, out=np.full(n_raters, np.nan), where=count > 0),
            "flagged": beta < FLAG_BELOW * np.median(beta[count > 0])})

    def summary(self) -> dict[str, Any]:
        return {"n_iter": self.n_iter_, "converged": self.converged_, "log_posterior": self.log_posterior_}


def _softmax(theta: np.ndarray, slots: Slots) -> np.ndarray:
    best = np.maximum.reduceat(theta, slots.offsets[:-1])
    return slots.normalise(np.exp(theta - np.repeat(best, np.diff(slots.offsets))))


def _choice_probabilities(theta: np.ndarray, beta_e: np.ndarray, events: ChoiceEvents
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(Q,) probability of each member of each choice set, and (E,) the log normaliser of each choice."""
    utility = beta_e[events.member_event] * theta[events.member_slot]
    peak = np.maximum.reduceat(utility, events.starts[:-1])
    weight = np.exp(utility - peak[events.member_event])
    total = np.add.reduceat(weight, events.starts[:-1])
    return weight / total[events.member_event], peak + np.log(total)


class _Objective:
    """Negative log posterior of (θ, log β) and its gradient."""

    def __init__(self, events: ChoiceEvents, rater: np.ndarray, n_raters: int, n_slots: int, prior_scale: float,
                 reliability_shape: float) -> None:
        self.events, self.rater, self.n_raters, self.n_slots = events, rater, n_raters, n_slots
        self.precision = 1.0 / prior_scale ** 2
        self.shape = reliability_shape

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        events, rater, k = self.events, self.rater, self.n_slots
        theta, log_beta = x[:k], x[k:]
        beta = np.exp(log_beta)
        beta_e = beta[rater]
        prob, log_total = _choice_probabilities(theta, beta_e, events)
        log_lik = float(np.sum(beta_e * theta[events.winner] - log_total))
        log_prior = (-0.5 * self.precision * float(theta @ theta)
                     + float(np.sum((self.shape - 1.0) * log_beta - self.shape * beta)))
        grad_theta = (np.bincount(events.winner, weights=beta_e, minlength=k)
                      - np.bincount(events.member_slot, weights=prob * beta_e[events.member_event], minlength=k)
                      - self.precision * theta)
        mean_score = np.add.reduceat(prob * theta[events.member_slot], events.starts[:-1])
        grad_log_beta = (beta * np.bincount(rater, weights=theta[events.winner] - mean_score, minlength=self.n_raters)
                         + (self.shape - 1.0) - self.shape * beta)
        return -(log_lik + log_prior), -np.concatenate([grad_theta, grad_log_beta])


def fit_rater_rankings(records: Iterable[tuple[Hashable, Hashable, Any]], *, options: Iterable[str] | None = None,
                       previous: RaterPlackettLuce | None = None, **params: Any) -> RaterPlackettLuce:
    """Fit the rater-aware model on ``(rater, item, ranking)`` records (a ranking: a list of groups, best first; a
    group an option or a list of tied options) and return the fitted model: ``raters_`` (one row per rater:
    reliability, interval, rankings, choices, gain per choice, top agreement, flagged) and ``distributions()``
    (``{item: {option: plausibility}}``). ``previous``, an earlier fit, warm-starts this one where items, options
    and raters carry the same names (a refit after a few more submissions then takes a few iterations).
    ``params``: the hyper-parameters of :class:`RaterPlackettLuce`."""
    rankings = Rankings.from_records(records, options=None if options is None else list(options))
    return RaterPlackettLuce(**params).fit(rankings, start=previous)
