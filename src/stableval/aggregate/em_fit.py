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
import scipy.sparse as sp

from stableval.aggregate._base import Aggregator, clamp_gold
from stableval.aggregate.em import EMResult, EStep, ResponseBlocks, run_em
from stableval.aggregate.em_acceleration import acceleration_choice
from stableval.aggregate.parameters import ACCELERATION, MAX_ITER, TOL
from stableval.aggregate.responses import ResponseMatrix

__all__ = [
    "ACCELERATION",
    "MAX_ITER",
    "PRIOR_ROUNDS",
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
    "sparse_raters",
    "without_unused_levels",
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


def sparse_raters(per_rater: np.ndarray, n_levels: int) -> bool:
    """Whether the median rater (of those with judgments; ``per_rater`` (R,) judgments each) gave no more judgments
    than there are levels: at most one judgment per level, too few to show any confusion between two levels, let
    alone to identify a K × K confusion matrix.

    >>> sparse_raters(np.array([1, 2, 20, 0]), 2), sparse_raters(np.array([3, 20]), 2)
    (True, False)
    """
    used = np.asarray(per_rater)[np.asarray(per_rater) > 0]
    return bool(used.size) and float(np.median(used)) <= n_levels


def without_unused_levels(responses: ResponseMatrix) -> tuple[ResponseMatrix, np.ndarray] | None:
    """(the in-memory response matrix on the levels some rater gave or some gold names, which levels those are),
    or None when every level is used (or the matrix is partitioned: it is fitted as it is).

    A level nobody used carries no evidence: only a prior or a random start could put mass on it (integer labels
    1..K read as codes leave a level 0 nobody gave), so the EM models are fitted without it.

    >>> import scipy.sparse as sp
    >>> from stableval.aggregate.responses import WholeMatrix
    >>> X = sp.csr_matrix(np.array([[0., 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]]))  # 2 raters, K=3, level 0 unused
    >>> reduced, used = without_unused_levels(WholeMatrix(X, 2, 3))
    >>> reduced.n_levels, used.tolist(), reduced.X.toarray().tolist()
    (2, [False, True, True], [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    """
    from stableval.aggregate.responses import WholeMatrix

    if not isinstance(responses, WholeMatrix):
        return None
    k = responses.n_levels
    used = np.asarray(responses.X.sum(axis=0)).reshape(responses.n_raters, k).sum(axis=0) > 0
    gold = responses.gold
    if gold is not None:
        used[np.unique(gold[gold >= 0])] = True
    if used.all() or not used.any():
        return None
    columns = (np.arange(responses.n_raters)[:, None] * k + np.flatnonzero(used)[None, :]).ravel()
    code = np.cumsum(used) - 1
    narrowed = None if gold is None else np.where(gold >= 0, code[np.maximum(gold, 0)], -1)
    return WholeMatrix(sp.csr_matrix(responses.X[:, columns]), responses.n_raters, int(used.sum()), narrowed), used


#: rounds of a learnt prior: learnt, fitted (on the screened responses when there are many) and learnt again from
#: that fit, then fitted on every response (:meth:`EMAggregator.fit_from_starts`; docs/accuracy.md)
PRIOR_ROUNDS = 2

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
    priors_: np.ndarray
    confusion_: np.ndarray
    #: where a learnt prior was learnt from: "flat fit" or "votes" (:meth:`fit_from_starts`); "" for a fixed prior
    prior_from_: str = ""
    #: rounds of a learnt prior (:data:`PRIOR_ROUNDS`)
    prior_rounds: int = PRIOR_ROUNDS

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

    def prior_from_votes(self, per_rater: np.ndarray, n_levels: int) -> bool:
        """Whether a learnt prior is learnt from the vote shares rather than from the flat fit, given the (R,)
        judgments per rater: when the raters are sparse (:func:`sparse_raters`)."""
        return sparse_raters(per_rater, n_levels)

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned: its E-step is built once (the kernel chosen by the
        whole matrix, which the screened rows run on too), the accelerator chosen once (by the whole matrix's
        judgments per rater), then :meth:`fit_from_starts`. A level that no rater gave (and no gold names) gets
        no mass: an in-memory matrix is fitted on the levels used (:func:`without_unused_levels`)."""
        reduced = without_unused_levels(responses)
        if reduced is not None:
            if reduced[0].n_levels == 1:  # one level given: nothing to infer
                self._store_one_level(reduced[0])
            else:
                self.fit_responses(reduced[0])
            self._widen(reduced[1], responses.n_levels)
            return self
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

        def expected(posteriors: np.ndarray) -> np.ndarray:  # on every response, or on the screened ones
            if rows is not None and len(posteriors) == len(rows):
                from stableval.aggregate.em import expected_rows

                return expected_rows(responses.rows(rows), posteriors, n_raters, n_levels)
            return responses.expected_rows(posteriors)

        return self.fit_from_starts(
            responses.vote_counts(), n_raters, n_levels,
            run=lambda start, alphas, max_iter: self._run(blocks, start, n_raters, n_levels, gold, alphas, max_iter,
                                                          acceleration),
            expected=expected, screen=screen, per_rater=lambda: blocks.rater_judgments(n_raters))

    def fit_from_starts(self, counts: np.ndarray, n_raters: int, n_levels: int, *, run: EMRunner,
                        expected: Callable[[np.ndarray], np.ndarray],
                        screen: tuple[np.ndarray, EMRunner] | None = None,
                        per_rater: Callable[[], np.ndarray] | None = None) -> Self:
        """The fit behind :meth:`fit_responses`, for any E-step: every start (:meth:`em_starts` of the vote
        ``counts``) run by ``run(start, alphas, max_iter)``. When :meth:`learned_alpha_pi` learns a prior, it learns
        it from expected confusion rows (``expected(posteriors)``), and the fit with that prior is the one kept
        (``prior_from_`` says which rows):

        * ``"flat fit"``: the flat fit (on the screened responses when there are many: the prior is the crowd's, a
          few hundred thousand responses pin it down), run to convergence so that the prior does not depend on
          the path EM took;
        * ``"votes"``: the vote shares, when the median rater gave no more judgments than there are levels
          (:func:`sparse_raters`): then no rater's confusion matrix is identified, the flat fit is not either (its
          best optima move away from the consensus), and the consensus is the only sound source of the prior.

        ``screen = (rows, run_on_rows)``: compare the starts on those responses only, then fit the winner on all;
        ``per_rater()``: the (R,) judgments per rater (None: summed from the vote shares' expected rows)."""
        alphas = self.dirichlet()
        learns = self.learned_alpha_pi(np.zeros((0, n_levels))) is not None  # else the counts pass is not needed
        if not learns:
            self._fit_starts(counts, run, alphas, screen)
            self.alpha_pi_ = alphas[1]
            return self
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
        votes = None if per_rater is not None else expected(shares)
        judgments = (per_rater() if per_rater is not None else
                     np.asarray(votes).reshape(n_raters, n_levels * n_levels).sum(axis=1))
        if self.prior_from_votes(judgments, n_levels):
            self.prior_from_, rows = "votes", expected(shares) if votes is None else votes
        else:
            flat = self._fit_starts(counts, run, alphas, screen, finish=False)
            self.prior_from_, rows = "flat fit", expected(flat.posteriors.T)
        for round_ in range(self.prior_rounds):
            learned = self.learned_alpha_pi(rows)
            if learned is None:
                self.alpha_pi_ = alphas[1]
                self._fit_starts(counts, run, alphas, screen)
                return self
            if np.ndim(learned[0]) == 0:  # one concentration for every confusion cell
                self.alpha_pi_ = float(learned[0])
                prior: float | np.ndarray = self.alpha_pi_
            else:  # a (K, K) concentration per cell, the same for every rater (a pooled prior)
                self.alpha_pi_ = np.asarray(learned[0], dtype=float)
                prior = np.broadcast_to(self.alpha_pi_, (n_raters, n_levels, n_levels))
            last = round_ == self.prior_rounds - 1
            fitted = self._fit_starts(counts, run, (alphas[0], prior), screen, finish=last)
            if not last:  # learn the prior again from the screened fit with it
                rows = expected(fitted.posteriors.T)
        return self

    def _fit_starts(self, counts: np.ndarray, run: EMRunner, alphas: tuple[float, float | np.ndarray],
                    subset: tuple[np.ndarray, EMRunner] | None = None, *, finish: bool = True) -> EMResult:
        """Fit from every start with these Dirichlet alphas and keep the admissible one with the best objective.

        With several starts each runs for at most :data:`SCREEN_ITER` E-steps; the leader then goes on to
        convergence (``max_iter - SCREEN_ITER`` more E-steps at most), so trying five starts costs far less than
        five fits. With ``subset = (rows, run_on_rows)`` the starts are screened on those responses only and the
        winning start is then fitted on all responses from scratch. ``starts_`` records each start as screened.
        ``finish=False``: the leader is run to convergence where it was screened (on the screened responses only,
        when there is a subset) and returned, nothing stored. Returns the result kept.
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
        if not finish:  # the leader to convergence where it was screened (the subset, or every response)
            if not winner.converged and screen < self.max_iter:
                winner = chain(winner, screen_run(EMStart(winner.posteriors.T), alphas, self.max_iter - screen))
            return winner
        if rows is not None:  # the winning start, now built on every response
            winner = run(self.em_starts(counts, names=(self.start_,))[0][1], alphas, self.max_iter)
        elif not winner.converged and screen < self.max_iter:
            more = run(EMStart(winner.posteriors.T), alphas, self.max_iter - screen)
            winner = chain(winner, more)
        self._store(winner)
        self.starts_ = records
        return winner

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

    def _store_one_level(self, responses: ResponseMatrix) -> None:
        """The fit when the raters gave one level only: every response is that level, every rater gives it."""
        n, r = responses.n_responses, responses.n_raters
        self._store(EMResult(posteriors=np.ones((1, n)), priors=np.ones(1), confusion=np.ones((r, 1, 1)),
                             log_likelihood=np.zeros(1), objective=np.zeros(1), n_iter=0, converged=True))
        self.start_, self.starts_ = "", []
        self.alpha_pi_ = self.dirichlet()[1]

    def _widen(self, used: np.ndarray, n_levels: int) -> None:
        """Put a fit on the ``used`` levels back on all ``n_levels``: the unused levels get no posterior and no
        prior mass, no rater gives them, and their confusion rows (a truth never seen) are uniform."""
        k = n_levels
        posteriors = np.zeros((self.posteriors_.shape[0], k))
        posteriors[:, used] = self.posteriors_
        priors = np.zeros(k)
        priors[used] = self.priors_
        confusion = np.full((self.confusion_.shape[0], k, k), 1.0 / k)
        confusion[:, used] = 0.0
        confusion[np.ix_(np.arange(confusion.shape[0]), used, used)] = self.confusion_
        self.posteriors_, self.priors_, self.confusion_ = posteriors, priors, confusion
        if np.ndim(self.alpha_pi_) == 2:
            alpha = np.ones((k, k))
            alpha[np.ix_(used, used)] = self.alpha_pi_
            self.alpha_pi_ = alpha

    def _store(self, result: EMResult) -> None:
        self.posteriors_ = result.posteriors.T  # (N, K) view of class-major storage
        self.priors_ = result.priors
        self.confusion_ = result.confusion
        self.log_likelihood_ = result.log_likelihood
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged

    def fit_summary(self) -> dict[str, Any]:
        """:func:`em_fit_summary`, and for a model with a confusion prior its concentration ``alpha_pi`` (the
        learnt (K, K) matrix of a pooled prior) and ``prior_strength``: the prior's weight in pseudo-judgments per
        true level (0 = flat)."""
        summary = em_fit_summary(self)
        if "alpha_pi" in self.parameter_names():
            alpha = np.asarray(self.alpha_pi_, dtype=float)
            summary["alpha_pi"] = float(alpha) if alpha.ndim == 0 else np.round(alpha, 6).tolist()
            k = int(self.posteriors_.shape[1])
            strength = (alpha - 1.0).sum(axis=1) if alpha.ndim == 2 else np.full(k, k * (float(alpha) - 1.0))
            summary["prior_strength"] = np.round(strength, 6).tolist()
            if getattr(self, "prior_from_", None):
                summary["prior_from"] = self.prior_from_
        return summary
