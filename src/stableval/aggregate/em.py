"""The shared EM kernel of Dawid–Skene (maximum likelihood) and STABLEVAL (MAP with Dirichlet priors).

Model (Dawid & Skene 1979, "Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm",
JRSS C 28(1)): each response i has a latent level z_i ~ Categorical(mu); rater r reports level o with
probability pi_r[c, o] when z_i = c, independently given z_i. STABLEVAL (Bonagiri et al. 2026, Algorithm 1)
adds Dirichlet(alpha_mu) on mu and Dirichlet(alpha_pi) on every row of every pi_r and runs MAP EM.

Everything runs on the sparse count matrix ``X`` (responses × rater·K + label) built once by
:meth:`AnnotationTable.response_matrix`:

* E-step: ``logits = X @ log(pi) + log(mu)`` — one sparse × dense product, O(judgments · K);
  the posterior is its row-wise softmax, and the marginal log-likelihood is the sum of its log-normalisers,
  so the convergence criterion costs nothing extra.
* M-step: expected counts ``N[c, r·K+o] = gamma @ X`` — a second sparse product; mu from row sums.

Posteriors are kept class-major, shape (K, N), so the per-class operations stream over contiguous memory. The
matrix is cut into row blocks; for each block the E-step and the M-step counts run back to back while the block
is in cache, and blocks run on all cores (scipy and numpy release the GIL). The exponential runs in single
precision (about 5x faster than double on AVX2), so posteriors carry ~1e-7 relative error; everything else,
the log-likelihood included, is accumulated in double precision. With numba installed, large matrices take the
compiled one-pass E-step of :mod:`stableval.aggregate.em_kernel` instead (double precision throughout).

This module holds the model (E-step blocks, M-step, log prior) and plain EM (:func:`run_em`); the accelerators are
in :mod:`stableval.aggregate.em_acceleration`, the learnt priors in :mod:`stableval.aggregate.em_priors`, and the
fit of an estimator (starts, screening, refits) in :mod:`stableval.aggregate.em_fit`.

>>> import numpy as np, scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1., 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]))  # 2 raters, K=2
>>> result = run_em(X, n_raters=2, n_levels=2, init_posteriors=np.array([[1., 0, 1], [0, 1, 0]]))
>>> bool(result.converged), result.posteriors.round(3).tolist()
(True, [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import scipy.sparse as sp

from stableval.aggregate.em_acceleration import ACCELERATIONS, Params, acceleration_choice, anderson, squarem


@dataclass(frozen=True)
class EMResult:
    """Output of :func:`run_em`. ``posteriors`` is class-major (K, N); ``confusion`` is (R, K, K) [r, true, given]."""

    posteriors: np.ndarray
    priors: np.ndarray
    confusion: np.ndarray
    log_likelihood: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool


T = TypeVar("T")

#: target number of stored judgments per row block: big enough to amortise Python overhead, small enough that
#: a block's matrix and posteriors stay in cache while the E-step and the M-step counts are computed on it
BLOCK_NNZ = 1 << 19


def log_confusion_table(confusion: np.ndarray) -> np.ndarray:
    """(R·K, K) table whose row r·K+o holds log pi_r[c, o] for every c (meets column r·K+o of X)."""
    n_raters, k, _ = confusion.shape
    log_conf = np.log(np.maximum(confusion, 1e-300))
    return np.ascontiguousarray(log_conf.transpose(0, 2, 1).reshape(n_raters * k, k))


def sum_last(values: np.ndarray) -> np.ndarray:
    """Sum over the (short) last axis, term by term in order: the same rounding wherever a row sits in memory
    (SIMD reductions can depend on the alignment of a row's start), so a problem's numbers do not depend on
    which other problems share a batch.

    >>> sum_last(np.array([[0.1, 0.2, 0.3]])).tolist()
    [0.6000000000000001]
    """
    total = values[..., 0].copy()
    for j in range(1, values.shape[-1]):
        total += values[..., j]
    return total


def m_step(mass: np.ndarray, counts: np.ndarray, alpha_mu: float | np.ndarray = 1.0,
           alpha_pi: float | np.ndarray = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """M-step from expected counts, for one problem or many at once (leading axes).

    ``mass`` (..., K) is the posterior mass per class; ``counts`` (..., R, K, K) the expected counts
    [rater, true level c, given level o] = sum_i gamma_ic X[i, r·K+o]. Returns the class priors (..., K) and the
    confusion matrices (..., R, K, K). With ``alpha = 1`` this is the maximum-likelihood update; larger alphas add
    ``alpha - 1`` pseudo-counts (the MAP update of Algorithm 1, lines 8–10). A confusion row with no mass at all
    (a rater who never judged a response of that class) is uniform.
    """
    k = mass.shape[-1]
    priors = (mass + alpha_mu - 1.0) / (sum_last(mass)[..., None] + k * (alpha_mu - 1.0))
    confusion = counts + (alpha_pi - 1.0)
    totals = sum_last(confusion)[..., None]
    empty = totals[..., 0] <= 0
    confusion = confusion / np.where(totals > 0, totals, 1.0)
    if empty.any():
        confusion[empty] = 1.0 / k
    return priors, np.ascontiguousarray(confusion)


def parameters_from_counts(
    mass: np.ndarray,
    counts: np.ndarray,
    n_raters: int,
    alpha_mu: float = 1.0,
    alpha_pi: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`m_step` for one problem: ``mass`` (K,), ``counts`` (K, R·K) as ``posteriors (K, N) @ X``; returns
    class priors (K,) and confusion matrices (R, K, K) [r, true, given]."""
    k = mass.size
    return m_step(mass, counts.reshape(k, n_raters, k).transpose(1, 0, 2), alpha_mu, alpha_pi)


def log_prior_terms(priors: np.ndarray, confusion: np.ndarray, alpha_mu: float | np.ndarray,
                    alpha_pi: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Dirichlet log densities (up to a constant) of the class priors (..., K) → (...) and of each rater's
    confusion matrix (..., K, K) → (...); zeros where the alpha is 1. An alpha may be an array matching the leading
    axes (one value per problem or per rater), or, for ``alpha_pi``, an array of the confusion matrices' own shape
    (one concentration per cell: the pooled prior of :func:`pooled_dirichlet`)."""
    prior_term = np.zeros(priors.shape[:-1])
    rater_term = np.zeros(confusion.shape[:-2])
    if np.any(np.asarray(alpha_mu) != 1.0):
        prior_term = (np.asarray(alpha_mu) - 1.0) * sum_last(np.log(np.maximum(priors, 1e-300)))
    if np.any(np.asarray(alpha_pi) != 1.0):
        logs = np.log(np.maximum(confusion, 1e-300))
        if np.shape(alpha_pi) == confusion.shape:
            weighted = (np.asarray(alpha_pi) - 1.0) * logs
            rater_term = sum_last(weighted.reshape(*logs.shape[:-2], -1))
        else:
            rater_term = (np.asarray(alpha_pi) - 1.0) * sum_last(logs.reshape(*logs.shape[:-2], -1))
    return prior_term, rater_term




class EStep(Protocol):
    """The E-step of a response matrix where the matrix lives: :class:`ResponseBlocks` (in this process) or
    :class:`~stableval.aggregate.distributed.PartitionedEStep` (partitions on a Dask cluster). :func:`run_em`
    runs EM on either; the E-step kernel is chosen when the E-step is built, once per fit."""

    n_responses: int
    #: the E-step kernel, ``"numba"`` or ``"numpy"`` (a screened subset runs on the whole fit's)
    kernel: str

    def counts(self, posteriors: np.ndarray) -> np.ndarray:
        """Expected counts (K, R·K) = posteriors (K, N) @ X."""
        ...

    def e_step(self, priors: np.ndarray, confusion: np.ndarray,
               out: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Posteriors into ``out``; the log-likelihood, the posterior mass (K,) and the expected counts (K, R·K)."""
        ...

    def rater_judgments(self, n_raters: int) -> np.ndarray:
        """Judgments per rater (R,)."""
        ...

    def posteriors_buffer(self, n_levels: int) -> np.ndarray:
        """The buffer :meth:`e_step` writes the posteriors into."""
        ...

    def final_posteriors(self, buffer: np.ndarray) -> np.ndarray:
        """The last E-step's posteriors (K, N), from the buffer or from where they were kept."""
        ...


class ResponseBlocks:
    """The response matrix cut into row blocks, each E-stepped (and M-step counted) by a worker thread.

    scipy's sparse products, numpy's ufuncs and the compiled kernel release the GIL, so blocks run in parallel on
    all cores, on a thread pool kept for the process (:func:`thread_pool`). ``kernel`` is ``"numba"`` (the fused
    one-pass E-step of :mod:`stableval.aggregate.em_kernel`) or ``"numpy"`` (the reference); by default
    :func:`~stableval.aggregate.em_kernel.kernel_choice` picks it from the matrix's size. ``precise``: the numpy
    kernel's exponential in double precision too (for a model compared digit by digit with another
    implementation; the compiled kernel is double precision throughout).
    """

    def __init__(self, X: sp.csr_matrix, gold: np.ndarray | None = None, threads: int | None = None,
                 kernel: str | None = None, precise: bool = False) -> None:
        from stableval.aggregate.em_kernel import kernel_choice

        X = X.tocsr()
        self.X = X
        self.n_responses = X.shape[0]
        # equal blocks of at most BLOCK_NNZ judgments (cut where a response starts): with a fixed block length the
        # last block of a small matrix was a short remainder, and one thread did most of the E-step
        n_blocks = -(-X.nnz // BLOCK_NNZ)
        cuts = np.searchsorted(X.indptr, np.arange(1, n_blocks) * X.nnz // max(n_blocks, 1))
        bounds = np.unique(np.concatenate([[0], cuts, [self.n_responses]])).astype(int)
        # row blocks share X's data and indices (views, no copy)
        self.blocks = [
            (int(a), int(b), sp.csr_matrix(
                (X.data[X.indptr[a]:X.indptr[b]], X.indices[X.indptr[a]:X.indptr[b]], X.indptr[a:b + 1] - X.indptr[a]),
                shape=(int(b - a), X.shape[1])))
            for a, b in itertools.pairwise(bounds)
        ]
        self.gold = gold if gold is not None and (gold >= 0).any() else None
        self.threads = max(1, min(threads or os.cpu_count() or 1, len(self.blocks)))
        self.stored = int(X.nnz)  # judgments stored, what the kernel is chosen by
        self.kernel = kernel_choice(X.nnz) if kernel is None else kernel
        self.precise = precise
        if self.kernel not in ("numpy", "numba"):
            raise ValueError(f"kernel={self.kernel!r}; allowed: numpy, numba")

    def rater_judgments(self, n_raters: int) -> np.ndarray:
        """Judgments per rater (R,), what ``acceleration="auto"`` is chosen by
        (:func:`~stableval.aggregate.em_acceleration.acceleration_choice`)."""
        return rater_judgments(self.X, n_raters)

    def posteriors_buffer(self, n_levels: int) -> np.ndarray:
        """A (K, N) buffer for the posteriors of :meth:`e_step`."""
        return np.empty((n_levels, self.n_responses))

    def final_posteriors(self, buffer: np.ndarray) -> np.ndarray:
        """The posteriors of the last E-step: the buffer itself."""
        return buffer

    def _map(self, work: Callable[[tuple[int, int, sp.csr_matrix]], T]) -> list[T]:
        if self.threads == 1:
            return [work(block) for block in self.blocks]
        return list(thread_pool(self.threads).map(work, self.blocks))

    def counts(self, posteriors: np.ndarray) -> np.ndarray:
        """Expected counts (K, R·K) = posteriors (K, N) @ X, block by block on all cores."""
        parts = self._map(lambda block: np.asarray(
            block[2].T @ np.ascontiguousarray(posteriors[:, block[0]:block[1]].T)).T)
        return np.sum(parts, axis=0) if parts else np.zeros((posteriors.shape[0], self.X.shape[1]))

    def e_step(
        self, priors: np.ndarray, confusion: np.ndarray, out: np.ndarray
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """Posteriors into ``out`` (K, N); returns the log-likelihood and, for the next M-step, the posterior
        mass per class (K,) and the expected counts (K, R·K) of those posteriors."""
        table = log_confusion_table(confusion)
        k = confusion.shape[1]
        if self.kernel == "numba":
            return self._e_step_compiled(table, np.log(np.maximum(priors, 1e-300)), out)
        log_priors = np.log(np.maximum(priors, 1e-300))[:, None]

        def work(block: tuple[int, int, sp.csr_matrix]) -> tuple[float, np.ndarray, np.ndarray]:
            start, stop, Xb = block
            logits = np.empty((table.shape[1], stop - start))  # class-major (K, Nb)
            np.add((Xb @ table).T, log_priors, out=logits)
            if self.gold is not None:
                _clamp(logits, self.gold[start:stop])
            top = logits.max(axis=0)
            logits -= top
            # single-precision exp: ~5x faster than double on AVX2; posteriors keep ~1e-7 relative accuracy
            weights = np.exp(logits) if self.precise else np.exp(logits.astype(np.float32))
            norm = weights.sum(axis=0, dtype=np.float64)
            block_out = out[:, start:stop]
            np.divide(weights, norm, out=block_out)
            # M-step counts while the block is in cache; X_b^T @ (row-major posteriors) is scipy's fastest path
            counts = np.asarray(Xb.T @ np.ascontiguousarray(block_out.T)).T
            return float(top.sum() + sum_of_logs(norm, upper=k)), block_out.sum(axis=1), counts

        results = self._map(work)
        log_likelihood = float(sum(r[0] for r in results))
        mass = np.sum([r[1] for r in results], axis=0) if results else np.zeros(k)
        counts = np.sum([r[2] for r in results], axis=0) if results else np.zeros((k, self.X.shape[1]))
        return log_likelihood, mass, counts

    def _e_step_compiled(self, table: np.ndarray, log_priors: np.ndarray,
                         out: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """:meth:`e_step` through the compiled one-pass kernel, block by block (sums added in block order, so the
        result does not depend on the number of threads)."""
        from stableval.aggregate.em_kernel import fused_e_step

        k = table.shape[1]
        no_gold = np.empty(0, dtype=np.int64)

        def work(block: tuple[int, int, sp.csr_matrix]) -> tuple[float, np.ndarray, np.ndarray]:
            start, stop, Xb = block
            gold = no_gold if self.gold is None else np.ascontiguousarray(self.gold[start:stop], dtype=np.int64)
            counts, mass = np.zeros((table.shape[0], k)), np.zeros(k)  # counts [r·K + given, true]
            log_likelihood = fused_e_step(Xb.indptr, Xb.indices, Xb.data, table, log_priors, gold,
                                          out[:, start:stop], counts, mass)
            return log_likelihood, mass, counts

        results = self._map(work)
        if not results:
            return 0.0, np.zeros(k), np.zeros((k, self.X.shape[1]))
        counts = results[0][2]
        for result in results[1:]:
            counts += result[2]
        return float(sum(r[0] for r in results)), np.sum([r[1] for r in results], axis=0), counts.T


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _forget_pools() -> None:
    """In a forked child the pools' threads do not exist: start afresh there."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_pools)


def thread_pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool of ``threads`` worker threads, made on first use and kept: starting threads for every
    E-step cost more than a small block's work (the work items never wait on the pool, so sharing it between
    concurrent fits cannot deadlock).

    >>> thread_pool(2) is thread_pool(2)
    True
    """
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix=f"stableval-em-{threads}")
        return pool


def sum_of_logs(values: np.ndarray, upper: float) -> float:
    """sum(log(values)) for values in [1, upper], as logs of chunked products: exact to double precision and
    several times faster than one log per value.

    >>> round(sum_of_logs(np.array([1.0, 2.0, 3.0, 1.5]), upper=3.0), 12) == round(float(np.log(9.0)), 12)
    True
    """
    if values.size == 0:
        return 0.0
    chunk = max(1, int(700.0 // np.log(max(upper, 2.0))))  # a chunk's product stays below e^700
    pad = (-values.size) % chunk
    padded = np.concatenate([values, np.ones(pad)]) if pad else values
    return float(np.log(padded.reshape(-1, chunk).prod(axis=1)).sum())


def _clamp(logits: np.ndarray, gold: np.ndarray) -> None:
    """Clamp responses with a known level (gold >= 0) to that level, in place."""
    known = np.flatnonzero(gold >= 0)
    if known.size:
        keep = logits[gold[known], known]
        logits[:, known] = -np.inf
        logits[gold[known], known] = keep


def log_prior(priors: np.ndarray, confusion: np.ndarray, alpha_mu: float, alpha_pi: float | np.ndarray) -> float:
    """Log density (up to a constant) of the Dirichlet priors of one problem; 0 when both alphas are 1."""
    prior_term, rater_term = log_prior_terms(priors, confusion, alpha_mu, alpha_pi)
    return float(prior_term) + float(rater_term.sum())




def rater_judgments(X: sp.csr_matrix, n_raters: int) -> np.ndarray:
    """Judgments per rater (R,) of a response matrix (responses × rater·K + label).

    >>> rater_judgments(sp.csr_matrix(np.array([[1.0, 0, 0, 1], [0, 2, 0, 0]])), 2).tolist()
    [3.0, 1.0]
    """
    per_column = np.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    return per_column.reshape(n_raters, -1).sum(axis=1) if n_raters else np.zeros(0)



def run_em(
    X: sp.csr_matrix | EStep,
    *,
    n_raters: int,
    n_levels: int,
    init_posteriors: np.ndarray | None = None,
    init_params: tuple[np.ndarray, np.ndarray] | None = None,
    alpha_mu: float = 1.0,
    alpha_pi: float | np.ndarray = 1.0,
    max_iter: int = 500,
    tol: float = 1e-8,
    gold: np.ndarray | None = None,
    threads: int | None = None,
    acceleration: str = "none",
    kernel: str | None = None,
) -> EMResult:
    """EM from initial posteriors (K, N) (an M-step comes first) or initial (priors, confusion).

    ``X`` is the response matrix, cut here into :class:`ResponseBlocks` with ``gold``, ``threads`` and ``kernel``
    (None: chosen from the size of ``X``), or an E-step already set up (:class:`EStep`: the blocks of an EM fit,
    which chose its kernel once, or the partitions of a Dask cluster).

    Each EM step is one E-step (posteriors, marginal log-likelihood and the expected counts, fused per row block)
    and one M-step on those counts. Stops when one EM step improves the objective (log-likelihood plus log prior)
    by less than ``tol * max(1, |objective|)``, or after ``max_iter`` E-steps. ``acceleration="anderson"``
    (:func:`~stableval.aggregate.em_acceleration.anderson`) combines the last EM steps into one extrapolated point
    per E-step; ``"squarem"`` (:func:`~stableval.aggregate.em_acceleration.squarem`) extrapolates along two EM
    steps; ``"auto"`` picks one of them by the judgments of each rater
    (:func:`~stableval.aggregate.em_acceleration.acceleration_choice`). Both keep an extrapolated point only when
    its objective is at least the current one, so the objective never decreases; the recorded history holds the
    accepted points only (``n_iter`` counts every E-step).
    """
    if (init_posteriors is None) == (init_params is None):
        raise ValueError("give exactly one of init_posteriors and init_params")
    if acceleration not in ACCELERATIONS:
        raise ValueError(f"acceleration={acceleration!r}; allowed: {', '.join(ACCELERATIONS)}")
    if sp.issparse(X):
        blocks: EStep = ResponseBlocks(sp.csr_matrix(X), gold, threads, kernel)
    elif gold is not None or threads is not None or kernel is not None:
        raise ValueError("gold, threads and kernel belong to the E-step given as X, not to run_em")
    else:
        blocks = X
    if init_posteriors is not None:
        counts = blocks.counts(init_posteriors)
        start = parameters_from_counts(init_posteriors.sum(axis=1), counts, n_raters, alpha_mu, alpha_pi)
    else:
        assert init_params is not None
        start = init_params
    posteriors = blocks.posteriors_buffer(n_levels)
    run = EMIteration(blocks, posteriors, n_raters, alpha_mu, alpha_pi, max(1, max_iter), tol)
    final, converged = run.solve(start, acceleration)
    return EMResult(posteriors=blocks.final_posteriors(posteriors), priors=final[0], confusion=final[1],
                    log_likelihood=np.asarray(run.likelihoods), objective=np.asarray(run.objectives),
                    n_iter=run.evaluations, converged=converged)


class EMIteration:
    """One EM run: evaluations (E-step into the posteriors buffer, then the M-step), the accepted history and the
    stopping rule, shared by plain EM (:meth:`plain`) and the accelerators of
    :mod:`stableval.aggregate.em_acceleration`, which drive it (it is their
    :class:`~stableval.aggregate.em_acceleration.Iteration`)."""

    def __init__(self, blocks: EStep, posteriors: np.ndarray, n_raters: int, alpha_mu: float,
                 alpha_pi: float | np.ndarray, max_iter: int, tol: float) -> None:
        self.blocks, self.posteriors, self.n_raters = blocks, posteriors, n_raters
        self.alpha_mu, self.alpha_pi, self.max_iter, self.tol = alpha_mu, alpha_pi, max_iter, tol
        self.likelihoods: list[float] = []
        self.objectives: list[float] = []
        self.evaluations = 0

    def evaluate(self, params: Params) -> tuple[float, float, Params]:
        """E-step at ``params`` (posteriors into the buffer): objective, log-likelihood and the M-step's params."""
        self.evaluations += 1
        log_likelihood, mass, counts = self.blocks.e_step(params[0], params[1], self.posteriors)
        objective = log_likelihood + log_prior(params[0], params[1], self.alpha_mu, self.alpha_pi)
        return objective, log_likelihood, parameters_from_counts(mass, counts, self.n_raters, self.alpha_mu,
                                                                 self.alpha_pi)

    def accept(self, objective: float, log_likelihood: float) -> bool:
        """Record an accepted point; True when it improved on the previous one by less than the tolerance."""
        self.objectives.append(objective)
        self.likelihoods.append(log_likelihood)
        if len(self.objectives) < 2:
            return False
        return abs(self.objectives[-1] - self.objectives[-2]) <= self.tol * max(1.0, abs(objective))

    @property
    def spent(self) -> bool:
        return self.evaluations >= self.max_iter

    def solve(self, params: Params, acceleration: str) -> tuple[Params, bool]:
        """Run to convergence (or ``max_iter``) from ``params`` with one of
        :data:`~stableval.aggregate.em_acceleration.ACCELERATIONS` (``"auto"`` chosen by the judgments of each
        rater): the final parameters (their posteriors are in the buffer) and whether the run converged."""
        chosen = acceleration_choice(acceleration, lambda: self.blocks.rater_judgments(self.n_raters))
        if chosen == "anderson":
            return anderson(self, params)
        if chosen == "squarem":
            return squarem(self, params)
        return self.plain(params)

    def plain(self, params: Params) -> tuple[Params, bool]:
        """Plain EM from ``params``, one E-step and one M-step at a time."""
        while True:
            objective, log_likelihood, following = self.evaluate(params)
            if self.accept(objective, log_likelihood):
                return params, True
            if self.spent:
                return params, False
            params = following


def expected_rows(X: sp.csr_matrix, posteriors: np.ndarray, n_raters: int, n_levels: int) -> np.ndarray:
    """(R·K, K) expected confusion counts, one row per (rater, true level): ``posteriors`` (N, K) times the
    response matrix."""
    k = n_levels
    counts = np.asarray(X.T @ np.ascontiguousarray(posteriors))  # (R·K, K): [r·K + given, true]
    return np.ascontiguousarray(counts.reshape(n_raters, k, k).transpose(0, 2, 1).reshape(n_raters * k, k))


def vote_counts_of_matrix(X: sp.csr_matrix, n_levels: int) -> np.ndarray:
    """(N, K) label counts per response from a response matrix (column r·K+o holds level o).

    >>> vote_counts_of_matrix(sp.csr_matrix(np.array([[1.0, 0, 0, 2]])), 2).tolist()
    [[1.0, 2.0]]
    """
    X = X.tocsr()
    levels = sp.csr_matrix((X.data, X.indices % n_levels, X.indptr), shape=(X.shape[0], n_levels))
    return np.asarray(levels.toarray())
