"""GLAD: rater ability × response difficulty, fitted by EM with a conjugate-gradient M-step.

Source: J. Whitehill, P. Ruvolo, T. Wu, J. Bergsma and J. Movellan (2009), "Whose Vote Should Count More: Optimal
Integration of Labels from Labelers of Unknown Expertise", Advances in Neural Information Processing Systems 22
(NIPS 2009). Model: response i has a latent level z_i with fixed class priors p (uniform unless given); rater r has
ability alpha_r in (-inf, inf) and response i an inverse difficulty beta_i = exp(b_i) > 0; the rater is right with
probability sigma(alpha_r · beta_i) and otherwise gives any of the K − 1 wrong levels with equal probability (the
multi-class form of the paper's Section 3, as crowd-kit implements it). EM: the E-step is exact; the M-step
maximises the expected complete log-likelihood plus Gaussian priors N(1, 1) on every alpha_r and on every log
inverse difficulty b_i by conjugate gradients (scipy's ``CG``, a few steps per EM iteration), stopping when the
mean expected log-likelihood per (judgment, level) improves by less than ``tol`` (so also when it falls, which it
can while the likelihood still rises: each E-step changes the expectation; on Dawid & Skene's caries data it falls
at the second iteration, and GLAD stops there, as crowd-kit does; running on to a change below ``tol`` either way
lowered the mean accuracy on the 16 gold sets of docs/accuracy.md, 0.7948 to 0.7918, and took 35 iterations instead
of 2 on S_Rel). These settings are crowd-kit 1.4.2's (``crowdkit.aggregation.GLAD``) so the two agree;
everything here runs as numpy vectors over the stored judgments (``np.bincount`` per rater and per response), with no
per-row loop.

Results: ``difficulty_`` (N,) = 1/beta_i (larger = harder: even able raters disagree on it), ``ability_`` (R,)
= alpha_r (negative = a rater who tends to give a wrong level), and, for ``diagnose``, ``confusion_`` (R, K, K): the
confusion matrix GLAD implies at the typical response, beta = exp(mean b) (the geometric mean of the inverse
difficulties): sigma(alpha_r beta) on the diagonal and the rest spread evenly.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 0, 1, 1, 1]})
>>> model = GLAD().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.difficulty_[0] > model.difficulty_[1])
([1, 0, 1], True)
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from stableval.aggregate._base import Aggregator, level_log_priors, softmax_posteriors
from stableval.aggregate.methods import declared
from stableval.aggregate.responses import Judgments

__all__ = ["GLAD", "METHOD"]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


#: the declaration this estimator reads (its hyper-parameters: :attr:`GLAD.PARAMETERS`)
METHOD = declared("glad")


class GLAD(Aggregator):
    """GLAD (Whitehill et al. 2009): rater ability and response difficulty (hyper-parameters: :attr:`PARAMETERS`,
    crowd-kit's settings).

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,) the fixed class priors (uniform over the levels
    given), ``ability_`` (R,), ``log_beta_`` (N,), ``difficulty_`` (N,) = exp(-log_beta_), ``confusion_`` (R, K, K) at
    the typical response, ``objective_`` (per-(judgment, level) expected log-likelihood, one per EM iteration),
    ``log_likelihood_`` (the marginal log-likelihood of the final fit), ``n_iter_``, ``converged_``.
    """

    PARAMETERS = METHOD.params

    def __init__(self, max_iter: int = 100, tol: float = 1e-5, m_step_max_iter: int = 25,
                 m_step_tol: float = 1e-2, ability_prior_mean: float = 1.0, log_beta_prior_mean: float = 1.0) -> None:
        self._set_checked(max_iter=max_iter, tol=tol, m_step_max_iter=m_step_max_iter, m_step_tol=m_step_tol,
                          ability_prior_mean=ability_prior_mean, log_beta_prior_mean=log_beta_prior_mean)

    # ------------------------------------------------------------------ model pieces
    def _e_step(self, data: Judgments, alpha: np.ndarray, log_beta: np.ndarray, log_priors: np.ndarray,
                gold: np.ndarray | None) -> tuple[np.ndarray, float]:
        """(N, K) posteriors over levels and the marginal log-likelihood, for these abilities and difficulties."""
        n, k = data.n_responses, data.n_levels
        x = alpha[data.rater] * np.exp(log_beta)[data.response]
        right = _log_sigmoid(x)[0]
        wrong = right - x - np.log(k - 1.0)  # log(1 − σ(x)) = log σ(x) − x
        logits = np.bincount(data.cell, weights=data.count * (right - wrong), minlength=n * k).reshape(n, k)
        logits += np.bincount(data.response, weights=data.count * wrong, minlength=n)[:, None] + log_priors
        return softmax_posteriors(logits, gold)

    def _objective(self, params: np.ndarray, data: Judgments, right_weight: np.ndarray,
                   wrong_weight: np.ndarray) -> tuple[float, np.ndarray]:
        """Minus the expected complete log-likelihood plus log priors, and its gradient in (alpha, b).

        ``right_weight`` (J,) is each stored judgment's count times its posterior probability of being right,
        gamma[i, given level]; ``wrong_weight`` the count times the rest."""
        r = data.n_raters
        alpha, log_beta = params[:r], params[r:]
        beta = np.exp(log_beta)[data.response]
        x = alpha[data.rater] * beta
        log_right, right = _log_sigmoid(x)
        # each judgment: right_weight · log σ(x) + wrong_weight · (log σ(x) − x − log(K − 1))
        value = (data.count @ log_right - wrong_weight @ x
                 - float(wrong_weight.sum()) * np.log(data.n_levels - 1.0))
        da, db = alpha - self.ability_prior_mean, log_beta - self.log_beta_prior_mean
        value -= 0.5 * (da @ da + db @ db) + _LOG_SQRT_2PI * params.size
        slope = right_weight - data.count * right  # d/dx of each judgment's term
        grad_alpha = np.bincount(data.rater, weights=slope * beta, minlength=r) - da
        grad_beta = np.bincount(data.response, weights=slope * x, minlength=data.n_responses) - db
        return -float(value), -np.concatenate([grad_alpha, grad_beta])

    # ------------------------------------------------------------------ fit
    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:
        if n_levels < 2:
            raise ValueError(f"GLAD needs at least 2 levels, got {n_levels}")
        data = Judgments(X, n_raters, n_levels)
        n = data.n_responses
        if gold is not None and not (gold >= 0).any():
            gold = None
        log_priors = level_log_priors(np.bincount(data.level, weights=data.count, minlength=n_levels), gold)
        alpha = np.full(n_raters, 1.0)
        log_beta = np.full(n, 1.0)
        per_cell = max(float(data.count.sum()) * n_levels, 1.0)  # crowd-kit normalises by (judgment, level) rows

        posteriors, _ = self._e_step(data, alpha, log_beta, log_priors, gold)
        params = np.concatenate([alpha, log_beta])
        last = -self._objective(params, data, *_weights(data, posteriors))[0]
        history: list[float] = []
        converged = False
        from scipy.optimize import minimize  # here, not at import: 0.3 s on every CLI start otherwise

        for _ in range(self.max_iter):
            posteriors, _ = self._e_step(data, alpha, log_beta, log_priors, gold)
            result = minimize(self._objective, params, args=(data, *_weights(data, posteriors)), jac=True, method="CG",
                              tol=self.m_step_tol, options={"maxiter": self.m_step_max_iter})
            params = np.asarray(result.x, dtype=float)
            alpha, log_beta = params[:n_raters], params[n_raters:]
            objective = -float(result.fun) / per_cell
            history.append(objective)
            if objective - last < self.tol:
                converged = True
                break
            last = objective
        posteriors, log_likelihood = self._e_step(data, alpha, log_beta, log_priors, gold)

        self.posteriors_ = posteriors
        self.priors_ = np.exp(log_priors)
        self.ability_ = alpha
        self.log_beta_ = log_beta
        self.difficulty_ = np.exp(-log_beta)
        self.confusion_ = typical_confusion(alpha, float(log_beta.mean()) if n else 0.0, n_levels)
        self.objective_ = np.asarray(history)
        self.log_likelihood_ = np.array([log_likelihood])
        self.n_iter_ = len(history)
        self.converged_ = converged
        return self

    def fit_summary(self) -> dict[str, Any]:
        return {"n_iter": int(self.n_iter_), "converged": bool(self.converged_),
                "log_likelihood": float(self.log_likelihood_[-1]),
                "objective": float(self.objective_[-1]) if self.objective_.size else float("nan")}


def _weights(data: Judgments, posteriors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each stored judgment's count split by the posterior probability that its level is the true one."""
    right = data.count * posteriors[data.response, data.level]
    return right, data.count - right


def _log_sigmoid(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log σ(x) and σ(x), stable for any x, with one exp and one log1p per element.

    >>> [v.round(4).tolist() for v in _log_sigmoid(np.array([-800.0, 0.0, 40.0]))]
    [[-800.0, -0.6931, -0.0], [0.0, 0.5, 1.0]]
    """
    small = np.abs(x)
    np.negative(small, out=small)
    np.exp(small, out=small)  # exp(-|x|), in (0, 1]
    log_right = np.minimum(x, 0.0)
    log_right -= np.log1p(small)
    right = np.where(x >= 0, 1.0, small)
    small += 1.0
    right /= small
    return log_right, right


def typical_confusion(ability: np.ndarray, log_beta: float, n_levels: int) -> np.ndarray:
    """(R, K, K) GLAD's confusion matrices [rater, true, given] at one inverse difficulty exp(``log_beta``): right
    with probability sigma(alpha_r beta), each wrong level with (1 − that) / (K − 1).

    >>> typical_confusion(np.array([0.0, 2.0]), 0.0, 2).round(3).tolist()
    [[[0.5, 0.5], [0.5, 0.5]], [[0.881, 0.119], [0.119, 0.881]]]
    """
    right = expit(np.asarray(ability, dtype=float) * np.exp(log_beta))
    wrong = (1.0 - right) / (n_levels - 1)
    eye = np.eye(n_levels, dtype=bool)
    return np.asarray(np.where(eye[None], right[:, None, None], wrong[:, None, None]))
