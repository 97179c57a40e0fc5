"""Wawa (Worker Agreement with Aggregate): majority vote weighted by each rater's agreement with the majority.

Source: the "Worker Agreement with Aggregate" baseline as implemented in crowd-kit (D. Ustalov, N. Pavlichenko
and B. Tseitlin (2024), "Learning from Crowds with Crowd-Kit", Journal of Open Source Software 9(96):6227;
``crowdkit.aggregation.Wawa``), described there as a heuristic used in Toloka's production pipelines. Three
steps: (1) the majority level of each response; (2) each rater's skill = the share of their judgments equal to
that majority (a judgment of one of t tied majority levels counts 1/t, so no level's code breaks a tie; crowd-kit's
``idxmax`` gives ties to the level listed first); (3) the vote weighted by those skills. The
weighted vote shares are the reported distribution (crowd-kit's ``probas_``); a response whose raters all have
skill 0 keeps its plain vote shares (crowd-kit would give 0/0).

The judgments are read once from the response matrix as flat arrays
(:class:`~stableval.aggregate.responses.Judgments`), and each step is an ``np.bincount``: a million judgments take
a few tens of milliseconds. The same steps run partition by partition on a Dask cluster
(:class:`~stableval.aggregate.responses.Votes`): each rater's agreement is a sum of counts, so the fit is the
in-memory one.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "agent": "A", "rater": list("abcabcabc"),
...                       "label": [1, 1, 0, 0, 0, 1, 1, 0, 1]})
>>> model = Wawa().fit(AnnotationTable.from_frame(frame, levels=("no", "yes")))
>>> model.skills_.round(3).tolist(), model.posteriors_[0].round(3).tolist()
([1.0, 0.667, 0.333], [0.167, 0.833])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np

from stableval.aggregate._base import Aggregator
from stableval.aggregate.methods import declared

if TYPE_CHECKING:  # pragma: no cover
    from stableval.aggregate.responses import ResponseMatrix

__all__ = ["METHOD", "Wawa"]


#: the declaration this estimator reads (its hyper-parameters: :attr:`Wawa.PARAMETERS`)
METHOD = declared("wawa")


class Wawa(Aggregator):
    """Wawa: the vote weighted by each rater's agreement with the majority vote (no hyper-parameters).

    Attributes after ``fit``: ``posteriors_`` (N, K) the weighted vote shares, ``accuracy_`` (R,) each rater's
    agreement with the majority (``skills_`` by rater name).
    """

    def __init__(self) -> None:
        pass

    def fit_responses(self, responses: ResponseMatrix) -> Self:
        """Fit on the response matrix, in memory or partitioned; ``gold`` levels (>= 0) replace the majority."""
        votes = responses.votes()
        self.accuracy_ = votes.agreement(None)  # agreement with the plain majority vote
        self.posteriors_ = votes.shares(self.accuracy_)
        return self

    def rater_skills(self) -> np.ndarray:
        """Each rater's agreement with the majority vote (the ``skills_`` view)."""
        return np.asarray(self.accuracy_)
