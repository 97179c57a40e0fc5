"""Zero-Based Skill: a weighted vote whose rater skills are learnt by repeated steps towards their agreement.

Source: the Zero-Based Skill (ZBS) method as implemented in crowd-kit (D. Ustalov, N. Pavlichenko and
B. Tseitlin (2024), "Learning from Crowds with Crowd-Kit", Journal of Open Source Software 9(96):6227;
``crowdkit.aggregation.ZeroBasedSkill``). Every rater starts at skill 1/K + ``eps`` (K = the number of distinct
labels given); each of ``n_iter`` rounds takes the skill-weighted vote, then moves each skill towards the rater's share
of judgments equal to that vote (a judgment of one of t tied levels counts 1/t, so no level's code breaks a tie;
crowd-kit gives ties to the level listed first) by a gradient step on the squared difference, ``skill += lr * (agreement
− skill)``, with the learning rate ``lr_init`` multiplied by ``lr_reduce_factor`` every ``lr_steps_to_reduce`` rounds.
The reported distribution is the vote weighted by the final skills. These are crowd-kit 1.4.2's rules and defaults (it
always runs all ``n_iter`` rounds), so the two agree.

Each round is two ``np.bincount`` passes over the judgments (:class:`~stableval.aggregate.responses.Votes`; on a
Dask cluster, partition by partition, the agreements summed).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 1, 1, 0, 1]})
>>> model = ZeroBasedSkill().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.labels_.tolist(), model.skills_.round(3).tolist()
(['yes', 'no', 'yes'], [1.0, 0.667, 0.333])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np

from stableval.aggregate._base import Aggregator
from stableval.aggregate.methods import declared

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate.responses import ResponseMatrix

__all__ = ["METHOD", "ZeroBasedSkill"]


#: the declaration this estimator reads (its hyper-parameters: :attr:`ZeroBasedSkill.PARAMETERS`)
METHOD = declared("zbs")


class ZeroBasedSkill(Aggregator):
    """Zero-Based Skill (crowd-kit's parameter names and defaults).

    Hyper-parameters: :attr:`PARAMETERS` (crowd-kit's names and defaults).

    Attributes after ``fit``: ``posteriors_`` (N, K) the vote shares weighted by the final skills, ``accuracy_``
    (R,) the skills (``skills_`` by rater name), ``n_iter_``. Not an EM fit: it always runs ``n_iter`` rounds, so it
    reports no convergence (``fit_summary()`` is empty, as for majority vote).
    """

    PARAMETERS = METHOD.params

    def __init__(self, n_iter: int = 100, lr_init: float = 1.0, lr_steps_to_reduce: int = 20,
                 lr_reduce_factor: float = 0.5, eps: float = 1e-5) -> None:
        self._set_checked(n_iter=n_iter, lr_init=lr_init, lr_steps_to_reduce=lr_steps_to_reduce,
                          lr_reduce_factor=lr_reduce_factor, eps=eps)

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned; ``gold`` levels (>= 0) replace the vote."""
        votes = responses.votes()
        skills = np.full(responses.n_raters, 1.0 / max(votes.levels_given(), 1) + self.eps)
        rate = self.lr_init
        for round_ in range(1, self.n_iter + 1):
            if round_ % self.lr_steps_to_reduce == 0:
                rate *= self.lr_reduce_factor
            skills = skills + rate * (votes.agreement(skills) - skills)
        self.accuracy_ = skills
        self.posteriors_ = votes.shares(skills)
        self.n_iter_ = self.n_iter
        return self

    def rater_skills(self) -> np.ndarray:
        """Each rater's learnt skill (the ``skills_`` view)."""
        return np.asarray(self.accuracy_)
