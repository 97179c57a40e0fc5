"""An ordinal rater model: Dawid–Skene whose confusion rows are ordered-probit, with a leniency shift and a spread.

Rating scales are ordered (1–5; incorrect < partial < correct), but Dawid–Skene and STABLEVAL treat the levels as
unordered labels: a rater who says 4 for a true 5 is as wrong as one who says 1. Here a rater is a noisy,
possibly biased reader of the true level. Response i has a latent level z_i ~ Categorical(mu) on 0..K-1; rater r
sees z_i + b_r + s_r e with e ~ N(0, 1) and reports the level whose interval holds it, the cut points sitting
half-way between levels (c_l = l + 1/2):

    P(given = l | true = k) = Phi((c_l - k - b_r) / s_r) - Phi((c_{l-1} - k - b_r) / s_r),   c_{-1} = -inf,
    c_{K-1} = +inf.

b_r is the rater's shift (> 0: lenient, reads levels higher than they are; < 0: strict) and s_r their spread
(noise, in levels). Priors: b_r ~ N(0, shift_sd^2), log s_r ~ N(log spread, spread_sd^2), mu ~ Dirichlet(alpha_mu);
the MAP estimate is found by EM. The E-step is Dawid–Skene's on the implied confusion matrices; the M-step is, for
every rater at once, damped Newton steps with a halving line search on the two parameters (b_r, log s_r) — the
expected complete log-likelihood splits into one two-parameter ordered-probit fit per rater, so the gradient and
Hessian are (R, 2) and (R, 2, 2) arrays computed in closed form (a generalised EM: the log posterior never
decreases). A response earns its posterior expected credit, as with STABLEVAL.

By default (``strength="auto"``) a second stage frees the confusion rows again: every row of every rater gets a
Dirichlet(1 + c q_r[k]) prior centred on its fitted ordered-probit row q_r[k], with c (pseudo-judgments per row)
chosen by the Dirichlet-multinomial evidence of the first stage's expected counts (:func:`ordinal_strength`), and
MAP EM runs on the free rows (the shared kernel, :func:`~stableval.aggregate.em.run_em`, with SQUAREM). It is
STABLEVAL with a prior that favours the cells near each rater's shifted diagonal: a rater with few judgments
keeps close to the ordinal shape, one with hundreds follows their own counts. ``strength=inf`` keeps the first
stage only, ``strength=0`` is MAP Dawid–Skene.

Why this shape: two numbers per rater instead of K(K-1) make sparse raters estimable and their errors land next to
the truth; the levels are identified by their order, so there is no label switching (with K = 2 it is a two-coin
Dawid–Skene whose raters are all better than chance). The price: a rater whose errors are not unimodal around the
truth (one who confuses the two ends of the scale, or labels everything "G" on a 4-level adult-content scale) is
described worse than by a free confusion matrix; the second stage lets such raters leave the shape
(docs/accuracy.md says where the model helps and where it costs accuracy).

Sources: latent classes and EM, A. P. Dawid and A. M. Skene (1979), JRSS C 28(1):20–28; the ordered-probit link,
R. D. McKelvey and W. Zavoina (1975), "A statistical model for the analysis of ordinal level dependent variables",
Journal of Mathematical Sociology 4(1):103–120; raters with their own shift and spread on an ordinal scale, V. E.
Johnson (1996), "On Bayesian analysis of multirater ordinal data: an application to automated essay grading",
JASA 91(433):42–51 (there the item's trait is continuous; here it is one of the K levels, as in Dawid–Skene); the
evidence for the prior's strength, T. P. Minka (2000), "Estimating a Dirichlet distribution", technical report.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], "agent": "A", "rater": list("abc") * 4,
...                       "label": [2, 2, 1, 0, 0, 0, 1, 2, 1, 1, 1, 0]})   # rater c reads one level low
>>> model = OrdinalRaters().fit(AnnotationTable.from_frame(frame, levels=("bad", "ok", "good")))
>>> model.posteriors_.argmax(axis=1).tolist(), model.shift_.round(1).tolist(), bool(model.converged_)
([2, 0, 2, 1], [-0.3, 0.0, -0.9], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from scipy.special import log_ndtr

from stableval.aggregate._base import Aggregator, clamp_gold, hard_distribution
from stableval.aggregate.em import EStep, run_em
from stableval.aggregate.em_fit import em_fit_summary
from stableval.aggregate.methods import declared

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate.responses import ResponseMatrix

__all__ = ["METHOD", "OrdinalRaters", "ordinal_confusion", "ordinal_strength", "rater_objective"]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
#: Newton steps per M-step at most, step halvings per Newton step at most, and the largest step in either
#: parameter (shift in levels, log spread)
_NEWTON_STEPS, _HALVINGS, _MAX_STEP = 20, 30, 2.0


def _bounds(n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(K, K) upper and lower cut point minus the true level, [true k, given l]: c_l - k and c_{l-1} - k."""
    cuts = np.concatenate([[-np.inf], np.arange(n_levels - 1) + 0.5, [np.inf]])
    true = np.arange(n_levels)[:, None]
    return cuts[None, 1:] - true, cuts[None, :-1] - true


def _log_interval(upper: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """log(Phi(upper) - Phi(lower)), accurate in both tails (the upper tail through the survival function)."""
    right = lower > 0  # both in the upper tail: Phi(-lower) - Phi(-upper)
    hi = np.where(right, -lower, upper)
    lo = np.where(right, -upper, lower)
    log_hi = log_ndtr(hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(log_hi + np.log1p(-np.exp(np.minimum(log_ndtr(lo) - log_hi, 0.0))))


def _cells(shift: np.ndarray, log_spread: np.ndarray, n_levels: int) -> tuple[np.ndarray, ...]:
    """Per (rater, true, given): log P, and the standardised cut points u1 (upper), u0 (lower) with
    g1 = phi(u1)/P, g0 = -phi(u0)/P (the derivatives of log P by u1 and u0; 0 at an infinite cut point)."""
    upper, lower = _bounds(n_levels)
    inv = np.exp(-log_spread)[:, None, None]
    u1 = (upper[None] - shift[:, None, None]) * inv
    u0 = (lower[None] - shift[:, None, None]) * inv
    log_p = _log_interval(u1, u0)
    finite1, finite0 = np.isfinite(u1), np.isfinite(u0)
    u1, u0 = np.where(finite1, u1, 0.0), np.where(finite0, u0, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):  # P underflowed: log P = -inf, a point never accepted
        g1 = np.where(finite1, np.exp(-0.5 * u1 * u1 - _LOG_SQRT_2PI - log_p), 0.0)
        g0 = np.where(finite0, -np.exp(-0.5 * u0 * u0 - _LOG_SQRT_2PI - log_p), 0.0)
    g1, g0 = np.where(np.isfinite(g1), g1, 0.0), np.where(np.isfinite(g0), g0, 0.0)
    return log_p, u1, u0, g1, g0


def ordinal_confusion(shift: np.ndarray, spread: np.ndarray, n_levels: int) -> np.ndarray:
    """(R, K, K) confusion matrices [rater, true, given] of raters with these shifts and spreads.

    >>> ordinal_confusion(np.array([0.0, 1.0]), np.array([0.5, 0.5]), 3).round(3).tolist()[1]
    [[0.159, 0.683, 0.159], [0.001, 0.157, 0.841], [0.0, 0.001, 0.999]]
    """
    log_p = _cells(np.asarray(shift, float), np.log(np.asarray(spread, float)), n_levels)[0]
    confusion = np.exp(log_p)
    return np.asarray(confusion / confusion.sum(axis=2, keepdims=True))


def rater_objective(counts: np.ndarray, shift: np.ndarray, log_spread: np.ndarray, shift_sd: float,
                    log_spread_centre: float, spread_sd: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each rater's M-step objective — expected complete log-likelihood sum_{k,l} n[r,k,l] log P_r(l | k) plus the
    log priors of b_r and log s_r — with its gradient (R, 2) and Hessian (R, 2, 2) in (b_r, log s_r).

    ``counts`` (R, K, K) are the expected counts [rater, true, given]. With u = (c - k - b) e^{-t} (t = log s):
    du/db = -e^{-t}, du/dt = -u, d2u/db dt = e^{-t}, d2u/dt2 = u, and per cell d log P / du1 = g1,
    d log P / du0 = g0, d2 log P / du_i du_j = -u_i g_i [i = j] - g_i g_j.
    """
    log_p, u1, u0, g1, g0 = _cells(shift, log_spread, counts.shape[2])
    n = counts
    inv = np.exp(-log_spread)
    used = n > 0  # cells without counts contribute nothing (and may have log P = -inf far in a tail)
    value = np.where(used, n * log_p, 0.0).sum(axis=(1, 2))
    h11, h00, h10 = -u1 * g1 - g1 * g1, -u0 * g0 - g0 * g0, -g1 * g0
    grad_b = -inv * (n * (g1 + g0)).sum(axis=(1, 2))
    grad_t = -(n * (g1 * u1 + g0 * u0)).sum(axis=(1, 2))
    h_bb = inv * inv * (n * (h11 + 2.0 * h10 + h00)).sum(axis=(1, 2))
    h_bt = inv * (n * (u1 * (h11 + h10) + u0 * (h10 + h00) + g1 + g0)).sum(axis=(1, 2))
    h_tt = (n * (u1 * u1 * h11 + 2.0 * u1 * u0 * h10 + u0 * u0 * h00 + g1 * u1 + g0 * u0)).sum(axis=(1, 2))
    centred = log_spread - log_spread_centre
    value = value - 0.5 * (shift / shift_sd) ** 2 - 0.5 * (centred / spread_sd) ** 2
    grad = np.stack([grad_b - shift / shift_sd**2, grad_t - centred / spread_sd**2], axis=1)
    hessian = np.stack([np.stack([h_bb - 1.0 / shift_sd**2, h_bt], axis=1),
                        np.stack([h_bt, h_tt - 1.0 / spread_sd**2], axis=1)], axis=1)
    return value, grad, hessian


def ordinal_strength(counts: np.ndarray, shape: np.ndarray) -> float:
    """The empirical-Bayes strength c of the Dirichlet prior Dirichlet(c q_r[k]) centred on each rater's ordinal
    row q_r[k]: the c maximising the Dirichlet-multinomial evidence of the expected counts ``counts`` (R, K, K)
    [rater, true, given] (Minka 2000, "Estimating a Dirichlet distribution", with the mean fixed), searched on
    :data:`~stableval.aggregate.em_priors.STRENGTHS` (0.01 to 10,000, steps of about 6%). Rows without counts carry no
    evidence. Counts that follow the ordinal rows give a large c, counts that leave them a small one.

    >>> shape = ordinal_confusion(np.zeros(2), np.full(2, 0.5), 3)
    >>> ordinal_strength(100 * shape, shape) > 1000, ordinal_strength(100 * shape[:, ::-1], shape) < 1
    (True, True)
    """
    from scipy.special import gammaln

    from stableval.aggregate.em_priors import STRENGTHS

    k = counts.shape[-1]
    rows, means = counts.reshape(-1, k), np.maximum(shape.reshape(-1, k), 1e-12)
    used = rows.sum(axis=1) > 0
    rows, means = rows[used], means[used] / means[used].sum(axis=1, keepdims=True)
    if not len(rows):
        return 1.0
    evidence = np.empty(len(STRENGTHS))
    totals = rows.sum(axis=1)
    for j, c in enumerate(STRENGTHS):  # 241 grid points, each vectorised over every row
        a = c * means
        evidence[j] = (len(rows) * gammaln(c) - gammaln(totals + c).sum()
                       + (gammaln(rows + a) - gammaln(a)).sum())
    return float(STRENGTHS[int(evidence.argmax())])


@dataclass
class _Run:
    """One EM run: the posteriors buffer (K, N), the rater parameters, the class priors and the history."""

    posteriors: np.ndarray
    shift: np.ndarray
    log_spread: np.ndarray
    priors: np.ndarray
    likelihoods: list[float] = field(default_factory=list)
    objectives: list[float] = field(default_factory=list)
    converged: bool = False


#: the declaration this estimator reads (its hyper-parameters: :attr:`OrdinalRaters.PARAMETERS`)
METHOD = declared("ordinal")


class OrdinalRaters(Aggregator):
    """Ordered-probit raters with a leniency shift and a spread each, fitted by MAP EM (see the module docstring).

    Hyper-parameters: :attr:`PARAMETERS`. ``strength`` c makes each rater's rows free with a Dirichlet(1 + c
    q_r[k]) prior centred on the fitted ordered-probit row q_r[k] (c pseudo-judgments per row; ``"auto"``: c by
    empirical Bayes, :func:`ordinal_strength`).

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,), ``shift_`` (R,) (> 0 lenient, < 0 strict),
    ``spread_`` (R,) (the first stage's ordinal reading of each rater), ``strength_`` (the c used; ``inf`` = first
    stage only), ``confusion_`` (R, K, K) [rater, true, given] (the MAP rows of the second stage, or the ordinal rows
    with ``strength=inf``), ``log_likelihood_`` and
    ``objective_`` (the last stage's history: log-likelihood and log posterior, non-decreasing), ``n_iter_`` (E-steps
    of both stages), ``converged_``, ``start_`` (the
    winning start) and ``starts_`` (each start's objective, log-likelihood, E-steps and convergence; every start is
    anchored to the votes, so all are ``admissible``).
    """

    PARAMETERS = METHOD.params

    def __init__(self, shift_sd: float = 1.0, spread: float = 0.5, spread_sd: float = 1.0, alpha_mu: float = 1.01,
                 strength: float | str = "auto", init: str = "best", max_iter: int = 500, tol: float = 1e-8) -> None:
        self._set_checked(shift_sd=shift_sd, spread=spread, spread_sd=spread_sd, alpha_mu=alpha_mu,
                          strength=strength, init=init, max_iter=max_iter, tol=tol)

    def _raters_m_step(self, counts: np.ndarray, shift: np.ndarray,
                       log_spread: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raise every rater's objective by damped Newton steps from (shift, log_spread); returns the new values and
        the objective per rater. A step is halved (rater by rater) until the objective does not fall; a rater stops
        once its Newton step predicts a gain below 1e-10 (relative), so converged raters cost nothing more."""
        prior = (self.shift_sd, float(np.log(self.spread)), self.spread_sd)
        shift, log_spread = shift.copy(), log_spread.copy()
        value, grad, hessian = rater_objective(counts, shift, log_spread, *prior)
        active = np.arange(len(shift))
        for _ in range(_NEWTON_STEPS):
            h, g = hessian[active], grad[active]
            # make each 2x2 Hessian negative definite (shift its spectrum below zero where needed), then solve
            trace = h[:, 0, 0] + h[:, 1, 1]
            det = h[:, 0, 0] * h[:, 1, 1] - h[:, 0, 1] ** 2
            top = 0.5 * trace + np.sqrt(np.maximum(0.25 * trace * trace - det, 0.0))
            damp = np.where(top > -1e-8, top + 1e-3 * (1.0 + np.abs(trace)), 0.0)
            step = -np.linalg.solve(h - damp[:, None, None] * np.eye(2), g[:, :, None])[:, :, 0]
            step *= np.minimum(1.0, _MAX_STEP / np.maximum(np.abs(step).max(axis=1), 1e-300))[:, None]
            gain = (g * step).sum(axis=1)  # the first-order gain of the full step
            keep = gain > 1e-10 * (1.0 + np.abs(value[active]))
            active, step = active[keep], step[keep]
            scale = np.ones(len(active))
            trying, moved = np.ones(len(active), dtype=bool), np.zeros(len(active), dtype=bool)
            for _halving in range(_HALVINGS):
                rows = active[trying]
                trial_b = shift[rows] + scale[trying] * step[trying, 0]
                trial_t = log_spread[rows] + scale[trying] * step[trying, 1]
                trial = rater_objective(counts[rows], trial_b, trial_t, *prior)
                better = trial[0] >= value[rows]
                up = rows[better]
                shift[up], log_spread[up], value[up] = trial_b[better], trial_t[better], trial[0][better]
                grad[up], hessian[up] = trial[1][better], trial[2][better]
                where = np.flatnonzero(trying)
                moved[where[better]] = True
                trying[where[better]] = False
                if not trying.any():
                    break
                scale[trying] *= 0.5
            active = active[moved]
            if not active.size:
                break
        return shift, log_spread, value

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned: every stage runs on its E-step and expected
        counts."""
        k, n_raters, gold = responses.n_levels, responses.n_raters, responses.gold
        blocks = responses.e_steps()
        votes = responses.vote_counts()
        shares = votes / np.maximum(votes.sum(axis=1, keepdims=True), 1.0)
        starts = {"soft": shares, "hard": hard_distribution(votes, atol=0.0)}
        chosen = list(starts) if self.init == "best" else [self.init]
        best: _Run | None = None
        self.starts_ = []
        for name in chosen:
            start = starts[name].copy()
            clamp_gold(start, gold)
            start[start.sum(axis=1) == 0] = 1.0 / k
            run = self._run(blocks, np.ascontiguousarray(start.T), n_raters, k)
            run.posteriors = blocks.final_posteriors(run.posteriors)  # on a cluster: gathered from the workers
            self.starts_.append({"start": name, "objective": run.objectives[-1],
                                 "log_likelihood": run.likelihoods[-1], "n_iter": len(run.objectives),
                                 "converged": run.converged, "admissible": True})
            if best is None or run.objectives[-1] > best.objectives[-1]:
                best, self.start_ = run, name
        assert best is not None
        self.posteriors_ = best.posteriors.T
        self.priors_ = best.priors
        self.shift_ = best.shift
        self.spread_ = np.exp(best.log_spread)
        self.confusion_ = ordinal_confusion(best.shift, self.spread_, k)
        self.log_likelihood_ = np.asarray(best.likelihoods)
        self.objective_ = np.asarray(best.objectives)
        self.n_iter_ = len(best.objectives)
        self.converged_ = best.converged
        self.strength_ = np.inf
        if self.strength != np.inf:
            self._shrink(responses, blocks, shares)
        return self

    def _shrink(self, responses: ResponseMatrix, blocks: EStep, shares: np.ndarray) -> None:
        """Second stage: free confusion rows under a Dirichlet prior centred on the fitted ordinal rows, MAP EM from
        the ordinal posteriors and from the vote shares (the higher log posterior wins)."""
        k, n_raters = responses.n_levels, responses.n_raters
        shape = np.asarray(self.confusion_)
        if self.strength == "auto":
            rows = responses.expected_rows(np.asarray(self.posteriors_)).reshape(n_raters, k, k)
            self.strength_ = ordinal_strength(rows, shape)
        else:
            self.strength_ = float(self.strength)
        alpha_pi = 1.0 + self.strength_ * shape
        base = len(self.objective_)
        best = None
        for name, start in (("ordinal", np.asarray(self.posteriors_)), ("soft", shares)):
            result = run_em(blocks, n_raters=n_raters, n_levels=k, init_posteriors=np.ascontiguousarray(start.T),
                            alpha_mu=self.alpha_mu, alpha_pi=alpha_pi, max_iter=self.max_iter, tol=self.tol,
                            acceleration="squarem")
            self.starts_.append({"start": f"shrunk from {name}", "objective": float(result.objective[-1]),
                                 "log_likelihood": float(result.log_likelihood[-1]), "n_iter": int(result.n_iter),
                                 "converged": bool(result.converged), "admissible": True})
            if best is None or result.objective[-1] > best.objective[-1]:
                best, self.start_ = result, f"shrunk from {name}"
        assert best is not None
        self.posteriors_ = best.posteriors.T
        self.priors_ = best.priors
        self.confusion_ = best.confusion
        self.log_likelihood_ = best.log_likelihood
        self.objective_ = best.objective
        self.n_iter_ = base + int(best.n_iter)
        self.converged_ = bool(best.converged)

    def _run(self, blocks: EStep, posteriors: np.ndarray, n_raters: int, k: int) -> _Run:
        """EM from class-major (K, N) ``posteriors`` (an M-step first), until the log posterior settles."""
        mass, expected = posteriors.sum(axis=1), blocks.counts(posteriors)
        run = _Run(posteriors, np.zeros(n_raters), np.full(n_raters, np.log(self.spread)), np.full(k, 1.0 / k))
        for _ in range(self.max_iter):
            run.priors = (mass + self.alpha_mu - 1.0) / (mass.sum() + k * (self.alpha_mu - 1.0))
            counts = expected.reshape(k, n_raters, k).transpose(1, 0, 2)
            run.shift, run.log_spread, _ = self._raters_m_step(counts, run.shift, run.log_spread)
            confusion = ordinal_confusion(run.shift, np.exp(run.log_spread), k)
            log_likelihood, mass, expected = blocks.e_step(run.priors, confusion, run.posteriors)
            objective = log_likelihood + self._log_prior(run.priors, run.shift, run.log_spread)
            run.likelihoods.append(log_likelihood)
            run.objectives.append(objective)
            if len(run.objectives) > 1 and abs(objective - run.objectives[-2]) <= self.tol * max(1.0, abs(objective)):
                run.converged = True
                break
        return run

    def _log_prior(self, priors: np.ndarray, shift: np.ndarray, log_spread: np.ndarray) -> float:
        """Log density (up to a constant) of the priors on the class priors, shifts and log spreads."""
        centred = log_spread - np.log(self.spread)
        rater_term = -0.5 * float(np.sum((shift / self.shift_sd) ** 2) + np.sum((centred / self.spread_sd) ** 2))
        return float(self.alpha_mu - 1.0) * float(np.log(np.maximum(priors, 1e-300)).sum()) + rater_term

    def fit_summary(self) -> dict[str, Any]:
        return em_fit_summary(self)
