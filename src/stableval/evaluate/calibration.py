"""Calibration of a label model's posteriors against gold: the expected calibration error (ECE).

A model is calibrated when, among the responses it gives its top level probability p, a share p has that level
as gold. The ECE (Naeini, Cooper and Hauskrecht 2015, "Obtaining Well Calibrated Probabilities Using Bayesian
Binning", AAAI) sorts the responses into equal-width bins of that top probability (the confidence) and averages,
weighted by the bins' sizes, the gap between each bin's mean confidence and its accuracy. Accuracy counts a tie
between t top levels as 1/t when gold is among them, as :func:`stableval.datasets.gold_accuracy` does.

>>> posteriors = np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.5, 0.5]])
>>> round(expected_calibration_error(posteriors, np.array([0, 1, 0, 1])), 4)  # (2·0.4 + 0.4 + 0) / 4
0.3
"""

from __future__ import annotations

import numpy as np

__all__ = ["expected_calibration_error", "top_level_credit"]


def top_level_credit(posteriors: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(M,) 1 where gold is the single most probable level, 1/t where it is one of t tied top levels, else 0.

    >>> top_level_credit(np.array([[0.7, 0.3], [0.5, 0.5], [0.2, 0.8]]), np.array([0, 0, 0])).tolist()
    [1.0, 0.5, 0.0]
    """
    rows = np.asarray(posteriors, dtype=float)
    top = np.isclose(rows, rows.max(axis=1, keepdims=True), rtol=0.0, atol=1e-12)
    hit = top[np.arange(len(rows)), gold]
    return np.asarray(np.where(hit, 1.0 / top.sum(axis=1), 0.0))


def expected_calibration_error(posteriors: np.ndarray, gold: np.ndarray, bins: int = 10) -> float:
    """The ECE of (N, K) ``posteriors`` against (N,) ``gold`` level codes (-1 = no gold: left out), over
    ``bins`` equal-width bins of the top probability (the last bin closed at 1)."""
    gold = np.asarray(gold)
    known = gold >= 0
    rows = np.asarray(posteriors, dtype=float)[known]
    if not len(rows):
        return float("nan")
    confidence = rows.max(axis=1)
    credit = top_level_credit(rows, gold[known])
    which = np.minimum((confidence * bins).astype(np.int64), bins - 1)
    gap = np.bincount(which, weights=confidence - credit, minlength=bins)
    return float(np.abs(gap).sum() / len(rows))
