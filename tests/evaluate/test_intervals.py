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


def test_student_quantile_and_welch_df_match_scipy() -> None:
    """Issue 30: the Student t multiplier of the small-sample PPI intervals and the Welch–Satterthwaite degrees of
    freedom of a difference (hand-worked: equal errors on 9 df each give 18)."""
    from stableval.evaluate.intervals import student_quantile, welch_df

    for df in (1, 2, 9, 39, 1000):
        assert float(student_quantile(0.95, df)) == pytest.approx(scipy.stats.t.ppf(0.975, df), abs=1e-10)
    assert float(welch_df(1.0, 9, 1.0, 9)) == pytest.approx(18.0)
    va, vb = 0.3**2, 0.1**2
    assert float(welch_df(0.3, 12, 0.1, 40)) == pytest.approx((va + vb) ** 2 / (va**2 / 12 + vb**2 / 40))
    assert float(welch_df(0.0, 5, 0.0, 7)) == 7.0
    with pytest.raises(ValueError, match="two values"):
        student_quantile(0.95, 0)


def test_studentised_interval_hand_worked() -> None:
    """Issue 30: bootstrap-t = [θ − t*(1−α/2)·se, θ − t*(α/2)·se] with t* = (θ* − θ)/se*, quantiles at the
    nearest replicate; constant replicates count as t* = 0 (at the estimate) or ±∞."""
    from stableval.evaluate.intervals import studentised_interval

    # t* = (θ* − 1)/0.5 = -4, -2, 0, 2, 6 (B = 5); 60%: quantiles 0.2 and 0.8 at the nearest → -2 and 2
    low, high = studentised_interval(1.0, 0.25, np.array([-1.0, 0.0, 1.0, 2.0, 4.0]), 0.5, confidence=0.6)
    assert (low, high) == (pytest.approx(0.5), pytest.approx(1.5))
    # a skewed t* distribution gives an asymmetric interval: t* = -1, 0, 0, 0, 10 → 60%: 0 and 0 → the point
    assert studentised_interval(0.0, 1.0, np.array([-1.0, 0.0, 0.0, 0.0, 10.0]), 1.0, 0.6) == (0.0, 0.0)
    constant = studentised_interval(0.5, 0.1, np.array([0.5, 0.5, 0.5, 0.9]), np.array([0.0, 0.0, 0.0, 0.0]), 0.5)
    assert constant == (0.5, 0.5)
    assert studentised_interval(0.5, 0.1, np.array([0.9] * 4), 0.0, 0.5)[0] == -np.inf
