"""The expected calibration error against hand-computed bins (issue 28: the calibration table of
benchmarks/bench_accuracy.py)."""

from __future__ import annotations

import math

import numpy as np

from stableval.evaluate.calibration import expected_calibration_error, top_level_credit


def test_top_level_credit_splits_ties() -> None:
    posteriors = np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    assert top_level_credit(posteriors, np.array([1, 2, 0, 0])).tolist() == [0.5, 1 / 3, 0.0, 1.0]


def test_ece_by_hand() -> None:
    """Two bins used: [0.9, 1] holds confidences 0.9 and 1.0 (the last bin closed at 1) with credits 1 and 0, gap
    0.95 − 0.5; [0.6, 0.7) holds 0.6 and 0.6 with credits 1 and 1, gap 0.6 − 1. ECE = (2·0.45 + 2·0.4) / 4."""
    posteriors = np.array([[0.9, 0.1], [0.0, 1.0], [0.6, 0.4], [0.4, 0.6]])
    gold = np.array([0, 0, 0, 1])
    assert math.isclose(expected_calibration_error(posteriors, gold), 0.425, abs_tol=1e-12)


def test_ece_leaves_out_responses_without_gold_and_is_nan_with_none() -> None:
    posteriors = np.array([[0.9, 0.1], [0.0, 1.0], [0.7, 0.3]])
    with_missing = expected_calibration_error(posteriors, np.array([0, -1, 1]))
    assert math.isclose(with_missing, expected_calibration_error(posteriors[[0, 2]], np.array([0, 1])))
    assert math.isnan(expected_calibration_error(posteriors, np.array([-1, -1, -1])))


def test_a_calibrated_model_has_no_error() -> None:
    """Confidence 0.8 in one bin, right on 4 of 5: calibrated, ECE 0."""
    posteriors = np.tile([0.8, 0.2], (5, 1))
    assert math.isclose(expected_calibration_error(posteriors, np.array([0, 0, 0, 0, 1])), 0.0, abs_tol=1e-12)
