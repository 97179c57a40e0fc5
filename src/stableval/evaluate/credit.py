"""Item credit per method: how much each response earns, from the aggregated distribution over levels.

* ``mv`` — credit of the majority level (ties per the majority-vote tie policy; ``split`` averages the tied
  levels' credits);
* ``ds`` — credit of the most probable Dawid–Skene level (the "hard" variant of the STABLEVAL paper);
* ``stableval`` — posterior expected credit, ``sum_c gamma_ic v(c)`` (Bonagiri et al. 2026, Section 3.4).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1], "agent": "A", "rater": list("abc"), "label": [2, 2, 1]})
>>> table = AnnotationTable.from_frame(frame, levels=("bad", "ok", "good"))
>>> fitted = fit_methods(table, ["mv"])
>>> item_credit(fitted["mv"], table.credit, "mv").tolist()
[1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.aggregate._base import Aggregator, hard_distribution
from stableval.data.table import AnnotationTable

METHODS = ("mv", "ds", "stableval")
METHOD_LABELS = {"mv": "MV", "ds": "DS", "stableval": "STABLEVAL"}


@dataclass(frozen=True)
class MethodOptions:
    """Hyper-parameters of the three methods, in one place so the CLI, API and refit bootstrap agree."""

    ties: str = "split"
    seed: int | None = 0
    alpha_mu: float = 1.01
    alpha_pi: float = 1.01
    epsilon: float = 0.1
    max_iter: int = 500
    tol: float = 1e-8
    extra: dict[str, Any] = field(default_factory=dict)

    def build(self, method: str) -> Aggregator:
        """A fresh, unfitted aggregator for ``method``."""
        if method == "mv":
            return MajorityVote(ties=self.ties, seed=self.seed)
        if method == "ds":
            return DawidSkene(max_iter=self.max_iter, tol=self.tol)
        if method == "stableval":
            return Stableval(alpha_mu=self.alpha_mu, alpha_pi=self.alpha_pi, epsilon=self.epsilon,
                             max_iter=self.max_iter, tol=self.tol)
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")


def check_methods(methods: Iterable[str]) -> list[str]:
    """Validate and de-duplicate method names (order kept)."""
    chosen: list[str] = []
    for method in methods:
        name = method.strip().lower()
        if name not in METHODS:
            raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ValueError(f"no method given; allowed: {', '.join(METHODS)}")
    return chosen


def fit_methods(table: AnnotationTable, methods: Iterable[str],
                options: MethodOptions | None = None) -> dict[str, Aggregator]:
    """Fit each method on ``table``; the EM methods share the table's cached response matrix."""
    options = options or MethodOptions()
    return {method: options.build(method).fit(table) for method in check_methods(methods)}


def fit_matrix(aggregator: Aggregator, X: sp.csr_matrix, n_raters: int, n_levels: int) -> Aggregator:
    """Fit an aggregator on a response matrix (responses × rater·K + label) instead of a table."""
    if isinstance(aggregator, MajorityVote):
        return aggregator.fit_matrix(X, n_levels)
    if isinstance(aggregator, DawidSkene | Stableval):
        return aggregator.fit_matrix(X, n_raters, n_levels)
    raise TypeError(f"cannot fit {type(aggregator).__name__} on a matrix")


def credit_distribution(aggregator: Aggregator, method: str) -> np.ndarray:
    """(N, K) distribution whose expected credit is the method's item credit."""
    if method == "ds":
        return hard_distribution(aggregator.posteriors_)
    return np.asarray(aggregator.posteriors_)


def item_credit(aggregator: Aggregator, credit: np.ndarray, method: str) -> np.ndarray:
    """(N,) credit of every response under ``method``."""
    return np.asarray(credit_distribution(aggregator, method) @ credit)


def credits_by_method(fitted: Mapping[str, Aggregator], credit: np.ndarray) -> np.ndarray:
    """(N, methods) item credits, one column per fitted method (in ``fitted``'s order)."""
    return np.column_stack([item_credit(model, credit, method) for method, model in fitted.items()])
