"""Many small aggregation problems fitted at once: majority vote, Dawid–Skene and STABLEVAL, batched.

A stress test fits thousands of tiny tables (one per trial and rater subsample). Fitting them one by one spends
most of the time in Python overhead, so the problems are stacked block-diagonally into one sparse matrix
(responses of all problems × rater·K + label, with a rater offset per problem) and EM runs on all of them at
once: one sparse product per E-step, one per M-step, per-problem sums with ``np.add.reduceat``.

Each problem follows exactly the same algorithm as the single-table estimators — Dawid & Skene (1979), JRSS C
28(1):20–28 (:class:`~stableval.aggregate.DawidSkene`: soft-vote initialisation, M-step first) and STABLEVAL,
Bonagiri et al. (2026), arXiv:2605.02122, Algorithm 1 (:class:`~stableval.aggregate.Stableval`: hard-majority
priors, near-identity confusion, E-step first, Dirichlet MAP updates) — with the same per-problem stopping rule
(objective change ``<= tol * max(1, |objective|)``). A problem that has converged keeps its parameters frozen
while the others go on, so its result does not depend on which other problems share the batch. Everything runs
in double precision on one thread.

>>> import numpy as np
>>> batch = ProblemBatch.from_problems(
...     [(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 1, 0, 0]), 2)], n_raters=2, n_levels=2)
>>> batch_majority(batch).tolist()
[[0.0, 1.0], [1.0, 0.0]]
>>> fit = batch_em(batch, "ds")
>>> fit.posteriors.argmax(axis=1).tolist(), fit.converged.tolist()
([1, 0], [True])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from stableval.aggregate._base import hard_distribution
from stableval.evaluate.credit import MethodOptions

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
        X = self.X
        k = self.n_levels
        levels = sp.csr_matrix((X.data, X.indices % k, X.indptr), shape=(X.shape[0], k))
        return np.asarray(levels.toarray())

    def problem_sums(self, values: np.ndarray) -> np.ndarray:
        """Per-problem sums along the last axis (responses) of (N,) or (K, N) values."""
        return _problem_sums(self.response_problem, values, self.n_problems)


def _problem_sums(problem: np.ndarray, values: np.ndarray, n_problems: int) -> np.ndarray:
    """Segment sums by ``np.bincount``: one sequential pass in index order, so a problem's sum has the same
    rounding wherever its rows sit in memory (SIMD reductions can depend on the alignment of the start)."""
    if values.ndim == 1:
        return np.bincount(problem, weights=values, minlength=n_problems)
    return np.stack([np.bincount(problem, weights=row, minlength=n_problems) for row in values])


def _sum_last(values: np.ndarray) -> np.ndarray:
    """Sum over the (short) last axis, term by term in order: same rounding wherever a row sits in memory."""
    total = values[..., 0].copy()
    for j in range(1, values.shape[-1]):
        total += values[..., j]
    return total


@dataclass(frozen=True)
class BatchEMResult:
    """Per-response posteriors (N_total, K) and, per problem, the fit's convergence."""

    posteriors: np.ndarray
    objective: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def batch_majority(batch: ProblemBatch) -> np.ndarray:
    """(N_total, K) hard majority vote, ties split equally (``MajorityVote(ties="split")``)."""
    return hard_distribution(batch.vote_counts(), atol=0.0)


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


def _m_step_view(view: _View, mass: np.ndarray, counts: np.ndarray, k: int, alpha_mu: float, alpha_pi: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Priors (P, K) and confusion (P·R, K, K) [rater, true, given] from expected counts (as
    :func:`stableval.aggregate.em.parameters_from_counts`, per problem)."""
    priors = (mass + alpha_mu - 1.0) / (_sum_last(mass)[:, None] + k * (alpha_mu - 1.0))
    confusion = counts.reshape(-1, k, k).transpose(0, 2, 1) + (alpha_pi - 1.0)  # counts rows r·K+o → [r, c, o]
    totals = _sum_last(confusion)[..., None]
    confusion = confusion / np.where(totals > 0, totals, 1.0)
    empty = totals[..., 0] <= 0
    if empty.any():
        confusion[empty] = 1.0 / k
    return priors, np.ascontiguousarray(confusion)


def _log_prior(view: _View, priors: np.ndarray, confusion: np.ndarray, alpha_mu: float,
               alpha_pi: float) -> np.ndarray:
    """Log density (up to a constant) of the Dirichlet priors per problem; raters without judgments excluded."""
    total = np.zeros(view.problems.size)
    if alpha_mu != 1.0:
        total += (alpha_mu - 1.0) * _sum_last(np.log(np.maximum(priors, 1e-300)))
    if alpha_pi != 1.0:
        logs = np.log(np.maximum(confusion, 1e-300))
        per_rater = _sum_last(logs.reshape(logs.shape[0], -1)) * view.rater_used
        total += (alpha_pi - 1.0) * np.bincount(view.rater_problem, weights=per_rater,
                                                minlength=view.problems.size)
    return total


def batch_em(batch: ProblemBatch, method: str, options: MethodOptions | None = None) -> BatchEMResult:
    """Fit ``"ds"`` (maximum-likelihood Dawid–Skene) or ``"stableval"`` (MAP, Algorithm 1) on every problem.

    Problems that have converged drop out of the computation (the matrix is re-cut to the running problems
    whenever half of them have finished), so a few slow problems do not slow the whole batch down.
    """
    options = options or MethodOptions()
    k, n_problems = batch.n_levels, batch.n_problems
    view = _View(batch, np.arange(n_problems))
    if method == "ds":
        alpha_mu = alpha_pi = 1.0
        counts = batch.vote_counts()
        shares = counts / np.maximum(_sum_last(counts)[:, None], 1.0)
        priors, confusion = _m_step_view(view, view.problem_sums(shares.T).T, np.asarray(view.XT @ shares), k,
                                         1.0, 1.0)
    elif method == "stableval":
        alpha_mu, alpha_pi = options.alpha_mu, options.alpha_pi
        hard = batch_majority(batch)
        priors = batch.problem_sums(hard.T).T / np.diff(batch.starts)[:, None]
        identity = (1.0 - options.epsilon) * np.eye(k) + options.epsilon / k
        confusion = np.broadcast_to(identity, (n_problems * batch.n_raters, k, k)).copy()
    else:
        raise ValueError(f"batch_em fits 'ds' or 'stableval', not {method!r}")

    posteriors = np.empty((batch.X.shape[0], k))
    n_iter = np.zeros(n_problems, dtype=np.int64)
    converged = np.zeros(n_problems, dtype=bool)
    final_objective = np.full(n_problems, np.nan)
    previous = np.full(n_problems, np.nan)
    # parameters of the problems in the current view, in the view's order; posteriors are class-major (K, N)
    v_priors, v_confusion = priors, confusion
    max_iter = max(1, options.max_iter)
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
            np.abs(objective - last) <= options.tol * np.maximum(1.0, np.abs(objective)))
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
        new_priors, new_confusion = _m_step_view(view, view.problem_sums(gamma).T, counts, k, alpha_mu, alpha_pi)
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


def batch_credit_distributions(batch: ProblemBatch, methods: Sequence[str], options: MethodOptions | None = None
                               ) -> tuple[dict[str, np.ndarray], dict[str, BatchEMResult]]:
    """(N_total, K) distribution whose expected credit is each method's item credit (as
    :func:`stableval.evaluate.credit.credit_distribution`), and the EM fits."""
    options = options or MethodOptions()
    out: dict[str, np.ndarray] = {}
    fits: dict[str, BatchEMResult] = {}
    for method in methods:
        if method == "mv":
            if options.ties != "split":
                raise ValueError("the batched majority vote splits ties (ties='split')")
            out[method] = batch_majority(batch)
        else:
            fit = batch_em(batch, method, options)
            fits[method] = fit
            out[method] = hard_distribution(fit.posteriors) if method == "ds" else fit.posteriors
    return out, fits
