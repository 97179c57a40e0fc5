"""Gold majority vote: each worker's skill is its accuracy on the tasks whose true label is known, and the vote
is weighted by those skills (crowd-kit's ``GoldMajorityVote``; Ustalov, Pavlichenko & Tseitlin 2024, "Learning
from Crowds with Crowd-Kit", JOSS 9(96):6227).

>>> import pandas as pd
>>> df = pd.DataFrame({"task": ["t1", "t1", "t2", "t2"], "worker": ["a", "b", "a", "b"],
...                    "label": ["yes", "no", "no", "yes"]})
>>> model = GoldMajorityVote().fit(df, pd.Series({"t1": "yes"}))
>>> model.skills_.to_dict(), model.predict(df).to_dict()
({'a': 1.0, 'b': 0.0}, {'t1': 'yes', 't2': 'no'})
"""

from __future__ import annotations

from typing import Any, Self

import pandas as pd

from stableval.crowdkit.answers import Answers, answers_frame, true_labels_series
from stableval.crowdkit.base import CrowdKitAggregator
from stableval.crowdkit.models import skill_vote

__all__ = ["GoldMajorityVote"]


class GoldMajorityVote(CrowdKitAggregator):
    """``fit(data, true_labels)``: ``skills_`` each worker's share of right answers on the known tasks (an answer
    is right when it is one of its task's true labels; workers who answered none are left out);
    ``predict(data)`` / ``predict_proba(data)``: the vote weighted by them (a worker without a skill raises
    ``ValueError``, as crowd-kit's does)."""

    results = ("labels_", "probas_", "skills_")

    def fit(self, data: Any, true_labels: Any) -> Self:
        frame = answers_frame(data)
        known = true_labels_series(true_labels)
        truths: dict[Any, set[Any]] = {}  # a task may have several true labels
        for task, label in known.items():
            truths.setdefault(task, set()).add(label)
        scored = frame[frame["task"].isin(list(truths))]
        right = [label in truths[task] for task, label in zip(scored["task"], scored["label"], strict=True)]
        skills = pd.Series(right, index=pd.Index(scored["worker"], name="worker"), dtype=float)
        self.skills_ = skills.groupby(level=0).mean().rename("skill")
        return self

    def predict(self, data: Any) -> pd.Series:
        """The labels of ``data``'s tasks by the vote weighted with ``skills_``."""
        answers = Answers.of(data)
        if answers.empty:
            self._set_empty()
            return self.labels_
        answers, probas, _ = skill_vote(data, self.skills_)
        self._set_labels(answers, probas)
        return self.labels_

    def predict_proba(self, data: Any) -> pd.DataFrame:
        """The weighted vote shares of ``data``'s tasks."""
        self.predict(data)
        return self.probas_

    def fit_predict(self, data: Any, true_labels: Any) -> pd.Series:
        return self.fit(data, true_labels).predict(data)

    def fit_predict_proba(self, data: Any, true_labels: Any) -> pd.DataFrame:
        return self.fit(data, true_labels).predict_proba(data)
