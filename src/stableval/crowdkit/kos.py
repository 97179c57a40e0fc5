"""KOS: the iterative message passing of Karger, Oh & Shah (2011), "Iterative Learning for Reliable Crowdsourcing
Systems", NIPS 24, for binary labels (crowd-kit's ``KOS``).

Answers become A = ±1 (the second label, in sorted order, is +1). Messages y(worker → task) start at N(1, 1)
draws (seeded); each iteration sets x(task → worker) to the sum of A·y over the task's other answers and y(worker →
task) to the sum of A·x over the worker's other answers. A task's label is the sign of the sum of A·y over all
its answers.

>>> import pandas as pd
>>> df = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": ["a", "b", "c"] * 2, "label": [True, True, False] * 2})
>>> KOS(n_iter=10).fit(df).labels_.tolist()
[True, True]
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import pandas as pd

from stableval.crowdkit.answers import Answers
from stableval.crowdkit.base import CrowdKitAggregator

__all__ = ["KOS"]


class KOS(CrowdKitAggregator):
    """crowd-kit's ``KOS(n_iter=100, random_state=0)``; more than two labels raise ``ValueError``."""

    results = ("labels_",)

    def __init__(self, n_iter: int = 100, random_state: int = 0) -> None:
        self.n_iter, self.random_state = n_iter, random_state

    def fit(self, data: Any) -> Self:
        answers = Answers.of(data)
        if answers.empty:
            self.labels_ = pd.Series([], dtype="O", name="agg_label")
            return self
        if answers.n_labels > 2:
            raise ValueError(f"KOS aggregates binary labels; got {answers.n_labels}: "
                             f"{', '.join(map(str, answers.labels))}")
        sign = np.where(answers.label == answers.n_labels - 1, 1.0, -1.0)
        y = np.random.default_rng(self.random_state).normal(1.0, 1.0, len(sign))
        n_tasks, n_workers = answers.n_tasks, answers.n_workers
        for _ in range(self.n_iter):
            x = np.bincount(answers.task, weights=sign * y, minlength=n_tasks)[answers.task] - sign * y
            y = np.bincount(answers.worker, weights=sign * x, minlength=n_workers)[answers.worker] - sign * x
            scale = np.abs(y).max()
            if scale > 0:  # messages grow geometrically: rescaling keeps them finite and changes no sign
                y = y / scale
        total = np.bincount(answers.task, weights=sign * y, minlength=n_tasks)
        codes = np.where(total > 0, answers.n_labels - 1, 0)
        self.labels_ = answers.label_series(codes)
        return self
