"""Per-trial metrics of the stress tests, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.simulate import mean_subset_tau, rank_accuracy


def test_rank_accuracy_and_stability_by_hand() -> None:
    truth = np.array([0.9, 0.7, 0.5, 0.3])
    assert rank_accuracy(np.array([0.8, 0.9, 0.5, 0.3]), truth) == pytest.approx(5 / 6)  # one pair swapped
    assert rank_accuracy(np.array([0.8, 0.8, 0.5, 0.3]), truth) == pytest.approx(5.5 / 6)  # one pair tied
    full = np.array([0.9, 0.7, 0.5, 0.3])
    subsets = np.array([[0.9, 0.7, 0.5, 0.3], [0.3, 0.5, 0.7, 0.9], [0.8, 0.9, 0.5, 0.3]])
    # tau_b: 1, -1 and (5 - 1) / 6
    assert mean_subset_tau(full, subsets) == pytest.approx((1 - 1 + 4 / 6) / 3)
