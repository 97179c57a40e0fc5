"""One-coin Dawid–Skene: every rater has a single accuracy, the same for every true level.

Source: the "one-coin" (homogeneous) special case of Dawid & Skene (1979, JRSS C 28(1):20–28), in which rater r
gives the true level with probability s_r and each wrong level with probability (1 − s_r)/(K − 1); analysed by
Y. Zhang, X. Chen, D. Zhou and M. I. Jordan (2016), "Spectral Methods Meet EM: A Provably Optimal Algorithm for
Crowdsourcing", Journal of Machine Learning Research 17(102):1–44 (their one-coin model, Section 2.2), and
implemented as ``OneCoinDawidSkene`` in crowd-kit (D. Ustalov, N. Pavlichenko and B. Tseitlin (2024), "Learning
from Crowds with Crowd-Kit", Journal of Open Source Software 9(96):6227). Fitted by maximum-likelihood EM from
the vote shares, as crowd-kit does: M-step s_r = the rater's mean posterior probability of the level they gave,
class priors = mean posterior; E-step exactly as Dawid–Skene. Confusion cells are kept in [1e-10, 1 − 1e-10]
(crowd-kit's clip), so a rater who is always right cannot veto every other level with a zero.

Each EM step is the shared Dawid–Skene E-step on the one-coin confusion matrices
(:class:`~stableval.aggregate.em.ResponseBlocks`, in double precision), whose expected counts give the M-step: no
per-judgment Python loop, and the same fit on a Dask cluster (:mod:`stableval.aggregate.distributed`).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 0, 1, 1, 1]})
>>> model = OneCoinDawidSkene().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.labels_.tolist(), model.skills_.round(3).tolist(), bool(model.converged_)
(['yes', 'no', 'yes'], [1.0, 1.0, 0.667], True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

import numpy as np

from stableval.aggregate._base import Aggregator, clamp_gold
from stableval.aggregate.methods import declared

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate.responses import ResponseMatrix

__all__ = ["METHOD", "OneCoinDawidSkene", "one_coin_confusion"]

#: confusion cells are clipped to [CLIP, 1 − CLIP] (crowd-kit 1.4.2's ``_EPS``)
CLIP = 1e-10


def one_coin_confusion(accuracy: np.ndarray, n_levels: int) -> np.ndarray:
    """(R, K, K) confusion matrices [rater, true, given] of raters with accuracies ``accuracy`` (R,): s_r on the
    diagonal, (1 − s_r)/(K − 1) elsewhere, clipped to [1e-10, 1 − 1e-10].

    >>> one_coin_confusion(np.array([0.7]), 3).round(2).tolist()
    [[[0.7, 0.15, 0.15], [0.15, 0.7, 0.15], [0.15, 0.15, 0.7]]]
    """
    s = np.asarray(accuracy, dtype=float)[:, None, None]
    off = (1.0 - s) / (n_levels - 1)
    confusion = off + (s - off) * np.eye(n_levels)[None]
    return np.asarray(np.clip(confusion, CLIP, 1.0 - CLIP))


#: the declaration this estimator reads (its hyper-parameters: :attr:`OneCoinDawidSkene.PARAMETERS`)
METHOD = declared("onecoin")


class OneCoinDawidSkene(Aggregator):
    """One-coin Dawid–Skene (one accuracy per rater), maximum-likelihood EM.

    Hyper-parameters (:attr:`PARAMETERS`): the EM settings ``max_iter`` and ``tol`` of Dawid–Skene.

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,), ``accuracy_`` (R,) each rater's s_r
    (``skills_`` by rater name), ``confusion_`` (R, K, K) [rater, true, given] (``errors_``),
    ``log_likelihood_`` (history, one value per E-step), ``n_iter_``, ``converged_``.
    """

    PARAMETERS = METHOD.params

    def __init__(self, max_iter: int = 500, tol: float = 1e-8) -> None:
        self._set_checked(max_iter=max_iter, tol=tol)

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned; responses with a ``gold`` level (>= 0) are
        clamped to it. Each step is Dawid–Skene's E-step (:class:`~stableval.aggregate.em.EStep`, in double
        precision) on the one-coin confusion matrices; its expected counts give the next accuracies."""
        k, n_raters = responses.n_levels, responses.n_raters
        gold = responses.gold
        blocks = responses.e_steps(precise=True)
        judged = blocks.rater_judgments(n_raters)
        column_level = np.arange(n_raters * k) % k
        counts = responses.vote_counts()
        start = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
        clamp_gold(start, gold)
        mass, expected = start.sum(axis=0), blocks.counts(np.ascontiguousarray(start.T))
        del counts, start
        posteriors = blocks.posteriors_buffer(k)
        history: list[float] = []
        converged = False
        n = responses.n_responses
        for _ in range(self.max_iter):
            priors = mass / n if n else np.full(k, 1.0 / k)
            agreed = expected[column_level, np.arange(n_raters * k)]  # P(true = given) per (rater, given)
            accuracy = np.bincount(np.arange(n_raters * k) // k, weights=agreed, minlength=n_raters)
            accuracy = np.where(judged > 0, accuracy / np.maximum(judged, 1e-300), 1.0 / k)
            confusion = one_coin_confusion(accuracy, k)
            log_likelihood, mass, expected = blocks.e_step(np.maximum(priors, CLIP), confusion, posteriors)
            history.append(log_likelihood)
            if len(history) > 1 and history[-1] - history[-2] < self.tol * max(1.0, abs(history[-1])):
                converged = True
                break
        self.posteriors_ = blocks.final_posteriors(posteriors).T
        self.priors_ = priors
        self.accuracy_ = accuracy
        self.confusion_ = confusion
        self.log_likelihood_ = np.asarray(history)
        self.n_iter_ = len(history)
        self.converged_ = converged
        return self

    def rater_skills(self) -> np.ndarray:
        """Each rater's accuracy s_r (the ``skills_`` view)."""
        return np.asarray(self.accuracy_)

    def fit_summary(self) -> dict[str, Any]:
        return {"n_iter": int(self.n_iter_), "converged": bool(self.converged_),
                "log_likelihood": float(self.log_likelihood_[-1])}
