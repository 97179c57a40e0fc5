"""What every crowd-kit-style class shares: crowd-kit's method names and result attributes.

``fit(data)`` sets the results as plain attributes (``labels_``, ``probas_``, and per model ``skills_``,
``errors_``, ``priors_``, ...), so ``fit_predict(df) is model.labels_`` holds as in crowd-kit; before ``fit`` they
raise :class:`~stableval.errors.NotFittedError`. Empty input gives empty results, as crowd-kit's do.

>>> import pandas as pd
>>> from stableval.crowdkit import MajorityVote
>>> model = MajorityVote()
>>> model.fit_predict(pd.DataFrame({"task": [1, 1], "worker": [1, 2], "label": ["a", "a"]})) is model.labels_
True
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, Self

import numpy as np
import pandas as pd

from stableval.crowdkit.answers import Answers

__all__ = ["RESULTS", "CrowdKitAggregator", "most_probable"]

#: the result attributes a fitted crowd-kit model may have
RESULTS = ("labels_", "probas_", "skills_", "errors_", "priors_", "scores_", "alphas_", "betas_", "thetas_",
           "spamming_", "loss_history_")


class CrowdKitAggregator:
    """Base class: ``fit`` (each model's), ``fit_predict`` and ``fit_predict_proba`` (extra arguments pass on to
    ``fit``, e.g. ``true_labels``), crowd-kit's result attributes and a repr of the parameters."""

    #: the results this model sets in ``fit``
    results: ClassVar[tuple[str, ...]] = ("labels_", "probas_")

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """Refuse an unknown parameter naming the allowed ones."""
        allowed = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
        for key in kwargs:
            if key not in allowed:
                raise TypeError(f"{cls.__name__} got an unexpected parameter {key!r}; allowed: {', '.join(allowed)}")
        return super().__new__(cls)

    def fit(self, data: Any, *args: Any, **kwargs: Any) -> Self:  # pragma: no cover - interface
        raise NotImplementedError

    def fit_predict(self, data: Any, *args: Any, **kwargs: Any) -> pd.Series:
        """Fit, then the most probable label per task (``labels_``)."""
        return self.fit(data, *args, **kwargs).labels_

    def fit_predict_proba(self, data: Any, *args: Any, **kwargs: Any) -> pd.DataFrame:
        """Fit, then each task's distribution over labels (``probas_``)."""
        return self.fit(data, *args, **kwargs).probas_

    def __getattr__(self, name: str) -> Any:
        if name in type(self).results:
            from stableval.errors import NotFittedError

            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(data) first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        names = [name for name in inspect.signature(type(self).__init__).parameters if name != "self"]
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names if hasattr(self, n))})"

    def _set_empty(self) -> None:
        """The results of empty input, as crowd-kit gives them."""
        self.labels_ = pd.Series(dtype=float, name="agg_label")
        self.probas_ = pd.DataFrame()

    def _set_labels(self, answers: Answers, probas: np.ndarray) -> None:
        """``probas_`` and ``labels_`` (the most probable label, the lowest on ties) from (tasks, labels)."""
        self.probas_ = answers.probas_frame(probas)
        self.labels_ = answers.label_series(most_probable(probas))


def most_probable(probas: np.ndarray) -> np.ndarray:
    """The column of each row's largest value, the first (lowest label) on exact ties.

    >>> most_probable(np.array([[0.5, 0.5], [0.2, 0.8]])).tolist()
    [0, 1]
    """
    return np.asarray(probas).argmax(axis=1) if len(probas) else np.zeros(0, dtype=np.int64)
