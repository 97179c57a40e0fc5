"""Per-trial metrics of the stress tests, vectorised over many score vectors at once.

* ``mse`` — mean squared error of the agent scores against the true scores.
* ``rank_accuracy`` — share of agent pairs (with different true scores) put in the true order; a tie in the
  estimated scores counts one half.
* ``kendall_tau`` — Kendall's tau-b between estimated and true scores (Kendall 1945, "The treatment of ties in
  ranking problems", Biometrika 33(3):239–251), which accounts for ties.
* ``mean_subset_tau`` — the ranking stability of Bonagiri et al. (2026), arXiv:2605.02122, Section 4.1: the mean
  tau-b between the ranking from all raters and the rankings from random rater subsets.

>>> import numpy as np
>>> kendall_tau_b(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), np.array([1.0, 2.0, 3.0])).tolist()
[1.0, -1.0]
>>> rank_accuracy(np.array([[0.9, 0.5, 0.5]]), np.array([0.9, 0.6, 0.4])).tolist()
[0.8333333333333334]
"""

from __future__ import annotations

import numpy as np

from stableval.evaluate.rank_correlation import SCORE_DECIMALS, kendall_tau_b, pair_signs as _pair_signs

#: metric name → True when larger is better
METRICS: dict[str, bool] = {"mse": False, "rank_accuracy": True, "kendall_tau": True, "stability": True}

__all__ = ["METRICS", "SCORE_DECIMALS", "kendall_tau_b", "mean_squared_error", "mean_subset_tau", "rank_accuracy"]

def rank_accuracy(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Share of agent pairs with distinct true scores that ``scores`` (..., A) put in the true order (ties ½)."""
    s, t = _pair_signs(np.asarray(scores, dtype=float)), _pair_signs(np.asarray(truth, dtype=float))
    counted = t != 0
    agree = np.where(s == t, 1.0, np.where(s == 0, 0.5, 0.0)) * counted
    n = counted.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(n > 0, agree.sum(axis=-1) / np.maximum(n, 1), np.nan))


def mean_squared_error(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Mean over agents of (score - true score)²."""
    return np.asarray(((np.asarray(scores) - np.asarray(truth)) ** 2).mean(axis=-1))


def mean_subset_tau(full: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """Mean Kendall tau-b between ``full`` (..., A) and each of ``subsets`` (..., R, A); NaN pairs skipped.

    The vectorised core of the ablation's stability metric (the same quantity as
    :func:`stableval.evaluate.stability.ranking_stability` reports for one table, over many trials at once).
    """
    taus = kendall_tau_b(subsets, np.asarray(full)[..., None, :])
    valid = ~np.isnan(taus)
    count = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(count > 0, np.where(valid, taus, 0.0).sum(axis=-1) / np.maximum(count, 1),
                                   np.nan))
