"""Kendall's tau-b against scipy, with ties."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from stableval.simulate import kendall_tau_b


# ---------------------------------------------------------------------- metrics
def test_kendall_tau_b_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(200, 6)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(200, 6)).astype(float)
    ours = kendall_tau_b(x, y)
    for row in range(200):
        expected = scipy.stats.kendalltau(x[row], y[row]).statistic
        if np.isnan(expected):
            assert np.isnan(ours[row])
        else:
            assert ours[row] == pytest.approx(expected, abs=1e-12)
