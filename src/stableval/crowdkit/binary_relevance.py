"""Binary relevance for multi-label answers: one binary aggregation per label (is the label in the answer?), a
task's labels those aggregated as present (Zhang & Zhou 2014, "A Review on Multi-Label Learning Algorithms",
IEEE TKDE 26(8); crowd-kit's ``BinaryRelevance``).

>>> import pandas as pd
>>> from stableval.crowdkit import MajorityVote
>>> df = pd.DataFrame({"task": ["t1", "t1", "t1"], "worker": ["a", "b", "c"],
...                    "label": [["cat", "dog"], ["cat"], ["cat", "dog"]]})
>>> BinaryRelevance(MajorityVote()).fit_predict(df).to_dict()
{'t1': ['cat', 'dog']}
"""

from __future__ import annotations

import inspect
from typing import Any, Self

import pandas as pd

from stableval.crowdkit.answers import answers_frame
from stableval.crowdkit.base import CrowdKitAggregator

__all__ = ["BinaryRelevance"]


class BinaryRelevance(CrowdKitAggregator):
    """``BinaryRelevance(base_aggregator)``: ``aggregators_`` maps each label to a fitted copy of
    ``base_aggregator``; ``labels_`` (Series by task) the list of labels present, in order of first appearance."""

    results = ("labels_", "aggregators_")

    def __init__(self, base_aggregator: CrowdKitAggregator) -> None:
        self.base_aggregator = base_aggregator

    def _fresh(self) -> CrowdKitAggregator:
        base = self.base_aggregator
        names = [name for name in inspect.signature(type(base).__init__).parameters if name != "self"]
        return type(base)(**{name: getattr(base, name) for name in names if hasattr(base, name)})

    def fit(self, data: Any) -> Self:
        frame = answers_frame(data)
        self.aggregators_: dict[Any, CrowdKitAggregator] = {}
        if frame.empty:
            self.labels_ = pd.Series(dtype=float, name="agg_label")
            return self
        frame = frame[["task", "worker", "label"]]
        tasks = pd.Index(pd.unique(frame["task"]), name="task")
        present: dict[Any, list[Any]] = {task: [] for task in tasks}
        for label in pd.unique(frame["label"].explode().dropna()):
            binary = frame.assign(label=[label in set(given) for given in frame["label"]])
            aggregator = self._fresh()
            self.aggregators_[label] = aggregator.fit(binary)
            for task, value in aggregator.labels_.items():
                if bool(value):
                    present[task].append(label)
        self.labels_ = pd.Series([present[task] for task in tasks], index=tasks, name="agg_label")
        return self
