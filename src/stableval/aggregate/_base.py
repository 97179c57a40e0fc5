"""What every aggregator shares: the estimator shape (hyper-parameters in ``__init__``, results after ``fit``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stableval.data.table import AnnotationTable
from stableval.errors import NotFittedError


class Aggregator:
    """Base class: results live in trailing-underscore attributes that exist only after ``fit``.

    Subclasses implement ``fit(table) -> self`` and set ``posteriors_`` ((N, K) per-response distribution over
    levels, rows summing to 1).
    """

    posteriors_: np.ndarray

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: a result attribute that fit() has not set yet.
        if name.endswith("_") and not name.startswith("__"):
            raise NotFittedError(
                f"{type(self).__name__}.{name} is not available: call fit(table) first"
            )
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    def fit(self, table: AnnotationTable) -> Aggregator:  # pragma: no cover - interface
        raise NotImplementedError

    def fit_predict_proba(self, table: AnnotationTable) -> np.ndarray:
        """Fit, then return the (N, K) posterior (or vote-share) matrix, rows = responses in table order."""
        return self.fit(table).posteriors_

    def fit_predict(self, table: AnnotationTable) -> np.ndarray:
        """Fit, then return the (N,) most probable level per response (lowest level on exact ties)."""
        return np.asarray(self.fit_predict_proba(table).argmax(axis=1))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.endswith("_"))
        return f"{type(self).__name__}({params})"


def hard_distribution(probabilities: np.ndarray, *, atol: float = 1e-12) -> np.ndarray:
    """One-hot of the most probable level per row; exact ties share the mass equally.

    >>> hard_distribution(np.array([[0.2, 0.8], [0.5, 0.5]]))
    array([[0. , 1. ],
           [0.5, 0.5]])
    """
    top = probabilities.max(axis=1, keepdims=True)
    winners = (probabilities >= top - atol).astype(float)
    return np.asarray(winners / winners.sum(axis=1, keepdims=True))
