"""Confidence intervals against statsmodels and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from stableval.evaluate.intervals import t_interval, wilson_interval


def test_wilson_interval_matches_statsmodels() -> None:
    from statsmodels.stats.proportion import proportion_confint

    for k, n in [(0, 10), (3, 10), (10, 10), (456, 1000)]:
        assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)


def test_t_interval_matches_scipy() -> None:
    values = np.random.default_rng(1).normal(size=25)
    _mean, sd, low, high, n = t_interval(values)
    expected = scipy.stats.t.interval(0.95, 24, loc=values.mean(), scale=scipy.stats.sem(values))
    assert (low, high) == pytest.approx(expected, abs=1e-12)
    assert n == 25 and sd == pytest.approx(values.std(ddof=1))
    assert math.isnan(t_interval(np.array([np.nan]))[0])
