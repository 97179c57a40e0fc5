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
>>> model.posteriors_.argmax(axis=1).tolist(), model.labels_.tolist()
([1, 0, 1], ['yes', 'no', 'yes'])
>>> bool(model.converged_)
True
"""

from __future__ import annotations

import numpy as np

from stableval.aggregate.em_fit import EMAggregator, EMStart
from stableval.aggregate.methods import declared

#: the declaration this estimator reads (its hyper-parameters: :attr:`DawidSkene.PARAMETERS`)
METHOD = declared("ds")


class DawidSkene(EMAggregator):
    """Maximum-likelihood Dawid–Skene (its hyper-parameters: :attr:`PARAMETERS`, the EM settings every EM method
    shares). ``acceleration`` names an accelerator of the EM map (:mod:`~stableval.aggregate.em_acceleration`:
    Anderson acceleration, Henderson & Varadhan 2019; SQUAREM, Varadhan & Roland 2008) or plain EM, step by step as
    in the paper.

    Attributes after ``fit``: ``posteriors_`` (N, K), ``priors_`` (K,), ``confusion_`` (R, K, K) indexed
    [rater, true level, given level], ``log_likelihood_`` (history, one value per E-step, non-decreasing),
    ``objective_`` (same as the log-likelihood here), ``n_iter_``, ``converged_``.
    """

    PARAMETERS = METHOD.params

    def __init__(self, max_iter: int = 500, tol: float = 1e-8, acceleration: str = "auto") -> None:
        self._set_checked(max_iter=max_iter, tol=tol, acceleration=acceleration)

    def em_start(self, counts: np.ndarray) -> EMStart:
        """The soft majority vote (each response's vote shares), an M-step first, as in the paper."""
        return EMStart(counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0))
