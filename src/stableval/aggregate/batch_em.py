"""Many small aggregation problems fitted at once, for the simulator's stress tests.

A stress test fits thousands of tiny tables (one per trial and rater subsample). Fitting them one by one spends
most of the time in Python overhead, so the problems are stacked block-diagonally into one sparse matrix
(responses of all problems × rater·K + label, with a rater offset per problem) and each method is fitted on all
of them at once, the way its registry entry says (:attr:`stableval.aggregate.Method.batch`):

* ``"em"`` — the batched EM below: one sparse product per E-step, one per M-step, per-problem sums with
  ``np.bincount``. It runs exactly the algorithm of the single-table estimator with plain EM steps
  (``acceleration="none"``): its starts (:meth:`~stableval.aggregate.EMAggregator.em_starts`, the best objective
  kept per problem), its Dirichlet priors, the kernel's M-step
  (:func:`stableval.aggregate.em.m_step`) and log prior (:func:`~stableval.aggregate.em.log_prior_terms`), and the
  same per-problem stopping rule (objective change ``<= tol * max(1, |objective|)``). A problem that has converged
  keeps its parameters frozen while the others go on, so its result does not depend on which other problems share
  the batch. The E-step runs in double precision on one thread (the exponential in single precision, as in
  :mod:`stableval.aggregate.em`).
* ``"stacked"`` — a per-response method (majority vote) fitted once on the whole block-diagonal matrix.
* ``"each"`` — any other method, fitted problem by problem.

>>> import numpy as np
>>> from stableval.aggregate import DawidSkene, MajorityVote
>>> batch = ProblemBatch.from_problems(
...     [(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 1, 0, 0]), 2)], n_raters=2, n_levels=2)
>>> batch_fit(batch, MajorityVote()).distribution.tolist()
[[0.0, 1.0], [1.0, 0.0]]
>>> fit = batch_em(batch, DawidSkene())
>>> fit.posteriors.argmax(axis=1).tolist(), fit.converged.tolist()
([1, 0], [True])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from stableval.aggregate._base import Aggregator, clone
from stableval.aggregate.em import log_prior_terms, m_step, vote_counts_of_matrix
from stableval.aggregate.em_fit import SCREEN_ITER, EMAggregator, EMStart, diagonal_dominant, pooled_confusion
from stableval.aggregate.method import Method
from stableval.aggregate.registry import method_of

#: one problem: (response code per judgment, rater code, label code, number of responses)
Problem = tuple[np.ndarray, np.ndarray, np.ndarray, int]


@dataclass(frozen=True, eq=False)
class ProblemBatch:
    """Several annotation problems stacked block-diagonally.

    Attributes:
        X: sparse (N_total, P·R·K) counts; problem p's responses are rows ``starts[p]:starts[p+1]`` and its
            raters are ``p·R .. p·R + R - 1``.
        starts: (P + 1,) first response row of each problem (and the total at the end).
        response_problem: (N_total,) problem of each response row.
        rater_used: (P·R,) whether the rater has at least one judgment in its problem (only those count in the
            Dirichlet log prior, as in a table fitted on its own).
        n_raters: raters per problem (R, the pool size); ``n_levels``: K.
    """

    X: sp.csr_matrix
    starts: np.ndarray
    response_problem: np.ndarray
    rater_used: np.ndarray
    n_raters: int
    n_levels: int

    @property
    def n_problems(self) -> int:
        return int(self.starts.size - 1)

    @classmethod
    def from_problems(cls, problems: Sequence[Problem], n_raters: int, n_levels: int) -> ProblemBatch:
        """Stack problems; each gives judgments (response, rater, label) with responses coded 0..n-1, every
        response having at least one judgment."""
        sizes = np.array([p[3] for p in problems], dtype=np.int64)
        if (sizes < 1).any():
            raise ValueError("every problem needs at least one response")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        rows = np.concatenate([np.asarray(p[0], dtype=np.int64) + starts[i] for i, p in enumerate(problems)])
        raters = np.concatenate([np.asarray(p[1], dtype=np.int64) + i * n_raters for i, p in enumerate(problems)])
        labels = np.concatenate([np.asarray(p[2], dtype=np.int64) for p in problems])
        n_total = int(starts[-1])
        X = sp.csr_matrix((np.ones(rows.size), (rows, raters * n_levels + labels)),
                          shape=(n_total, len(problems) * n_raters * n_levels))
        X.sum_duplicates()
        if np.bincount(rows, minlength=n_total).min(initial=1) < 1:
            raise ValueError("every response needs at least one judgment")
        used = np.zeros(len(problems) * n_raters, dtype=bool)
        used[raters] = True
        return cls(X=X, starts=starts, response_problem=np.repeat(np.arange(len(problems)), sizes),
                   rater_used=used, n_raters=n_raters, n_levels=n_levels)

    def vote_counts(self) -> np.ndarray:
        """(N_total, K) number of judgments of each level per response."""
        return vote_counts_of_matrix(self.X, self.n_levels)

    def problem_matrix(self, problem: int) -> sp.csr_matrix:
        """Problem ``problem``'s own response matrix (its responses × its R·K columns)."""
        width = self.n_raters * self.n_levels
        rows = self.X[int(self.starts[problem]):int(self.starts[problem + 1])]
        return sp.csr_matrix(rows[:, problem * width:(problem + 1) * width])

    def problem_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-problem sums along the last axis (responses) of (N,) or (K, N) values."""
        return _problem_sums(self.response_problem, values, self.n_problems)


def _problem_sums(problem: np.ndarray, values: np.ndarray, n_problems: int) -> np.ndarray:
    """Segment sums by ``np.bincount``: one sequential pass in index order, so a problem's sum has the same
    rounding wherever its rows sit in memory (SIMD reductions can depend on the alignment of the start)."""
    if values.ndim == 1:
        return np.bincount(problem, weights=values, minlength=n_problems)
    return np.stack([np.bincount(problem, weights=row, minlength=n_problems) for row in values])


@dataclass(frozen=True)
class BatchEMResult:
    """Per-response posteriors (N_total, K) and, per problem, the fit's convergence."""

    posteriors: np.ndarray
    objective: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


class _View:
    """The rows and raters of a subset of the problems, re-indexed into a smaller block-diagonal matrix.

    Rows keep their order and every row keeps the order of its entries, so each problem's sums run in exactly
    the same order as in the full batch: its results do not depend on which problems share the view.
    """

    def __init__(self, batch: ProblemBatch, problems: np.ndarray) -> None:
        k, n_raters = batch.n_levels, batch.n_raters
        self.problems = problems
        sizes = np.diff(batch.starts)[problems]
        self.starts = np.concatenate([[0], np.cumsum(sizes)])
        self.rows = np.concatenate([np.arange(batch.starts[p], batch.starts[p + 1]) for p in problems])
        self.response_problem = np.repeat(np.arange(problems.size), sizes)
        self.raters = (problems[:, None] * n_raters + np.arange(n_raters)[None, :]).ravel()
        self.rater_problem = np.repeat(np.arange(problems.size), n_raters)
        self.rater_used = batch.rater_used[self.raters]
        if problems.size == batch.n_problems:
            X = batch.X
        else:
            column_map = np.full(batch.X.shape[1], -1, dtype=np.int64)
            kept_columns = (self.raters[:, None] * k + np.arange(k)[None, :]).ravel()
            column_map[kept_columns] = np.arange(kept_columns.size)
            rows = batch.X[self.rows]
            X = sp.csr_matrix((rows.data, column_map[rows.indices], rows.indptr),
                              shape=(self.rows.size, kept_columns.size))
        self.XT = X.T.tocsr()
        # the E-step matrix: each row also holds a 1 in its problem's prior column (after the rater columns)
        n_rows, n_columns = X.shape
        indices = np.insert(X.indices, X.indptr[1:], n_columns + self.response_problem)
        indptr = X.indptr + np.arange(n_rows + 1)
        data = np.insert(X.data, X.indptr[1:], 1.0)
        self.X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_columns + problems.size))

    def problem_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-problem sums along the last axis (responses) of (N,) or (K, N) values."""
        return _problem_sums(self.response_problem, values, self.problems.size)


def _m_step_view(mass: np.ndarray, counts: np.ndarray, k: int, alpha_mu: float | np.ndarray,
                 alpha_pi: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Priors (P, K) and confusion (P·R, K, K) [rater, true, given] from the view's expected counts
    ``XT @ gamma.T`` (rows rater·K + given level, columns true level): the kernel's M-step per problem."""
    return m_step(mass, counts.reshape(-1, k, k).transpose(0, 2, 1), alpha_mu, alpha_pi)


def _log_prior(view: _View, priors: np.ndarray, confusion: np.ndarray, alpha_mu: float | np.ndarray,
               alpha_pi: float | np.ndarray) -> np.ndarray:
    """Log density (up to a constant) of the Dirichlet priors per problem; raters without judgments excluded."""
    prior_term, rater_term = log_prior_terms(priors, confusion, alpha_mu, alpha_pi)
    return prior_term + np.bincount(view.rater_problem, weights=rater_term * view.rater_used,
                                    minlength=view.problems.size)


def batch_em(batch: ProblemBatch, estimator: EMAggregator) -> BatchEMResult:
    """Fit the EM rater model ``estimator`` (Dawid–Skene, STABLEVAL, ...) on every problem of the batch, from every
    start the estimator names (:meth:`~stableval.aggregate.EMAggregator.em_starts`), keeping per problem the start
    with the highest objective — as the estimator does on one table.

    The batch runs plain EM steps whatever the estimator's ``acceleration``: SQUAREM reaches the same fixed points
    (to the tolerance), and a table fitted with ``acceleration="none"`` gets exactly the batch's result.
    """
    counts = batch.vote_counts()
    starts = estimator.em_starts(counts, batch.response_problem)
    screen = min(estimator.max_iter, SCREEN_ITER) if len(starts) > 1 else estimator.max_iter
    best: BatchEMResult | None = None
    for _, start in starts:
        if start.maximum_likelihood_first:
            first = batch_em_run(batch, estimator, EMStart(start.distributions), maximum_likelihood=True,
                                 max_iter=screen)
            fit = batch_em_run(batch, estimator, EMStart(first.posteriors), max_iter=screen)
            fit = dataclasses.replace(fit, n_iter=fit.n_iter + first.n_iter)
        else:
            fit = batch_em_run(batch, estimator, start, max_iter=screen)
        eligible = np.ones(batch.n_problems, dtype=bool)
        if start.must_be_identified:
            eligible = diagonal_dominant(pooled_confusion(fit.posteriors, counts, batch.response_problem,
                                                          batch.n_problems))
        best = fit if best is None else _better(best, fit, eligible, batch)
    assert best is not None
    if screen < estimator.max_iter and not best.converged.all():  # the leaders go on, as on one table
        more = batch_em_run(batch, estimator, EMStart(best.posteriors), max_iter=estimator.max_iter - screen)
        going = ~best.converged
        rows = going[batch.response_problem]
        best = BatchEMResult(posteriors=np.where(rows[:, None], more.posteriors, best.posteriors),
                             objective=np.where(going, more.objective, best.objective),
                             n_iter=np.where(going, best.n_iter + more.n_iter, best.n_iter),
                             converged=np.where(going, more.converged, best.converged))
    return _learned_priors(batch, estimator, best, counts)


def _learned_priors(batch: ProblemBatch, estimator: EMAggregator, fit: BatchEMResult,
                    counts: np.ndarray) -> BatchEMResult:
    """Problems whose estimator learns a stronger confusion prior from its first fit (``alpha_pi="auto"`` or
    ``"pooled"``) are refitted one by one, exactly as on a table of their own (its raters only: a rater without
    judgments would add its prior's density to the objective) with plain EM steps (the batch's steps:
    ``acceleration="none"``)."""
    k, r = batch.n_levels, batch.n_raters
    rows = np.asarray(batch.X.T @ fit.posteriors).reshape(-1, k, k).transpose(0, 2, 1).reshape(-1, k)
    learned = estimator.learned_alpha_pi(rows, np.repeat(np.arange(batch.n_problems), r * k), batch.n_problems)
    if learned is None:
        return fit
    refit = np.flatnonzero(learned.reshape(len(learned), -1).max(axis=1) > estimator.dirichlet()[1])
    if not refit.size:
        return fit
    posteriors, objective = fit.posteriors.copy(), fit.objective.copy()
    n_iter, converged = fit.n_iter.copy(), fit.converged.copy()
    for p in refit:
        model = clone(estimator)
        if "acceleration" in model.parameter_names():
            model.set_params(acceleration="none")
        X = batch.problem_matrix(int(p))  # on the problem's own raters, as its table has them
        used = np.flatnonzero(np.asarray(X.sum(axis=0)).reshape(r, k).sum(axis=1) > 0)
        model.fit_matrix(sp.csr_matrix(X[:, (used[:, None] * k + np.arange(k)).ravel()]), len(used), k)
        posteriors[batch.starts[p]:batch.starts[p + 1]] = model.posteriors_
        objective[p], n_iter[p], converged[p] = model.objective_[-1], model.n_iter_, model.converged_
    return BatchEMResult(posteriors=posteriors, objective=objective, n_iter=n_iter, converged=converged)


def _better(current: BatchEMResult, candidate: BatchEMResult, eligible: np.ndarray,
            batch: ProblemBatch) -> BatchEMResult:
    """Per problem, the candidate where it is eligible and has the higher objective (the earlier start on ties)."""
    wins = eligible & (candidate.objective > current.objective)
    rows = wins[batch.response_problem]
    return BatchEMResult(posteriors=np.where(rows[:, None], candidate.posteriors, current.posteriors),
                         objective=np.where(wins, candidate.objective, current.objective),
                         n_iter=np.where(wins, candidate.n_iter, current.n_iter),
                         converged=np.where(wins, candidate.converged, current.converged))


def batch_em_run(batch: ProblemBatch, estimator: EMAggregator, start: EMStart, *,
                 maximum_likelihood: bool = False, max_iter: int | None = None) -> BatchEMResult:
    """Plain EM from one start on every problem (``maximum_likelihood``: with flat priors, as Dawid–Skene).

    Problems that have converged drop out of the computation (the matrix is re-cut to the running problems
    whenever a third of them have finished), so a few slow problems do not slow the whole batch down.
    """
    k, n_problems = batch.n_levels, batch.n_problems
    view = _View(batch, np.arange(n_problems))
    alpha_mu, alpha_pi = (1.0, 1.0) if maximum_likelihood else estimator.dirichlet()
    if start.confusion is None:  # an M-step first, on the start's distributions as posteriors
        shares = np.asarray(start.distributions, dtype=float)
        priors, confusion = _m_step_view(view.problem_sums(shares.T).T, np.asarray(view.XT @ shares), k,
                                         alpha_mu, alpha_pi)
    else:  # priors = the mean start distribution of each problem, every rater at the start's confusion matrix
        priors = batch.problem_sums(np.asarray(start.distributions).T).T / np.diff(batch.starts)[:, None]
        confusion = np.broadcast_to(start.confusion, (n_problems * batch.n_raters, k, k)).copy()

    posteriors = np.empty((batch.X.shape[0], k))
    n_iter = np.zeros(n_problems, dtype=np.int64)
    converged = np.zeros(n_problems, dtype=bool)
    final_objective = np.full(n_problems, np.nan)
    previous = np.full(n_problems, np.nan)
    # parameters of the problems in the current view, in the view's order; posteriors are class-major (K, N)
    v_priors, v_confusion = priors, confusion
    max_iter = max(1, estimator.max_iter if max_iter is None else max_iter)
    for iteration in range(max_iter):
        active = ~converged[view.problems]
        # E-step on the view (problems that converged since the last re-cut reproduce their posteriors exactly);
        # column block P·R·K + p of the view's matrix adds problem p's log class priors
        table = np.concatenate([np.log(np.maximum(v_confusion, 1e-300)).transpose(0, 2, 1).reshape(-1, k),
                                np.log(np.maximum(v_priors, 1e-300))])
        logits = np.ascontiguousarray(np.asarray(view.X @ table).T)  # class-major (K, N)
        top = logits.max(axis=0)
        logits -= top
        # single-precision exp as in stableval.aggregate.em (posteriors to ~1e-7); sums in double precision
        weights = np.exp(logits.astype(np.float32))
        norm = weights.sum(axis=0, dtype=np.float64)
        gamma = np.divide(weights, norm, dtype=np.float64)
        objective = view.problem_sums(top + np.log(norm)) + _log_prior(view, v_priors, v_confusion, alpha_mu,
                                                                        alpha_pi)
        ids = view.problems
        n_iter[ids[active]] += 1
        last = previous[ids]
        done = active & np.isfinite(last) & (
            np.abs(objective - last) <= estimator.tol * np.maximum(1.0, np.abs(objective)))
        final_objective[ids[active]] = objective[active]
        previous[ids[active]] = objective[active]
        if done.any():  # keep the posteriors of the problems that just converged
            rows = np.flatnonzero(done[view.response_problem])
            posteriors[view.rows[rows]] = gamma[:, rows].T
            converged[ids[done]] = True
            active &= ~done
        if not active.any() or iteration == max_iter - 1:
            break  # (the view and gamma stay in step for the posteriors of problems stopped by max_iter)
        # M-step: only the running problems' parameters change
        counts = np.asarray(view.XT @ np.ascontiguousarray(gamma.T))
        new_priors, new_confusion = _m_step_view(view.problem_sums(gamma).T, counts, k, alpha_mu, alpha_pi)
        v_priors = np.where(active[:, None], new_priors, v_priors)
        v_confusion = np.where(active[view.rater_problem][:, None, None], new_confusion, v_confusion)
        if active.sum() * 3 <= active.size * 2:  # a third has finished: re-cut the matrix to the running problems
            keep = np.flatnonzero(active)
            keep_raters = (keep[:, None] * batch.n_raters + np.arange(batch.n_raters)[None, :]).ravel()
            v_priors, v_confusion = v_priors[keep], v_confusion[keep_raters]
            view = _View(batch, ids[keep])
    running = ~converged[view.problems]
    if running.any():  # problems stopped by max_iter keep their last posteriors
        rows = np.flatnonzero(running[view.response_problem])
        posteriors[view.rows[rows]] = gamma[:, rows].T
    return BatchEMResult(posteriors=posteriors, n_iter=n_iter, converged=converged, objective=final_objective)


@dataclass(frozen=True)
class BatchFit:
    """One method fitted on every problem of a batch: the (N_total, K) distribution whose expected credit is the
    method's item credit, and the EM convergence per problem (``None`` for methods that are not iterative)."""

    distribution: np.ndarray
    em: BatchEMResult | None = None


def batch_fit(batch: ProblemBatch, estimator: Aggregator, method: Method | None = None) -> BatchFit:
    """Fit ``estimator`` on every problem the way its registry entry says (``em``, ``stacked`` or ``each``)."""
    method = method or method_of(estimator)
    if method.batch == "em" and isinstance(estimator, EMAggregator):
        em = batch_em(batch, estimator)
        return BatchFit(method.credit_distribution(em.posteriors), em)
    if method.batch == "stacked":
        fitted = clone(estimator).fit_matrix(batch.X, batch.n_problems * batch.n_raters, batch.n_levels)
        return BatchFit(method.credit_distribution(fitted.posteriors_))
    parts = [method.credit_distribution(clone(estimator).fit_matrix(batch.problem_matrix(p), batch.n_raters,
                                                                      batch.n_levels).posteriors_)
             for p in range(batch.n_problems)]
    return BatchFit(np.concatenate(parts))

