"""Accelerated EM: SQUAREM and Anderson acceleration of the EM map, and the choice between them.

Plain EM (:func:`stableval.aggregate.em.run_em` with ``acceleration="none"``) takes one E-step per step and crawls
where the likelihood is flat. The accelerators below drive the same iteration (:class:`Iteration`: an E-step and
M-step per evaluated point, the accepted history and the stopping rule) towards the same fixed point in fewer
E-steps, keeping an extrapolated point only when its objective is at least the current one:

* :func:`squarem` (Varadhan & Roland 2008) extrapolates along two EM steps;
* :func:`anderson` (Anderson 1965; Henderson & Varadhan 2019) combines the last :data:`ANDERSON_DEPTH` steps
  (:class:`AndersonHistory`) into one extrapolated point per E-step;
* :func:`acceleration_choice` resolves ``"auto"`` from the judgments of each rater.

>>> acceleration_choice("auto", np.full(1000, 10_000))
'anderson'
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Protocol

import numpy as np

from stableval.aggregate.parameters import ACCELERATIONS

__all__ = [
    "ACCELERATIONS",
    "ANDERSON_DEPTH",
    "ANDERSON_FROM",
    "ANDERSON_PER_RATER",
    "ANDERSON_SPARSE_SHARE",
    "ANDERSON_STALL",
    "AndersonHistory",
    "Iteration",
    "Params",
    "acceleration_choice",
    "anderson",
    "from_log_coordinates",
    "log_coordinates",
    "squarem",
    "squarem_step",
]

#: one point of the EM map: (class priors (K,), confusion matrices (R, K, K))
Params = tuple[np.ndarray, np.ndarray]


class Iteration(Protocol):
    """The EM iteration an accelerator drives (:class:`stableval.aggregate.em.EMIteration`): ``evaluate`` runs the
    E-step at a point (its posteriors into the run's buffer) and returns the objective, the log-likelihood and
    the M-step's point; ``accept`` records an accepted point and says whether it improved by less than the
    tolerance; ``spent`` says the E-step budget is used up; ``plain`` runs unaccelerated EM from a point."""

    objectives: list[float]
    likelihoods: list[float]
    evaluations: int

    def evaluate(self, params: Params) -> tuple[float, float, Params]: ...

    def accept(self, objective: float, log_likelihood: float) -> bool: ...

    @property
    def spent(self) -> bool: ...

    def plain(self, params: Params) -> tuple[Params, bool]: ...


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
#: Measured (docs/benchmarks/em.md, K = 3): with 500 or more judgments per rater Anderson needs up to half the
#: E-steps of SQUAREM and stops nearer the optimum; with 250 or fewer (sparse raters: confusion cells near 0, where
#: EM crawls) it needs more (twice as many at 60 per rater), as on every small public gold set (all under 1e5
#: judgments and 250 per rater), which keep SQUAREM's results
ANDERSON_PER_RATER = 500
#: ... and a few sparse raters among prolific ones are enough to slow it: with 2% or more of the raters at 100
#: judgments it needed up to twice SQUAREM's E-steps (at 1e6 judgments), with 1% or fewer it still needed fewer
ANDERSON_SPARSE_SHARE = 0.01


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


def squarem(run: Iteration, params: Params) -> tuple[Params, bool]:
    """SQUAREM (Varadhan & Roland 2008, Scand. J. Stat. 35:335–353, scheme S3) with a monotone safeguard.

    From p0 two EM steps give p1 and p2; the extrapolation p0 − 2αr + α²v (r = p1 − p0, v = p2 − 2p1 + p0,
    α = −|r|/|v|, in log-probability coordinates so every row stays on the simplex) is kept when its objective
    is at least p2's, else the run goes on from p2. The step bound starts at 1 (no extrapolation), grows ×4
    when it binds and the point is kept, and shrinks ×4 on a rejection. Convergence is judged on the plain
    steps, as in :meth:`Iteration.plain`.
    """
    step_max = 1.0
    objective, log_likelihood, p1 = run.evaluate(params)
    run.accept(objective, log_likelihood)
    p0 = params
    while True:
        if run.spent:
            return p0, False
        objective, log_likelihood, p2 = run.evaluate(p1)
        if run.accept(objective, log_likelihood):
            return p1, True
        if run.spent:
            return p1, False
        objective_2, log_likelihood_2, p3 = run.evaluate(p2)
        if run.accept(objective_2, log_likelihood_2):
            return p2, True
        alpha, extrapolated = squarem_step(p0, p1, p2, step_max)
        if extrapolated is None or run.spent:
            step_max *= 4.0 if alpha <= -step_max else 1.0
            p0, p1 = p2, p3
            continue
        objective_x, log_likelihood_x, following = run.evaluate(extrapolated)
        if np.isfinite(objective_x) and objective_x >= objective_2:
            run.objectives.append(objective_x)
            run.likelihoods.append(log_likelihood_x)
            step_max = step_max * 4.0 if alpha <= -step_max else step_max
            p0, p1 = extrapolated, following
        else:  # rejected: go on from p2 (its M-step is p3); the buffer is overwritten by the next E-step
            step_max = max(1.0, step_max / 4.0)
            p0, p1 = p2, p3
            if run.spent:  # the buffer holds the rejected point: put p2's posteriors back
                run.evaluations -= 1
                run.evaluate(p2)
                return p2, False


def anderson(run: Iteration, params: Params) -> tuple[Params, bool]:
    """Anderson acceleration of the EM map (Anderson 1965, J. ACM 12(4):547–560; for fixed-point iterations
    as type-II Anderson mixing, Walker & Ni 2011, SIAM J. Numer. Anal. 49(4):1715–1735; for EM with a
    monotone safeguard and restarts, Henderson & Varadhan 2019, J. Comput. Graph. Stat. 28(4):834–846).

    Each E-step evaluates one point: the combination of the last :data:`ANDERSON_DEPTH` EM steps that best
    cancels their residuals (:class:`AndersonHistory`, in log-probability coordinates). The point is kept
    when its objective is at least the current one; else the history restarts and the run takes the plain EM
    step from the current point (its M-step is already known). One E-step per point instead of SQUAREM's
    three per cycle. Convergence is judged as in :meth:`Iteration.plain`, on a plain EM step: when an extrapolated point
    improves by less than the tolerance, the next step is a plain one, and the run stops only if that one
    does too (an extrapolation can stall far from the optimum; a plain step does not). After
    :data:`ANDERSON_STALL` steps without a new best objective (rounding, at a tolerance finer than the
    objective resolves) the run goes on as plain EM.
    """
    objective, log_likelihood, image = run.evaluate(params)
    run.accept(objective, log_likelihood)
    history = AndersonHistory(ANDERSON_DEPTH)
    history.add(params, image)
    current, current_image, current_objective = params, image, objective
    check = False  # an extrapolated point improved by less than the tolerance: confirm with a plain step
    best, stalled = objective, 0
    while True:
        if run.spent:
            return current, False
        if stalled >= ANDERSON_STALL:  # rounding has the last word: plain EM ends the run as it would alone
            return run.plain(current_image)
        extrapolated = None if check else history.extrapolate()
        if extrapolated is not None:
            objective, log_likelihood, image = run.evaluate(extrapolated)
            if not (np.isfinite(objective) and objective >= current_objective):  # rejected: restart
                history.clear()
                extrapolated = None
                if run.spent:  # the buffer holds the rejected point: put the current point's back
                    run.evaluations -= 1
                    run.evaluate(current)
                    return current, False
        plain = extrapolated is None
        if extrapolated is None:  # the plain EM step
            candidate = current_image
            objective, log_likelihood, image = run.evaluate(candidate)
        else:
            candidate = extrapolated
        small = run.accept(objective, log_likelihood)
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
