"""How an EM estimator is fitted: its starts, the screening of the starts, the learnt-prior refit, the results.

One EM fit reads downward: an estimator (:mod:`~stableval.aggregate.dawid_skene`, :mod:`~stableval.aggregate.stableval`)
says where EM starts and which Dirichlet priors it uses; :class:`EMAggregator` here runs every start (screened on a
subset of the responses when there are many), keeps the admissible one with the best objective and refits with a
learnt prior; each start runs :func:`~stableval.aggregate.em.run_em` on the fit's E-step (its kernel chosen once,
here), which steps plain EM or hands the iteration to an accelerator
(:mod:`~stableval.aggregate.em_acceleration`), whose E-steps run in :mod:`~stableval.aggregate.em_kernel` or numpy.

>>> import numpy as np, scipy.sparse as sp
>>> from stableval.aggregate import DawidSkene
>>> X = sp.csr_matrix(np.array([[1., 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]))  # 2 raters, K=2
>>> DawidSkene().fit_matrix(X, n_raters=2, n_levels=2).posteriors_.argmax(axis=1).tolist()
[0, 1, 0]
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Self, TypeAlias

import numpy as np

from stableval._options import Option
from stableval.aggregate._base import Aggregator, clamp_gold
from stableval.aggregate.em import EMResult, EStep, ResponseBlocks, run_em
from stableval.aggregate.em_acceleration import ACCELERATIONS, acceleration_choice
from stableval.aggregate.responses import ResponseMatrix

__all__ = [
    "ACCELERATION",
    "MAX_ITER",
    "SCREEN_ITER",
    "SCREEN_RESPONSES",
    "SCREEN_SUBSET_ABOVE",
    "TOL",
    "EMAggregator",
    "EMRunner",
    "EMStart",
    "chain",
    "diagonal_dominant",
    "em_fit_summary",
    "pooled_confusion",
    "screening_rows",
]


def em_fit_summary(model: Aggregator) -> dict[str, Any]:
    """How an EM fit went: iterations, convergence, the final log-likelihood and objective, and the starts when
    there were several (``n_iter_``, ``converged_``, ``log_likelihood_``, ``objective_``, ``starts_``, ``start_``)."""
    summary: dict[str, Any] = {"n_iter": int(model.n_iter_), "converged": bool(model.converged_),
                               "log_likelihood": float(model.log_likelihood_[-1]),
                               "objective": float(model.objective_[-1])}
    if len(model.starts_) > 1:
        summary.update(start=model.start_, starts=model.starts_)
    return summary


#: the settings every EM estimator shares, declared once (an estimator may word its own help with
#: ``dataclasses.replace``)
MAX_ITER = Option("max_iter", int, "Most EM iterations (E-steps).", ge=1)
TOL = Option("tol", float, "Stop when one EM step improves the log-likelihood by less than tol · max(1, "
                           "|log-likelihood|).", ge=0)
ACCELERATION = Option(
    "acceleration", str, "auto (Anderson acceleration from 250,000 stored judgments when at most 1% of the raters "
    "have fewer than 500 each, SQUAREM otherwise), anderson (Anderson acceleration with a monotone safeguard and "
    "restarts), squarem (SQUAREM with a monotone safeguard) — each the same fixed point in fewer E-steps — or none "
    "(plain EM).", choices=ACCELERATIONS)


def pooled_confusion(posteriors: np.ndarray, counts: np.ndarray, groups: np.ndarray | None = None,
                     n_groups: int = 1) -> np.ndarray:
    """(G, K, K) expected counts of (true level, given level) pooled over all raters, from the (N, K) posteriors
    and the (N, K) labels per response; one matrix per group of responses (``groups``, ``n_groups``)."""
    k = counts.shape[1]
    cells = (posteriors[:, :, None] * counts[:, None, :]).reshape(len(counts), k * k)
    if groups is None:
        return np.asarray(cells.sum(axis=0).reshape(1, k, k))
    return np.stack([np.bincount(groups, weights=cells[:, j], minlength=n_groups) for j in range(k * k)],
                    axis=1).reshape(n_groups, k, k)


def diagonal_dominant(pooled: np.ndarray, min_mass: float = 1.0) -> np.ndarray:
    """(G,) whether every true level holding at least ``min_mass`` responses' worth of posterior mass is, pooled over
    the raters, the label given strictly most often for it: raters agree with the truth more than with any other
    level.

    Dawid–Skene models are identified only up to relabelling the true levels, and EM can also collapse every
    response onto one level whose confusion rows then absorb the raters' disagreement (a higher likelihood on small
    data, no meaning). A solution that is not diagonally dominant is one of those, and multi-start fitting passes it
    over (:meth:`EMAggregator.fit_responses`).

    >>> diagonal_dominant(np.array([[[5.0, 1.0], [2.0, 6.0]], [[0.0, 0.0], [4.0, 3.0]], [[2.0, 2.0], [0, 1]]])).tolist()
    [True, False, False]
    """
    rows = pooled.sum(axis=2)
    diagonal = np.diagonal(pooled, axis1=1, axis2=2)
    k = pooled.shape[-1]
    others = np.where(np.eye(k, dtype=bool)[None], -np.inf, pooled).max(axis=2)
    checked = rows >= min_mass
    return np.asarray(((diagonal > others + 1e-9 * np.maximum(rows, 1.0)) | ~checked).all(axis=1))


#: E-steps each start gets before the starts are compared (:meth:`EMAggregator.fit_responses`)
SCREEN_ITER = 50
#: with more responses than this, the starts are compared on a seeded random subset of :data:`SCREEN_RESPONSES`
#: responses and only the winning start is fitted on all of them (at 1e7 judgments: 5 s instead of 17 s)
SCREEN_SUBSET_ABOVE = 500_000
SCREEN_RESPONSES = 200_000


def screening_rows(n_responses: int) -> np.ndarray | None:
    """The responses the EM starts are compared on (a seeded random subset, sorted), or None: all of them.

    >>> screening_rows(1000) is None, screening_rows(600_000).size
    (True, 200000)
    """
    if n_responses <= SCREEN_SUBSET_ABOVE:
        return None
    return np.sort(np.random.default_rng(0).choice(n_responses, SCREEN_RESPONSES, replace=False))


def chain(first: EMResult, then: EMResult) -> EMResult:
    """A run continued by another that started from its final posteriors (M-step first): the second's results,
    both histories (the second's first point repeats none of the first's), the E-steps of both."""
    return EMResult(posteriors=then.posteriors, priors=then.priors, confusion=then.confusion,
                    log_likelihood=np.concatenate([first.log_likelihood, then.log_likelihood]),
                    objective=np.concatenate([first.objective, then.objective]),
                    n_iter=first.n_iter + then.n_iter, converged=then.converged)


@dataclass(frozen=True)
class EMStart:
    """Where EM starts, from per-response distributions over levels (N, K).

    ``confusion is None``: an M-step comes first, on these distributions as posteriors (Dawid & Skene 1979).
    Otherwise the class priors start at the mean of ``distributions``, every rater's confusion matrix at
    ``confusion`` (K, K), and an E-step comes first (STABLEVAL, Algorithm 1). ``maximum_likelihood_first``: run
    maximum-likelihood EM (Dawid–Skene) from this start first, and the model's own EM from its solution.
    ``must_be_identified``: the start is not anchored to the votes (a random start), so its solution is only kept
    when it is strictly diagonally dominant (:func:`diagonal_dominant`).
    """

    distributions: np.ndarray
    confusion: np.ndarray | None = None
    maximum_likelihood_first: bool = False
    must_be_identified: bool = False


#: runs EM from a start with Dirichlet alphas for at most max_iter E-steps: ``run(start, alphas, max_iter)``
EMRunner: TypeAlias = "Callable[[EMStart, tuple[float, float | np.ndarray], int], EMResult]"


class EMAggregator(Aggregator):
    """A Dawid–Skene-type rater model fitted by (MAP) EM with :func:`stableval.aggregate.em.run_em`.

    A subclass says where EM starts (:meth:`em_starts`, or a single :meth:`em_start`) and which Dirichlet priors
    it uses (:meth:`dirichlet`); fitting (every start, keeping the highest objective), the batched EM of the
    simulator and the results are shared. Results after fitting: ``posteriors_`` (N, K), ``priors_`` (K,),
    ``confusion_`` (R, K, K) [rater, true, given], ``log_likelihood_`` and ``objective_`` (the accepted points of
    the winning start's run, non-decreasing), ``n_iter_`` (its E-steps), ``converged_``, ``start_`` (the winning
    start's name) and ``starts_`` (one record per start: ``start, objective, log_likelihood, n_iter, converged,
    admissible``). The winner is the admissible start (:func:`diagonal_dominant`) with the highest objective, or
    the highest objective if no start is admissible.
    """

    max_iter: int
    tol: float
    acceleration: str = "none"
    alpha_pi_: float | np.ndarray

    def em_start(self, counts: np.ndarray) -> EMStart:  # pragma: no cover - interface
        """The start of EM from the (N, K) label counts per response."""
        raise NotImplementedError

    def em_starts(self, counts: np.ndarray, groups: np.ndarray | None = None, *, rows: np.ndarray | None = None,
                  names: Collection[str] | None = None) -> list[tuple[str, EMStart]]:
        """Every start to try, named, from the (N, K) label counts; ``groups`` (N,) numbers independent problems
        fitted together (the simulator's batch), so random starts are drawn problem by problem exactly as for a
        table of its own. ``rows``: the starts on those responses only (equal to the full starts' rows; a subclass
        builds them there alone); ``names``: only the starts named. Default: the one :meth:`em_start`."""
        if names is not None and "start" not in names:
            return []
        return [("start", self.em_start(counts if rows is None else counts[rows]))]

    def dirichlet(self) -> tuple[float, float]:
        """(alpha_mu, alpha_pi): Dirichlet concentrations on the class priors and on each confusion row
        (1, 1 = maximum likelihood); for a learnt alpha_pi, the value of the first fit."""
        return 1.0, 1.0

    def learned_alpha_pi(self, rows: np.ndarray, groups: np.ndarray | None = None,
                         n_groups: int = 1) -> np.ndarray | None:
        """After a first fit: the (G,) alpha_pi to refit with, learnt from the expected confusion counts ``rows``
        (one rater's row for one true level each, summed per group), or ``None`` (the priors are fixed)."""
        return None

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned: its E-step is built once (the kernel chosen by the
        whole matrix, which the screened rows run on too), the accelerator chosen once (by the whole matrix's
        judgments per rater), then :meth:`fit_from_starts`."""
        n_raters, n_levels, gold = responses.n_raters, responses.n_levels, responses.gold
        blocks = responses.e_steps()
        acceleration = acceleration_choice(self.acceleration, lambda: blocks.rater_judgments(n_raters))
        screen: tuple[np.ndarray, EMRunner] | None = None
        rows = screening_rows(responses.n_responses)
        if rows is not None:
            subset: list[ResponseBlocks] = []  # the screened rows, cut out when the first start is screened

            def run_on_rows(start: EMStart, alphas: tuple[float, float | np.ndarray], max_iter: int) -> EMResult:
                assert rows is not None
                rows_gold = gold[rows] if gold is not None else None
                subset[:] = subset or [ResponseBlocks(responses.rows(rows), rows_gold, kernel=blocks.kernel)]
                return self._run(subset[0], start, n_raters, n_levels, rows_gold, alphas, max_iter, acceleration)

            screen = rows, run_on_rows
        return self.fit_from_starts(
            responses.vote_counts(), n_raters, n_levels,
            run=lambda start, alphas, max_iter: self._run(blocks, start, n_raters, n_levels, gold, alphas, max_iter,
                                                          acceleration),
            expected=responses.expected_rows, screen=screen)

    def fit_from_starts(self, counts: np.ndarray, n_raters: int, n_levels: int, *, run: EMRunner,
                        expected: Callable[[np.ndarray], np.ndarray],
                        screen: tuple[np.ndarray, EMRunner] | None = None) -> Self:
        """The fit behind :meth:`fit_responses`, for any E-step: every start (:meth:`em_starts` of the vote
        ``counts``) run by ``run(start, alphas, max_iter)``, then, when :meth:`learned_alpha_pi` learns a prior from
        ``expected(posteriors)`` (the expected confusion rows), the refit with it. ``screen = (rows,
        run_on_rows)``: compare the starts on those responses only, then fit the winner on all."""
        alphas = self.dirichlet()
        self._fit_starts(counts, run, alphas, screen)
        learns = self.learned_alpha_pi(np.zeros((0, n_levels))) is not None  # else the counts pass is not needed
        learned = self.learned_alpha_pi(expected(self.posteriors_)) if learns else None
        if learned is None:
            self.alpha_pi_ = alphas[1]
        elif np.ndim(learned[0]) == 0:  # one concentration for every confusion cell
            self.alpha_pi_ = float(learned[0])
            if self.alpha_pi_ != alphas[1]:
                self._fit_starts(counts, run, (alphas[0], self.alpha_pi_), screen)
        else:  # a (K, K) concentration per cell, the same for every rater (a pooled prior)
            self.alpha_pi_ = np.asarray(learned[0], dtype=float)
            every_rater = np.broadcast_to(self.alpha_pi_, (n_raters, n_levels, n_levels))
            self._fit_starts(counts, run, (alphas[0], every_rater), screen)
        return self

    def _fit_starts(self, counts: np.ndarray, run: EMRunner, alphas: tuple[float, float | np.ndarray],
                    subset: tuple[np.ndarray, EMRunner] | None = None) -> None:
        """Fit from every start with these Dirichlet alphas and keep the admissible one with the best objective.

        With several starts each runs for at most :data:`SCREEN_ITER` E-steps; the leader then goes on to
        convergence (``max_iter - SCREEN_ITER`` more E-steps at most), so trying five starts costs far less than
        five fits. With ``subset = (rows, run_on_rows)`` the starts are screened on those responses only and the
        winning start is then fitted on all responses from scratch. ``starts_`` records each start as screened.
        """
        starts = self.em_starts(counts, rows=subset[0]) if subset is not None else self.em_starts(counts)
        if subset is not None and len(starts) == 1:  # nothing to screen: the one start on every response
            starts = self.em_starts(counts)
        screen = min(self.max_iter, SCREEN_ITER) if len(starts) > 1 else self.max_iter
        rows, screen_run = subset if subset is not None and len(starts) > 1 else (None, run)
        best: tuple[bool, float] | None = None
        winner: EMResult | None = None
        chosen: EMStart | None = None
        records: list[dict[str, Any]] = []
        for name, start in starts:
            result = screen_run(start, alphas, screen)  # with rows, the start is built on those rows only
            admissible = not start.must_be_identified or bool(
                diagonal_dominant(pooled_confusion(result.posteriors.T, counts if rows is None else counts[rows]))[0])
            records.append({"start": name, "objective": float(result.objective[-1]),
                            "log_likelihood": float(result.log_likelihood[-1]), "n_iter": int(result.n_iter),
                            "converged": bool(result.converged), "admissible": admissible,
                            "screened_responses": int(len(counts) if rows is None else len(rows))})
            rank = (admissible, float(result.objective[-1]))
            if best is None or rank > best:
                best, winner, chosen, self.start_ = rank, result, start, name
        assert winner is not None and chosen is not None
        if rows is not None:  # the winning start, now built on every response
            winner = run(self.em_starts(counts, names=(self.start_,))[0][1], alphas, self.max_iter)
        elif not winner.converged and screen < self.max_iter:
            more = run(EMStart(winner.posteriors.T), alphas, self.max_iter - screen)
            winner = chain(winner, more)
        self._store(winner)
        self.starts_ = records

    def _run(self, blocks: EStep, start: EMStart, n_raters: int, n_levels: int, gold: np.ndarray | None,
             alphas: tuple[float, float | np.ndarray], max_iter: int, acceleration: str | None = None) -> EMResult:
        """EM on the E-step ``blocks`` from one start (through maximum likelihood first if the start says so),
        ``max_iter`` E-steps at most per stage; ``gold`` clamps the start's known responses (the E-step clamps its
        own); ``acceleration`` (None: the estimator's) as :func:`~stableval.aggregate.em.run_em` takes it."""
        alpha_mu, alpha_pi = alphas
        common: dict[str, Any] = dict(n_raters=n_raters, n_levels=n_levels, max_iter=max_iter, tol=self.tol,
                                      acceleration=acceleration or self.acceleration)
        if start.confusion is not None:
            distributions = start.distributions
            priors = distributions.mean(axis=0) if distributions.shape[0] else np.full(n_levels, 1.0 / n_levels)
            confusion = np.broadcast_to(start.confusion, (n_raters, n_levels, n_levels)).copy()
            return run_em(blocks, init_params=(priors, confusion), alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        shares = np.array(np.asarray(start.distributions).T, dtype=float, order="C")  # (K, N): one copy, not two
        clamp_gold(shares.T, gold)
        if not start.maximum_likelihood_first:
            return run_em(blocks, init_posteriors=shares, alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        ml = run_em(blocks, init_posteriors=shares, **common)
        result = run_em(blocks, init_posteriors=ml.posteriors, alpha_mu=alpha_mu, alpha_pi=alpha_pi, **common)
        return EMResult(posteriors=result.posteriors, priors=result.priors, confusion=result.confusion,
                        log_likelihood=result.log_likelihood, objective=result.objective,
                        n_iter=ml.n_iter + result.n_iter, converged=result.converged)

    def _store(self, result: EMResult) -> None:
        self.posteriors_ = result.posteriors.T  # (N, K) view of class-major storage
        self.priors_ = result.priors
        self.confusion_ = result.confusion
        self.log_likelihood_ = result.log_likelihood
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged

    def fit_summary(self) -> dict[str, Any]:
        summary = em_fit_summary(self)
        if self.learned_alpha_pi(np.zeros((0, 2))) is not None:
            summary["alpha_pi"] = (float(self.alpha_pi_) if np.ndim(self.alpha_pi_) == 0
                                   else np.round(self.alpha_pi_, 6).tolist())
        return summary
