"""MACE: which raters know the answer and which are spamming, by EM or variational Bayes.

Source: D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy (2013), "Learning Whom to Trust with MACE",
Proceedings of NAACL-HLT 2013, 1120–1130. Model: response i has a true level T_i, uniform over the K levels (over those
some rater gave: a level nobody used gets no mass); on each judgment rater r either knows the answer (with probability
theta_r, the rater's competence) and gives T_i, or spams (probability 1 − theta_r) and draws a level from its own
spamming distribution xi_r. Marginally this is a Dawid–Skene confusion matrix constrained to ``theta_r · I + (1 −
theta_r) · 1 xi_r^T``, so the E-step is one sparse product of the response matrix with a (R·K, K) table of log
probabilities, and the expected counts of the M-step
come from one more (``X^T @ posteriors``): no loop over judgments, responses or raters.

M-step (``method``): ``"vb"`` (default, the paper's Section 2.2): variational Bayes with Beta(``alpha``, ``beta``)
priors on each rater's (spamming, knowing) split and a symmetric Dirichlet(``strategy_prior``) on xi_r — the
parameters become exp(digamma(counts + prior)) / exp(digamma(total)); ``"em"``: maximum likelihood with
``smoothing`` added to every expected count (0.01 / K by default, as the paper's code and crowd-kit use). Several
random restarts (``n_restarts``), keeping the highest marginal log-likelihood. Priors, smoothing and the random start
are crowd-kit 1.4.2's (``crowdkit.aggregation.MACE``): with ``start="crowdkit"`` restart 0 draws the very numbers
crowd-kit draws for ``random_state=seed`` (raters in name order), so ``n_restarts=1, max_iter=50, tol=0`` reproduces
crowd-kit's default fit to rounding. The default ``start="label-blind"`` draws each rater's spamming weights per level
from the votes instead of the level codes, so renaming the levels changes no output. Two departures: crowd-kit always
runs 50 iterations (on MT-Bench turn 1 that stops short of convergence), here a restart stops when the log-likelihood
settles (``tol``, at most 500 iterations); and crowd-kit re-seeds every restart with the same seed (its restarts are all
one), here restart j uses ``seed + j`` (modulo 2**32).

Results: ``competence_`` (R,) = theta_r, ``spam_distribution_`` (R, K) = xi_r, and for ``diagnose``
``confusion_`` (R, K, K) = theta_r I + (1 − theta_r) xi_r in every row (for ``"vb"`` from the normalised
variational weights); ``spamming_`` (R, 2) [spamming, knowing] and ``thetas_`` (R, K) keep crowd-kit's raw
weights (under ``"vb"`` they do not sum to 1).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 0, 1, 1, 1]})
>>> model = MACE().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.posteriors_.argmax(axis=1).tolist(), bool(model.competence_[2] < model.competence_[0])
([1, 0, 1], True)
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from stableval._options import MAX_SEED
from stableval.aggregate._base import Aggregator, level_log_priors, softmax_posteriors
from stableval.aggregate.methods import declared

__all__ = ["MACE", "METHOD"]


#: the declaration this estimator reads (its hyper-parameters: :attr:`MACE.PARAMETERS`)
METHOD = declared("mace")


class MACE(Aggregator):
    """MACE (Hovy et al. 2013): rater competence and spamming behaviour.

    Hyper-parameters: :attr:`PARAMETERS` (crowd-kit's settings, except ``max_iter`` and ``tol``).

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,) uniform over the levels given, ``competence_``
    (R,), ``spam_distribution_`` (R, K), ``confusion_`` (R, K, K), ``spamming_`` (R, 2), ``thetas_`` (R, K),
    ``log_likelihood_`` (history of the kept restart), ``n_iter_``, ``converged_``, ``restart_``, ``restarts_`` (each
    restart's final log-likelihood).
    """

    PARAMETERS = METHOD.params

    def __init__(self, n_restarts: int = 10, max_iter: int = 500, tol: float = 1e-7, method: str = "vb",
                 alpha: float = 0.5, beta: float = 0.5, strategy_prior: float = 10.0, smoothing: float | None = None,
                 default_noise: float = 0.5, seed: int = 0, start: str = "label-blind") -> None:
        self._set_checked(n_restarts=n_restarts, max_iter=max_iter, tol=tol, method=method, alpha=alpha, beta=beta,
                          strategy_prior=strategy_prior, smoothing=smoothing, default_noise=default_noise, seed=seed,
                          start=start)

    # ------------------------------------------------------------------ model pieces
    def _start(self, seed: int, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Random (R, 2) [spamming, knowing] and (R, K) spamming distributions from the (R, K) judgments per
        (rater, level): [spamming, knowing] drawn as crowd-kit draws them (``scipy.stats.uniform(1, 1 +
        noise).rvs(random_state=seed)``, a fresh generator), the spamming weights likewise for ``start="crowdkit"``
        or else one uniform draw per distinct (rater, the rater's count of the level, the level's total count),
        in the sorted order of those keys: a level's draw moves with the level when the levels are renamed."""
        n_raters, n_levels = totals.shape
        scale = 1.0 + self.default_noise
        spamming = np.random.RandomState(seed).random_sample((n_raters, 2)) * scale + 1.0
        if self.start == "crowdkit":
            thetas = np.random.RandomState(seed).random_sample((n_raters, n_levels)) * scale + 1.0
        else:
            counts = np.rint(totals).astype(np.int64)
            keys = np.column_stack([np.repeat(np.arange(n_raters), n_levels), counts.ravel(),
                                    np.tile(counts.sum(axis=0), n_raters)])
            _, cell = np.unique(keys, axis=0, return_inverse=True)
            draws = np.random.RandomState((seed + 1) % (MAX_SEED + 1)).random_sample(int(cell.max(initial=-1)) + 1)
            thetas = draws[cell.ravel()].reshape(n_raters, n_levels) * scale + 1.0
        return spamming / spamming.sum(axis=1, keepdims=True), thetas / thetas.sum(axis=1, keepdims=True)

    @staticmethod
    def _e_step(X: sp.csr_matrix, spamming: np.ndarray, thetas: np.ndarray, gold: np.ndarray | None,
                log_priors: np.ndarray) -> tuple[np.ndarray, float]:
        """(N, K) posteriors over the true level and the marginal log-likelihood (``log_priors`` (K,): uniform
        over the levels used)."""
        n_raters, k = thetas.shape
        spam = spamming[:, 0, None] * thetas  # (R, K): P(spam and give o), any truth
        table = spam[:, :, None] + spamming[:, 1, None, None] * np.eye(k)[None]  # [r, given, true]
        logits = np.asarray(X @ np.log(np.maximum(table, 1e-300)).reshape(n_raters * k, k)) + log_priors
        return softmax_posteriors(logits, gold)

    def _m_step(self, X: sp.csr_matrix, totals: np.ndarray, posteriors: np.ndarray, spamming: np.ndarray,
                thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """New (spamming, thetas) from the expected counts of knowing and of spamming each level."""
        n_raters, k = thetas.shape
        right = np.asarray(X.T @ posteriors).reshape(n_raters, k, k)  # [r, given o, true c]
        right = np.diagonal(right, axis1=1, axis2=2)  # (R, K): expected judgments o whose truth is o
        spam = spamming[:, 0, None] * thetas
        knowing = right * spamming[:, 1, None] / (spam + spamming[:, 1, None])
        strategy = totals - knowing  # (R, K) expected spammed judgments of each level
        split = np.stack([strategy.sum(axis=1), knowing.sum(axis=1)], axis=1)
        if self.method == "vb":
            return (_variational_normalise(split, np.array([self.alpha, self.beta])),
                    _variational_normalise(strategy, np.full(k, self.strategy_prior)))
        smoothing = 0.01 / k if self.smoothing is None else self.smoothing
        return _normalise(split + smoothing), _normalise(strategy + smoothing)

    # ------------------------------------------------------------------ fit
    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> Self:
        if n_levels < 2:
            raise ValueError(f"MACE needs at least 2 levels, got {n_levels}")
        X = sp.csr_matrix(X, dtype=float)
        if gold is not None and not (gold >= 0).any():
            gold = None
        totals = np.asarray(X.sum(axis=0)).reshape(n_raters, n_levels)  # judgments per (rater, given level)
        log_priors = level_log_priors(totals.sum(axis=0), gold)
        best: dict[str, Any] | None = None
        restarts: list[float] = []
        for restart in range(self.n_restarts):
            spamming, thetas = self._start((self.seed + restart) % (MAX_SEED + 1), totals)
            posteriors, log_likelihood = self._e_step(X, spamming, thetas, gold, log_priors)
            history = [log_likelihood]
            converged = False
            for _ in range(self.max_iter):
                spamming, thetas = self._m_step(X, totals, posteriors, spamming, thetas)
                posteriors, log_likelihood = self._e_step(X, spamming, thetas, gold, log_priors)
                history.append(log_likelihood)
                if abs(history[-1] - history[-2]) < self.tol * max(1.0, abs(history[-1])):
                    converged = True
                    break
            restarts.append(log_likelihood)
            if best is None or log_likelihood > best["log_likelihood"]:
                best = {"log_likelihood": log_likelihood, "posteriors": posteriors, "spamming": spamming,
                        "thetas": thetas, "history": history, "converged": converged, "restart": restart}
        assert best is not None
        spamming, thetas = best["spamming"], best["thetas"]
        self.posteriors_ = best["posteriors"]
        self.priors_ = np.exp(log_priors)
        self.spamming_ = spamming
        self.thetas_ = thetas
        self.competence_ = spamming[:, 1] / spamming.sum(axis=1)
        self.spam_distribution_ = thetas / thetas.sum(axis=1, keepdims=True)
        self.confusion_ = spam_confusion(self.competence_, self.spam_distribution_)
        self.log_likelihood_ = np.asarray(best["history"])
        self.n_iter_ = len(best["history"]) - 1
        self.converged_ = bool(best["converged"])
        self.restart_ = int(best["restart"])
        self.restarts_ = restarts
        return self

    def fit_summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {"n_iter": int(self.n_iter_), "converged": bool(self.converged_),
                                   "log_likelihood": float(self.log_likelihood_[-1]),
                                   "objective": float(self.log_likelihood_[-1])}
        if len(self.restarts_) > 1:
            summary["restart"] = self.restart_
        return summary


def spam_confusion(competence: np.ndarray, spam_distribution: np.ndarray) -> np.ndarray:
    """(R, K, K) the confusion matrices [rater, true, given] MACE implies: theta_r I + (1 − theta_r) xi_r.

    >>> spam_confusion(np.array([0.5]), np.array([[1.0, 0.0]])).tolist()
    [[[1.0, 0.0], [0.5, 0.5]]]
    """
    k = spam_distribution.shape[1]
    theta = np.asarray(competence, dtype=float)[:, None, None]
    return np.asarray(theta * np.eye(k)[None] + (1.0 - theta) * np.asarray(spam_distribution)[:, None, :])


def _normalise(counts: np.ndarray) -> np.ndarray:
    totals = counts.sum(axis=1, keepdims=True)
    return np.asarray(counts / np.where(totals > 0, totals, 1.0))


def _variational_normalise(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """exp(digamma(counts + prior)) / exp(digamma(row total + prior total)): the variational weights."""
    shifted = counts + prior
    return np.asarray(np.exp(digamma(shifted) - digamma(shifted.sum(axis=1, keepdims=True))))
