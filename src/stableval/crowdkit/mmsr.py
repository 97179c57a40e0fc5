"""M-MSR: the matrix mean-subsequence-reduced algorithm of Ma & Olshevsky (2020), "Adversarial Crowdsourcing
Through Robust Rank-One Matrix Completion", NeurIPS 33 (arXiv:2010.12181); crowd-kit's ``MMSR``.

With M labels, the workers' agreement on the tasks they share, rescaled to C = (M·agreement − 1)/(M − 1), has
expectation s sᵀ off the diagonal, s_i = (M·p_i − 1)/(M − 1) for worker i's accuracy p_i. M-MSR completes that
rank-one matrix robustly: alternating updates of u and v (C ≈ u vᵀ on the observed pairs) where each entry is the
mean of its candidate values after the F largest and F smallest (F = ⌊min co-workers / 2⌋ − 1) are discarded, so
that a few adversarial workers cannot pull it. |s| = u / √(‖u‖/‖v‖); its signs are those of the leading
eigenvector of the observed sign(C) (oriented so that most workers are better than chance); s is clipped to
[−1/(M−1) + 1/√T, 1 − 1/√T] (T tasks). The skills are the log-odds weights log((M − 1) p / (1 − p)), and the
labels the vote weighted by them.

>>> import pandas as pd
>>> df = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2, 3, 3, 3], "worker": ["a", "b", "c"] * 3,
...                    "label": ["x", "x", "y", "y", "y", "y", "x", "x", "x"]})
>>> MMSR().fit_predict(df).tolist()
['x', 'y', 'x']
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.crowdkit.answers import Answers
from stableval.crowdkit.base import CrowdKitAggregator
from stableval.crowdkit.models import skill_vote

__all__ = ["MMSR"]


def _trimmed(values: np.ndarray, trim: int, current: float) -> np.ndarray:
    """``values`` without the ``trim`` smallest below ``current`` and the ``trim`` largest above it (all of a
    side when it has fewer than ``trim``)."""
    values = np.sort(values)
    below, above = values < current, values > current
    values = values[~below] if below.sum() < trim else values[trim:]
    above = values > current
    return values[~above] if above.sum() < trim else values[: len(values) - trim]


class MMSR(CrowdKitAggregator):
    """crowd-kit's ``MMSR(n_iter=10000, tol=1e-10, random_state=0)``: ``skills_`` the log-odds weights,
    ``scores_`` (task × label) the weighted vote shares, ``labels_``, ``loss_history_`` (the change of u vᵀ per
    iteration); ``predict`` / ``predict_score`` apply the skills to new data."""

    results = ("labels_", "scores_", "skills_", "loss_history_")

    def __init__(self, n_iter: int = 10000, tol: float = 1e-10, random_state: int = 0) -> None:
        self.n_iter, self.tol, self.random_state = n_iter, tol, random_state

    def fit(self, data: Any) -> Self:
        answers = Answers.of(data)
        if answers.empty:
            self.skills_ = pd.Series(dtype=float, name="skill")
            self.loss_history_: list[float] = []
            self.labels_, self.scores_ = pd.Series(dtype=float, name="agg_label"), pd.DataFrame()
            return self
        m, n_tasks, r = answers.n_labels, answers.n_tasks, answers.n_workers
        last = np.zeros((r, n_tasks), dtype=np.int64)  # the label (code + 1) each worker gave each task, 0: none
        last[answers.worker, answers.task] = answers.label + 1
        given = sp.csr_matrix((last > 0).astype(float))
        common = np.asarray((given @ given.T).todense())
        np.fill_diagonal(common, 0)
        agree = np.zeros((r, r))
        for code in range(1, m + 1):
            chosen = sp.csr_matrix((last == code).astype(float))
            agree += np.asarray((chosen @ chosen.T).todense())
        observed = common > 0
        c = np.where(observed, (m * np.divide(agree, common, out=np.zeros_like(agree), where=observed) - 1)
                     / max(m - 1, 1), 0.0)
        trim = max(int(np.floor(observed.sum(axis=0).min() / 2)) - 1, 0)
        x = np.abs(c)
        u = np.random.RandomState(self.random_state).random_sample(r)
        v = np.random.RandomState(self.random_state).random_sample(r)
        self.loss_history_ = []
        for _ in range(self.n_iter):
            before = np.outer(u, v)
            for j in range(r):
                rows = observed[:, j]
                kept = _trimmed(x[rows, j] / u[rows], trim, v[j])
                if kept.size:
                    v[j] = kept.mean() if not (kept.size == 1 and kept[0] == 0) else 1 / np.sqrt(n_tasks)
            for i in range(r):
                columns = observed[i, :]
                kept = _trimmed(x[i, columns] / v[columns], trim, u[i])
                if kept.size:
                    u[i] = kept.mean() if not (kept.size == 1 and kept[0] == 0) else 1 / np.sqrt(n_tasks)
            loss = float(np.linalg.norm(np.outer(u, v) - before))
            self.loss_history_.append(loss)
            if loss < self.tol:
                break
        s = u / np.sqrt(np.linalg.norm(u) / np.linalg.norm(v)) * _signs(np.sign(c))
        s = np.clip(s, -1 / (m - 1) + 1 / np.sqrt(n_tasks), 1 - 1 / np.sqrt(n_tasks))
        p = s * (m - 1) / m + 1 / m
        self.skills_ = answers.worker_series(np.log(p * (m - 1) / (1 - p)))
        self.predict_score(data)
        return self

    def predict(self, data: Any) -> pd.Series:
        """The labels of ``data``'s tasks by the vote weighted with ``skills_``."""
        self.predict_score(data)
        return self.labels_

    def predict_score(self, data: Any) -> pd.DataFrame:
        """The weighted vote shares of ``data``'s tasks (``scores_``)."""
        answers, scores, _ = skill_vote(data, self.skills_)
        self._set_labels(answers, scores)
        self.scores_ = self.__dict__.pop("probas_")
        return self.scores_

    def fit_predict(self, data: Any) -> pd.Series:
        return self.fit(data).labels_

    def fit_predict_score(self, data: Any) -> pd.DataFrame:
        return self.fit(data).scores_


def _signs(signs: np.ndarray) -> np.ndarray:
    """±1 per worker from the observed pairwise signs (0: unobserved): the signs of the leading eigenvector,
    oriented so that most are +1; a worker sharing no task gets 0."""
    linked = np.abs(signs).sum(axis=1) > 0
    out = np.zeros(len(signs))
    if not linked.any():
        return out
    inner = signs[np.ix_(linked, linked)]
    vector = np.linalg.eigh(inner)[1][:, -1] if inner.shape[0] > 1 else np.ones(1)
    vector = np.where(vector >= 0, 1.0, -1.0)
    out[linked] = vector if vector.sum() >= 0 else -vector
    return out
