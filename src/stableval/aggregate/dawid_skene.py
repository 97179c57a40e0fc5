"""Dawid–Skene: maximum-likelihood EM with one class-conditional confusion matrix per rater.

Source: A. P. Dawid and A. M. Skene (1979), "Maximum Likelihood Estimation of Observer Error-Rates Using the
EM Algorithm", Journal of the Royal Statistical Society C 28(1):20–28. Initialised, as in the paper, from the
soft majority vote (each response's vote shares), then M-step / E-step until the marginal log-likelihood
stops improving. Repeated judgments by the same rater of the same response count as independent reports
(the paper's observer 1 rated every patient three times).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 0, 1, 1, 1]})
>>> model = DawidSkene().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.fit_predict(AnnotationTable.from_frame(frame, levels=("no", "yes"))).tolist()
[1, 0, 1]
>>> bool(model.converged_)
True
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from stableval.aggregate._base import Aggregator
from stableval.aggregate.em import EMResult, run_em, vote_counts
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

GoldLabels = Mapping[tuple[str, str], "str | int"] | np.ndarray


def gold_codes(table: AnnotationTable, gold: GoldLabels | None) -> np.ndarray | None:
    """(N,) known level per response (-1 = unknown) from {(item, agent): level name or code} or an array."""
    if gold is None:
        return None
    if isinstance(gold, np.ndarray):
        codes = np.asarray(gold, dtype=np.int64)
        if codes.shape != (table.n_responses,) or codes.max(initial=-1) >= table.n_levels or codes.min(
            initial=-1
        ) < -1:
            raise InputError("gold array must have one level code (or -1) per response", value=codes.shape,
                             allowed=f"shape ({table.n_responses},), values -1..{table.n_levels - 1}")
        return codes
    codes = np.full(table.n_responses, -1, dtype=np.int64)
    if not gold:
        return codes
    responses = pd.MultiIndex.from_arrays([table.items.to_numpy()[table.response_item],
                                           table.agents.to_numpy()[table.response_agent]])
    keys = list(gold)
    positions = responses.get_indexer(pd.MultiIndex.from_tuples([(str(k[0]), str(k[1])) for k in keys]))
    for key, response in zip(keys, positions, strict=True):
        level = gold[key]
        if response < 0:
            raise InputError("gold label for a response that has no judgments", column="gold", value=key,
                             allowed="(item, agent) pairs present in the table")
        if isinstance(level, str) and level in table.levels:
            codes[response] = table.levels.index(level)
        elif isinstance(level, int | np.integer) and 0 <= int(level) < table.n_levels:
            codes[response] = int(level)
        else:
            raise InputError("gold level not among the levels", column="gold", value=level,
                             allowed=", ".join(table.levels))
    return codes


class _EMAggregator(Aggregator):
    """Shared plumbing: store an :class:`EMResult` in the estimator's public attributes."""

    max_iter: int
    tol: float

    def _store(self, result: EMResult) -> None:
        self.posteriors_ = result.posteriors.T  # (N, K) view of class-major storage
        self.priors_ = result.priors
        self.confusion_ = result.confusion
        self.log_likelihood_ = result.log_likelihood
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged


class DawidSkene(_EMAggregator):
    """Maximum-likelihood Dawid–Skene.

    Args:
        max_iter: most EM iterations (E-steps).
        tol: stop when the log-likelihood improves by less than ``tol * max(1, |log-likelihood|)``.

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,), ``confusion_`` (R, K, K) indexed
    [rater, true level, given level], ``log_likelihood_`` (history, one value per E-step, non-decreasing),
    ``objective_`` (same as the log-likelihood here), ``n_iter_``, ``converged_``.
    """

    def __init__(self, max_iter: int = 500, tol: float = 1e-8) -> None:
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, table: AnnotationTable, gold: GoldLabels | None = None) -> DawidSkene:
        """Fit on a table; ``gold`` optionally clamps known responses ({(item, agent): level})."""
        return self.fit_matrix(table.response_matrix(), table.n_raters, table.n_levels,
                               gold=gold_codes(table, gold))

    def fit_matrix(self, X: sp.csr_matrix, n_raters: int, n_levels: int,
                   gold: np.ndarray | None = None) -> DawidSkene:
        """Fit on a response matrix directly (used by the refit bootstrap)."""
        counts = vote_counts(X, n_levels)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
        if gold is not None:
            known = gold >= 0
            shares[known] = np.eye(n_levels)[gold[known]]
        result = run_em(X, n_raters=n_raters, n_levels=n_levels, init_posteriors=np.ascontiguousarray(shares.T),
                        max_iter=self.max_iter, tol=self.tol, gold=gold)
        self._store(result)
        return self
