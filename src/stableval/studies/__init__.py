"""Dataset-specific studies built on the rater bootstrap: Relabeled MedQA and Dermatology DDx.

Each study reads its dataset with :mod:`stableval.datasets` (:func:`~stableval.datasets.medqa.load_medqa`,
:func:`~stableval.datasets.ddx.load_ddx`) and uses the draws, votes and ground truths of
:mod:`stableval.evaluate.rater_bootstrap`. Studies sit above ``evaluate``: they may import ``evaluate`` and
``datasets``, never the reverse.

>>> from stableval.studies import evaluate_ddx, evaluate_medqa, compare_ddx_methods, conformal_ddx
"""

from stableval.studies.ddx import DDxResult, evaluate_ddx
from stableval.studies.ddx_methods import (
    DDxComparison,
    DDxConformal,
    compare_ddx_methods,
    conformal_ddx,
    synthetic_models,
)
from stableval.studies.medqa import MedQAResult, evaluate_medqa
from stableval.studies.medqa_two_step import TwoStepResult, two_step

__all__ = ["DDxComparison", "DDxConformal", "DDxResult", "MedQAResult", "TwoStepResult", "compare_ddx_methods",
           "conformal_ddx", "evaluate_ddx", "evaluate_medqa", "synthetic_models", "two_step"]
