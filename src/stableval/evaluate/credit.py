"""Item credit: how much each response earns under a method, from the method's fitted distribution over levels.

Each registered method says how (:attr:`stableval.aggregate.Method.credit`): ``"hard"`` — the credit of the most
probable level, exact ties sharing it equally (majority vote with its tie policy; Dawid–Skene, the paper's "hard"
variant); ``"soft"`` — the posterior expected credit ``sum_c gamma_ic v(c)`` (STABLEVAL, Bonagiri et al. 2026,
Section 3.4).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1], "agent": "A", "rater": list("abc"), "label": [2, 2, 1]})
>>> table = AnnotationTable.from_frame(frame, levels=("bad", "ok", "good"))
>>> fitted = fit_methods(table, ["mv"])
>>> item_credit(fitted["mv"], table.credit).tolist()
[1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from stableval.aggregate import Aggregator
from stableval.aggregate.registry import Chosen, get_method, method_names, method_of, resolve_methods
from stableval.data.table import JudgmentTable

__all__ = ["METHODS", "credits_by_method", "fit_methods", "item_credit"]

#: the registered methods' names (see :mod:`stableval.aggregate.registry`)
METHODS: tuple[str, ...] = method_names()


def fit_methods(table: JudgmentTable, methods: Iterable[str | Aggregator | Chosen] | None = None,
                params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Aggregator]:
    """Fit each method (names or estimator instances; ``params`` per name) on ``table``, in memory or on its Dask
    cluster; keyed like the results. The EM methods share the table's cached response matrix."""
    return {chosen.key: chosen.fit(table) for chosen in resolve_methods(methods, params)}


def item_credit(fitted: Aggregator, credit: np.ndarray, method: str | None = None) -> np.ndarray:
    """(N,) credit of every response under a fitted method (its registry entry's credit rule, or ``method``'s)."""
    entry = get_method(method) if method is not None else method_of(fitted)
    return np.asarray(entry.credit_distribution(fitted.posteriors_) @ credit)


def credits_by_method(fitted: Mapping[str, Aggregator], credit: np.ndarray) -> np.ndarray:
    """(N, methods) item credits, one column per fitted method (in ``fitted``'s order)."""
    return np.column_stack([item_credit(model, credit) for model in fitted.values()])
