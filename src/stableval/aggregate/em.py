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
from typing import TypeVar

import numpy as np
import scipy.sparse as sp


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


#: the concentrations :func:`dirichlet_concentration` chooses among (log-spaced, 0.0025 to 400)
CONCENTRATIONS = np.exp(np.linspace(np.log(0.0025), np.log(400.0), 241))


#: the prior strengths (pseudo-judgments) :func:`pooled_dirichlet` chooses among (log-spaced, 0.01 to 10,000)
STRENGTHS = np.exp(np.linspace(np.log(0.01), np.log(1e4), 241))


def pooled_dirichlet(rows: np.ndarray, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """A hierarchical (empirical-Bayes) prior that shrinks every rater's confusion row towards the crowd's.

    ``rows`` (R·K, K) are the expected confusion counts of a fit, one row per (rater, true level). For each true
    level c the crowd's row m_c is the pooled counts normalised, and the strength s_c (in pseudo-judgments)
    maximises the Dirichlet-multinomial evidence of the raters' rows under Dirichlet(s_c m_c) (Minka 2000, with the
    mean fixed; searched on :data:`STRENGTHS`; cf. the hierarchical Dawid–Skene models of Paun et al. 2018, TACL 6).
    Returns (alpha (K, K) = 1 + s_c m_c per row, strengths (K,)). With these alphas the MAP row of a rater with n
    judgments of class c is ``(n_c + s_c m_c) / (N_c + s_c)``: a few judgments are pulled towards the crowd's row,
    hundreds barely move.

    >>> rows = np.array([[19.0, 1.0], [1.0, 19.0],   # a careful rater: 20 judgments per class
    ...                  [12.0, 8.0], [7.0, 13.0],   # a careless one
    ...                  [2.0, 0.0], [0.0, 1.0]])    # a newcomer with 3 judgments, all right
    >>> alpha, strength = pooled_dirichlet(rows, 2)
    >>> (alpha - 1).round(2).tolist(), strength.round(1).tolist()
    ([[4.68, 1.28], [1.64, 6.77]], [6.0, 8.4])
    >>> ((rows[4] + alpha[0] - 1) / (rows[4] + alpha[0] - 1).sum()).round(2).tolist()  # the newcomer's MAP row
    [0.84, 0.16]
    """
    from scipy.special import gammaln

    k = n_levels
    per_level = rows.reshape(-1, k, k)  # (R, true, given)
    crowd = per_level.sum(axis=0)
    mean = crowd / np.maximum(crowd.sum(axis=1, keepdims=True), 1e-300)  # (K, K) m_c
    strengths = np.ones(k)
    for c in range(k):
        counts = per_level[:, c, :]
        used = counts.sum(axis=1) > 0
        counts, m = counts[used], mean[c]
        cells = m > 0  # cells the crowd never uses carry no counts either
        if not counts.size or cells.sum() < 2:
            continue
        s = STRENGTHS[:, None]
        a = s * m[cells][None, :]  # (grid, cells)
        evidence = (counts.shape[0] * gammaln(s[:, 0]) - gammaln(counts.sum(axis=1)[None, :] + s).sum(axis=1)
                    + (gammaln(counts[:, cells][None] + a[:, None, :]) - gammaln(a)[:, None, :]).sum(axis=(1, 2)))
        strengths[c] = STRENGTHS[int(evidence.argmax())]
    return 1.0 + strengths[:, None] * mean, strengths


def dirichlet_concentration(rows: np.ndarray, groups: np.ndarray | None = None, n_groups: int = 1) -> np.ndarray:
    """(G,) empirical-Bayes concentration of a symmetric Dirichlet over confusion rows: the beta maximising the
    Dirichlet-multinomial evidence of the expected counts ``rows`` (M, K) — one confusion row of one rater each —
    summed per group (Minka 2000, "Estimating a Dirichlet distribution"; the evidence of row n is
    ``lgamma(K beta) - lgamma(n + K beta) + sum_o [lgamma(n_o + beta) - lgamma(beta)]``). Searched on the
    log-spaced grid :data:`CONCENTRATIONS` (steps of about 4%); rows without counts carry no evidence.

    >>> sharp = np.array([[9.0, 1.0, 0.0], [0.0, 9.0, 1.0], [1.0, 0.0, 9.0]])   # raters right 90% of the time
    >>> diffuse = np.array([[5.0, 4.0, 6.0], [6.0, 5.0, 4.0], [4.0, 6.0, 5.0]])  # labels unrelated to the truth
    >>> dirichlet_concentration(sharp).round(2).tolist(), dirichlet_concentration(diffuse).round(2).tolist()
    ([0.26], [400.0])
    """
    from scipy.special import gammaln

    groups = np.zeros(len(rows), dtype=np.int64) if groups is None else groups
    k = rows.shape[1]
    totals = rows.sum(axis=1)
    used = totals > 0
    rows, totals, groups = rows[used], totals[used], groups[used]
    beta = CONCENTRATIONS[:, None, None]
    per_row = (gammaln(k * beta[..., 0]) - gammaln(totals[None, :] + k * beta[..., 0])
               + (gammaln(rows[None] + beta) - gammaln(beta)).sum(axis=2))  # (grid, M)
    evidence = np.stack([np.bincount(groups, weights=values, minlength=n_groups) for values in per_row])
    return np.asarray(CONCENTRATIONS[evidence.argmax(axis=0)])


class ResponseBlocks:
    """The response matrix cut into row blocks, each E-stepped (and M-step counted) by a worker thread.

    scipy's sparse products, numpy's ufuncs and the compiled kernel release the GIL, so blocks run in parallel on
    all cores, on a thread pool kept for the process (:func:`thread_pool`). ``kernel`` is ``"numba"`` (the fused
    one-pass E-step of :mod:`stableval.aggregate.em_kernel`) or ``"numpy"`` (the reference); by default
    :func:`~stableval.aggregate.em_kernel.kernel_choice` picks it from the matrix's size.
    """

    def __init__(self, X: sp.csr_matrix, gold: np.ndarray | None = None, threads: int | None = None,
                 kernel: str | None = None) -> None:
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
        if self.kernel not in ("numpy", "numba"):
            raise ValueError(f"kernel={self.kernel!r}; allowed: numpy, numba")

    def rater_judgments(self, n_raters: int) -> np.ndarray:
        """Judgments per rater (R,), what ``acceleration="auto"`` is chosen by (:func:`acceleration_choice`)."""
        return rater_judgments(self.X, n_raters)

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
            weights = np.exp(logits.astype(np.float32))
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


#: ``acceleration`` values of :func:`run_em` (the first is the estimators' default; :func:`acceleration_choice`)
ACCELERATIONS = ("auto", "anderson", "squarem", "none")
#: how many past iterates Anderson acceleration combines (its depth m; :class:`AndersonHistory`)
ANDERSON_DEPTH = 5
#: Anderson hands over to plain EM after this many steps in a row without a new best objective. In exact
#: arithmetic every step improves (an accepted extrapolation is no lower than the current point, a plain EM step
#: is higher), so only rounding stalls it: with a tolerance finer than the objective's last digits resolve, the
#: extrapolations can cycle at the optimum forever, where plain EM reaches its fixed point and stops
ANDERSON_STALL = 2 * (ANDERSON_DEPTH + 1)
#: with ``acceleration="auto"``, Anderson acceleration needs at least this many stored judgments in all ...
ANDERSON_FROM = 250_000
#: ... and at least this many judgments by all but :data:`ANDERSON_SPARSE_SHARE` of the raters; else SQUAREM.
#: Measured (docs/scale.md, K = 3): with 500 or more judgments per rater Anderson needs up to half the E-steps of
#: SQUAREM and stops nearer the optimum; with 250 or fewer (sparse raters: confusion cells near 0, where EM crawls)
#: it needs more (twice as many at 60 per rater), as on every small public gold set (all under 1e5 judgments and
#: 250 per rater), which keep SQUAREM's results
ANDERSON_PER_RATER = 500
#: ... and a few sparse raters among prolific ones are enough to slow it: with 2% or more of the raters at 100
#: judgments it needed up to twice SQUAREM's E-steps (at 1e6 judgments), with 1% or fewer it still needed fewer
ANDERSON_SPARSE_SHARE = 0.01


def rater_judgments(X: sp.csr_matrix, n_raters: int) -> np.ndarray:
    """Judgments per rater (R,) of a response matrix (responses × rater·K + label).

    >>> rater_judgments(sp.csr_matrix(np.array([[1.0, 0, 0, 1], [0, 2, 0, 0]])), 2).tolist()
    [3.0, 1.0]
    """
    per_column = np.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    return per_column.reshape(n_raters, -1).sum(axis=1) if n_raters else np.zeros(0)


def acceleration_choice(acceleration: str, judgments_per_rater: np.ndarray | Callable[[], np.ndarray]) -> str:
    """The accelerator a fit with these judgments per rater (R,) runs: ``"auto"`` is ``"anderson"`` from
    :data:`ANDERSON_FROM` judgments in all when at most :data:`ANDERSON_SPARSE_SHARE` of the raters (those with
    any judgment) have fewer than :data:`ANDERSON_PER_RATER`, else ``"squarem"``; the others are themselves.
    ``judgments_per_rater`` may be a function returning them, called only for ``"auto"``.

    >>> acceleration_choice("auto", np.full(1000, 10_000)), acceleration_choice("auto", np.full(100_000, 100))
    ('anderson', 'squarem')
    >>> prolific_and_sparse = np.r_[np.full(900, 10_000), np.full(100, 100)]  # average 9,010, but 10% sparse
    >>> acceleration_choice("auto", prolific_and_sparse), acceleration_choice("none", np.full(1000, 10_000))
    ('squarem', 'none')
    """
    if acceleration not in ACCELERATIONS:
        raise ValueError(f"acceleration={acceleration!r}; allowed: {', '.join(ACCELERATIONS)}")
    if acceleration == "auto":
        judged = np.asarray(judgments_per_rater() if callable(judgments_per_rater) else judgments_per_rater)
        judged = judged[judged > 0]
        sparse = np.count_nonzero(judged < ANDERSON_PER_RATER)
        many = judged.sum() >= ANDERSON_FROM and sparse <= ANDERSON_SPARSE_SHARE * judged.size
        return "anderson" if many else "squarem"
    return acceleration


def run_em(
    X: sp.csr_matrix,
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

    Each EM step is one E-step (posteriors, marginal log-likelihood and the expected counts, fused per row block)
    and one M-step on those counts. Stops when one EM step improves the objective (log-likelihood plus log prior)
    by less than ``tol * max(1, |objective|)``, or after ``max_iter`` E-steps. ``acceleration="anderson"``
    (:meth:`_EMRun.anderson`) combines the last EM steps into one extrapolated point per E-step;
    ``"squarem"`` extrapolates along two EM steps (:func:`squarem_step`); ``"auto"`` picks one of them by the
    judgments of each rater in ``X`` (:func:`acceleration_choice`). Both keep an extrapolated point only
    when its objective is at least the current one, so the objective never decreases; the recorded history holds
    the accepted points only (``n_iter`` counts every E-step). ``kernel``: the E-step kernel of
    :class:`ResponseBlocks` (None: chosen from the size of ``X``).
    """
    if (init_posteriors is None) == (init_params is None):
        raise ValueError("give exactly one of init_posteriors and init_params")
    if acceleration not in ACCELERATIONS:
        raise ValueError(f"acceleration={acceleration!r}; allowed: {', '.join(ACCELERATIONS)}")
    blocks = ResponseBlocks(X, gold, threads, kernel)
    if init_posteriors is not None:
        counts = blocks.counts(init_posteriors)
        start = parameters_from_counts(init_posteriors.sum(axis=1), counts, n_raters, alpha_mu, alpha_pi)
    else:
        assert init_params is not None
        start = init_params
    posteriors = np.empty((n_levels, blocks.n_responses))
    run = _EMRun(blocks, posteriors, n_raters, alpha_mu, alpha_pi, max(1, max_iter), tol)
    final, converged = run.solve(start, acceleration)
    return EMResult(posteriors=posteriors, priors=final[0], confusion=final[1],
                    log_likelihood=np.asarray(run.likelihoods), objective=np.asarray(run.objectives),
                    n_iter=run.evaluations, converged=converged)


Params = tuple[np.ndarray, np.ndarray]


class _EMRun:
    """One EM run: evaluations (E-step into the posteriors buffer, then the M-step), the accepted history and the
    stopping rule, shared by the plain and the accelerated loop."""

    def __init__(self, blocks: ResponseBlocks, posteriors: np.ndarray, n_raters: int, alpha_mu: float,
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
        """Run to convergence (or ``max_iter``) from ``params`` with one of :data:`ACCELERATIONS` (``"auto"``
        chosen by the judgments of each rater, :func:`acceleration_choice`): the final parameters (their
        posteriors are in the buffer) and whether the run converged."""
        acceleration = acceleration_choice(acceleration, lambda: self.blocks.rater_judgments(self.n_raters))
        if acceleration == "anderson":
            return self.anderson(params)
        if acceleration == "squarem":
            return self.accelerated(params)
        if acceleration == "none":
            return self.plain(params)
        raise ValueError(f"acceleration={acceleration!r}; allowed: {', '.join(ACCELERATIONS)}")

    def plain(self, params: Params) -> tuple[Params, bool]:
        while True:
            objective, log_likelihood, following = self.evaluate(params)
            if self.accept(objective, log_likelihood):
                return params, True
            if self.spent:
                return params, False
            params = following

    def accelerated(self, params: Params) -> tuple[Params, bool]:
        """SQUAREM (Varadhan & Roland 2008, Scand. J. Stat. 35:335–353, scheme S3) with a monotone safeguard.

        From p0 two EM steps give p1 and p2; the extrapolation p0 − 2αr + α²v (r = p1 − p0, v = p2 − 2p1 + p0,
        α = −|r|/|v|, in log-probability coordinates so every row stays on the simplex) is kept when its objective
        is at least p2's, else the run goes on from p2. The step bound starts at 1 (no extrapolation), grows ×4
        when it binds and the point is kept, and shrinks ×4 on a rejection. Convergence is judged on the plain
        steps, as in :meth:`plain`.
        """
        step_max = 1.0
        objective, log_likelihood, p1 = self.evaluate(params)
        self.accept(objective, log_likelihood)
        p0 = params
        while True:
            if self.spent:
                return p0, False
            objective, log_likelihood, p2 = self.evaluate(p1)
            if self.accept(objective, log_likelihood):
                return p1, True
            if self.spent:
                return p1, False
            objective_2, log_likelihood_2, p3 = self.evaluate(p2)
            if self.accept(objective_2, log_likelihood_2):
                return p2, True
            alpha, extrapolated = squarem_step(p0, p1, p2, step_max)
            if extrapolated is None or self.spent:
                step_max *= 4.0 if alpha <= -step_max else 1.0
                p0, p1 = p2, p3
                continue
            objective_x, log_likelihood_x, following = self.evaluate(extrapolated)
            if np.isfinite(objective_x) and objective_x >= objective_2:
                self.objectives.append(objective_x)
                self.likelihoods.append(log_likelihood_x)
                step_max = step_max * 4.0 if alpha <= -step_max else step_max
                p0, p1 = extrapolated, following
            else:  # rejected: go on from p2 (its M-step is p3); the buffer is overwritten by the next E-step
                step_max = max(1.0, step_max / 4.0)
                p0, p1 = p2, p3
                if self.spent:  # the buffer holds the rejected point: put p2's posteriors back
                    self.evaluations -= 1
                    self.evaluate(p2)
                    return p2, False

    def anderson(self, params: Params) -> tuple[Params, bool]:
        """Anderson acceleration of the EM map (Anderson 1965, J. ACM 12(4):547–560; for fixed-point iterations
        as type-II Anderson mixing, Walker & Ni 2011, SIAM J. Numer. Anal. 49(4):1715–1735; for EM with a
        monotone safeguard and restarts, Henderson & Varadhan 2019, J. Comput. Graph. Stat. 28(4):834–846).

        Each E-step evaluates one point: the combination of the last :data:`ANDERSON_DEPTH` EM steps that best
        cancels their residuals (:class:`AndersonHistory`, in log-probability coordinates). The point is kept
        when its objective is at least the current one; else the history restarts and the run takes the plain EM
        step from the current point (its M-step is already known). One E-step per point instead of SQUAREM's
        three per cycle. Convergence is judged as in :meth:`plain`, on a plain EM step: when an extrapolated point
        improves by less than the tolerance, the next step is a plain one, and the run stops only if that one
        does too (an extrapolation can stall far from the optimum; a plain step does not). After
        :data:`ANDERSON_STALL` steps without a new best objective (rounding, at a tolerance finer than the
        objective resolves) the run goes on as plain EM.
        """
        objective, log_likelihood, image = self.evaluate(params)
        self.accept(objective, log_likelihood)
        history = AndersonHistory(ANDERSON_DEPTH)
        history.add(params, image)
        current, current_image, current_objective = params, image, objective
        check = False  # an extrapolated point improved by less than the tolerance: confirm with a plain step
        best, stalled = objective, 0
        while True:
            if self.spent:
                return current, False
            if stalled >= ANDERSON_STALL:  # rounding has the last word: plain EM ends the run as it would alone
                return self.plain(current_image)
            extrapolated = None if check else history.extrapolate()
            if extrapolated is not None:
                objective, log_likelihood, image = self.evaluate(extrapolated)
                if not (np.isfinite(objective) and objective >= current_objective):  # rejected: restart
                    history.clear()
                    extrapolated = None
                    if self.spent:  # the buffer holds the rejected point: put the current point's back
                        self.evaluations -= 1
                        self.evaluate(current)
                        return current, False
            plain = extrapolated is None
            if extrapolated is None:  # the plain EM step
                candidate = current_image
                objective, log_likelihood, image = self.evaluate(candidate)
            else:
                candidate = extrapolated
            small = self.accept(objective, log_likelihood)
            history.add(candidate, image)
            current, current_image, current_objective = candidate, image, objective
            best, stalled = (objective, 0) if objective > best else (best, stalled + 1)
            if small and plain:
                return current, True
            check = small


def log_coordinates(params: Params) -> np.ndarray:
    """The class priors and confusion matrices as one vector of log-probabilities (where the accelerators
    extrapolate: every point maps back onto the simplices by :func:`from_log_coordinates`)."""
    priors, confusion = params
    return np.concatenate([np.log(np.maximum(priors, 1e-300)), np.log(np.maximum(confusion, 1e-300)).ravel()])


def from_log_coordinates(point: np.ndarray, like: Params) -> Params:
    """(priors, confusion) shaped as ``like`` from a vector of unnormalised log-probabilities, each distribution
    normalised (a softmax per row)."""
    k = like[0].size
    log_priors, log_confusion = point[:k], point[k:].reshape(like[1].shape)
    priors = np.exp(log_priors - log_priors.max())
    confusion = np.exp(log_confusion - log_confusion.max(axis=-1, keepdims=True))
    return priors / priors.sum(), confusion / confusion.sum(axis=-1, keepdims=True)


class AndersonHistory:
    """The last ``depth + 1`` EM steps (point x_j and its EM image G(x_j), in :func:`log_coordinates`) and the
    Anderson (type II) extrapolation from them: with residuals f_j = G(x_j) − x_j, the coefficients gamma
    minimise |f_k − ΔF gamma| over the differences of consecutive residuals, and the next point is
    G(x_k) − (ΔX + ΔF) gamma. A linear map is solved exactly once the history spans its residuals:

    >>> A = np.array([[0.5, 0.2], [0.1, 0.3]]); b = np.array([1.0, 2.0])      # x -> A x + b, fixed point x*
    >>> history, x = AndersonHistory(2), np.zeros(2)
    >>> for _ in range(3):
    ...     history.add_vectors(x, A @ x + b)
    ...     x = history.extrapolate_vector() if len(history) > 1 else A @ x + b
    >>> np.allclose(x, np.linalg.solve(np.eye(2) - A, b))
    True
    """

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.points: list[np.ndarray] = []
        self.residuals: list[np.ndarray] = []
        self.images: list[np.ndarray] = []
        self.like: Params | None = None

    def __len__(self) -> int:
        return len(self.points)

    def clear(self) -> None:
        """Forget every step (a restart)."""
        self.points.clear()
        self.residuals.clear()
        self.images.clear()

    def add(self, params: Params, image: Params) -> None:
        """Record one EM step: ``params`` and the M-step of its E-step."""
        self.like = params
        self.add_vectors(log_coordinates(params), log_coordinates(image))

    def add_vectors(self, point: np.ndarray, image: np.ndarray) -> None:
        """Record one step of the fixed-point map in its own coordinates."""
        self.points.append(point)
        self.images.append(image)
        self.residuals.append(image - point)
        if len(self.points) > self.depth + 1:
            del self.points[0], self.images[0], self.residuals[0]

    def extrapolate(self) -> Params | None:
        """The next point as (priors, confusion), or None while the history holds a single step (or its
        residual differences are degenerate)."""
        if len(self.points) < 2 or self.like is None:
            return None
        point = self.extrapolate_vector()
        return None if point is None else from_log_coordinates(point, self.like)

    def extrapolate_vector(self) -> np.ndarray | None:
        """The next point in the map's coordinates (None if the least-squares problem is degenerate)."""
        d_residuals = np.stack([b - a for a, b in itertools.pairwise(self.residuals)], axis=1)  # (p, m)
        d_points = np.stack([b - a for a, b in itertools.pairwise(self.points)], axis=1)
        # the m × m normal equations by einsum, not BLAS: a BLAS call wakes its thread pool, which then spins
        # against the E-step's worker threads (see squarem_step)
        gram = np.einsum("ij,ik->jk", d_residuals, d_residuals)
        scale = float(np.trace(gram))
        if not np.isfinite(scale) or scale <= 0.0:
            return None
        gram[np.diag_indices_from(gram)] += 1e-12 * scale  # a tiny ridge: nearly parallel differences
        try:
            gamma = np.linalg.solve(gram, np.einsum("ij,i->j", d_residuals, self.residuals[-1]))
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(gamma)):
            return None
        return np.asarray(self.images[-1] - ((d_points + d_residuals) * gamma).sum(axis=1))


def squarem_step(p0: Params, p1: Params, p2: Params, step_max: float) -> tuple[float, Params | None]:
    """The SQUAREM extrapolation of two EM steps in log-probability coordinates: (alpha, the new point), or
    (alpha, None) when alpha is -1 (the extrapolation would be p2 itself).

    >>> p0 = (np.array([0.5, 0.5]), np.full((1, 2, 2), 0.5))
    >>> p1 = (np.array([0.6, 0.4]), np.full((1, 2, 2), 0.5))
    >>> p2 = (np.array([0.65, 0.35]), np.full((1, 2, 2), 0.5))
    >>> alpha, (priors, _) = squarem_step(p0, p1, p2, step_max=4.0)
    >>> round(alpha, 3), priors.round(3).tolist()
    (-2.119, [0.702, 0.298])
    """
    logs = [np.concatenate([np.log(np.maximum(priors, 1e-300)), np.log(np.maximum(confusion, 1e-300)).ravel()])
            for priors, confusion in (p0, p1, p2)]
    r = logs[1] - logs[0]
    v = logs[2] - 2.0 * logs[1] + logs[0]
    # plain sums, not BLAS dot products: a BLAS call wakes its thread pool, which then spins against the E-step's
    # worker threads (measured: 2-3x slower fits on 2 cores)
    vv = float(np.square(v).sum())
    if vv <= 0.0:
        return -1.0, None
    alpha = float(max(min(-np.sqrt(float(np.square(r).sum()) / vv), -1.0), -step_max))
    if alpha == -1.0:
        return alpha, None
    point = logs[0] - 2.0 * alpha * r + alpha * alpha * v
    k = p0[0].size
    log_priors, log_confusion = point[:k], point[k:].reshape(p0[1].shape)
    priors = np.exp(log_priors - log_priors.max())
    confusion = np.exp(log_confusion - log_confusion.max(axis=-1, keepdims=True))
    return alpha, (priors / priors.sum(), confusion / confusion.sum(axis=-1, keepdims=True))



def vote_counts(X: sp.csr_matrix, n_levels: int) -> np.ndarray:
    """(N, K) label counts per response from the response matrix (column r·K+o holds level o)."""
    X = X.tocsr()
    levels = sp.csr_matrix((X.data, X.indices % n_levels, X.indptr), shape=(X.shape[0], n_levels))
    return np.asarray(levels.toarray())
