"""Rank agreement: RBO and AO by hand, tau-b and Spearman against scipy, the summary of a table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.errors import InputError
from stableval.evaluate.intervals import t_interval
from stableval.nrp.rank_agreement import (
    MEASURE_RANGE,
    agreement_summary,
    agreement_table,
    average_overlap,
    kendall_tau_b,
    rbo_ext,
    spearman_rho,
)


# ----------------------------------------------------------------------------------- agreement
def test_rbo_and_ao_hand_worked() -> None:
    # S=[a,b], L=[b,a], p=0.5: X1=0, X2=2 -> (1-p)/p * (0 + 2/2*0.25) + (2/2)*0.25 = 0.5
    assert rbo_ext(["a", "b"], ["b", "a"], p=0.5) == pytest.approx(0.5)
    # uneven lengths, S a prefix of L: extrapolation says full agreement
    assert rbo_ext(["a"], ["a", "b"], p=0.5) == pytest.approx(1.0)
    # S=[a,b], L=[c,a,d], p=0.5, s=2, l=3: X=(0,1,1), X_s=1
    # sum X_d/d p^d = 0 + 1/2*0.25 + 1/3*0.125; tail d=3: 1*(1)/(2*3)*0.125; end: ((1-1)/3 + 1/2)*0.125
    expected = (0.125 + 0.125 / 3 + 0.125 / 6) + 0.0625
    assert rbo_ext(["a", "b"], ["c", "a", "d"], p=0.5) == pytest.approx(expected)
    assert rbo_ext(["c", "a", "d"], ["a", "b"], p=0.5) == pytest.approx(expected)  # symmetric
    assert rbo_ext(["a", "b"], ["c", "d"], p=0.9) == 0.0
    assert average_overlap(["a", "b", "c"], ["a", "c", "b"]) == pytest.approx((1 + 0.5 + 1) / 3)
    with pytest.raises(InputError, match="average overlap"):
        rbo_ext(["a"], ["a"], p=1.0)
    with pytest.raises(InputError, match="twice"):
        average_overlap(["a", "a"], ["a"])


def test_tau_b_and_spearman_match_scipy() -> None:
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(11)
    for _ in range(20):
        x, y = rng.integers(0, 4, 9), rng.integers(0, 4, 9)
        assert kendall_tau_b(x, y) == pytest.approx(kendalltau(x, y).statistic, nan_ok=True)
        assert spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic, nan_ok=True)
    table = pd.DataFrame({"qid": ["1", "2", "3"], "items": [3, 3, 3], "tau_b": [0.2, 0.4, 0.6],
                          "spearman": [0.2, np.nan, 0.6], "ao": [0.5] * 3, "rbo": [0.5, 0.5, 0.5]})
    row = agreement_summary(table).set_index("measure").loc["Kendall tau-b"]  # the Student-t interval of the means
    mean, high, n = row["mean"], row["ci_high"], row["questions"]
    assert (mean, n) == (pytest.approx(0.4), 3) and high - mean == pytest.approx(4.302652729 * 0.2 / np.sqrt(3))
    interval = t_interval([0.2, 0.4, 0.6])
    assert (row["ci_low"], row["ci_high"]) == (interval.low, interval.high)
    assert agreement_summary(table).set_index("measure").loc["Spearman rho", "questions"] == 2  # NaN left out


def test_agreement_summary_of_a_table() -> None:
    table = agreement_table({"q1": ["a", "b", "c"], "q2": ["a", "b"]}, {"q1": {"a": 3, "b": 1, "c": 2},
                                                                       "q2": {"a": 2, "b": 1}}, p=0.8)
    summary = agreement_summary(table, p=0.8, confidence=0.9)
    assert summary["measure"].tolist() == ["Kendall tau-b", "Spearman rho", "average overlap (AO)", "RBO_ext (p=0.8)"]
    for column, row in zip(("tau_b", "spearman", "ao", "rbo"), summary.itertuples(), strict=True):
        interval = t_interval(table[column], 0.9)
        low, high = MEASURE_RANGE[column]   # the t interval, cut to the measure's range (issue 29)
        assert (row.mean, row.ci_low, row.ci_high, row.questions) == (interval.mean, max(interval.low, low),
                                                                      min(interval.high, high), 2)


def test_intervals_never_leave_the_range_of_the_measure() -> None:
    """Issue 29: on 3 questions the t interval of Kendall tau reached 1.220; every bound now stays in [−1, 1]
    (AO and RBO in [0, 1]), and an interval inside the range is unchanged."""
    table = pd.DataFrame({"qid": ["q1", "q2", "q3"], "items": [5, 5, 5], "tau_b": [1.0, 0.8, 0.6],
                          "spearman": [1.0, 0.9, 0.7], "ao": [1.0, 0.9, 0.4], "rbo": [1.0, 0.95, 0.5]})
    assert t_interval(table["tau_b"]).high == pytest.approx(1.2969, abs=1e-3)     # what was reported before
    summary = agreement_summary(table).set_index("measure")
    assert (summary["ci_high"] <= 1).all() and (summary["ci_low"] >= -1).all()
    assert summary.loc["Kendall tau-b", "ci_high"] == 1.0
    assert summary.loc["average overlap (AO)", "ci_low"] >= 0
    narrow = agreement_summary(pd.DataFrame({"tau_b": [0.1, 0.2, 0.3], "spearman": [0.1, 0.2, 0.3],
                                             "ao": [0.5] * 3, "rbo": [0.5] * 3})).set_index("measure")
    assert narrow.loc["Kendall tau-b", "ci_high"] == t_interval([0.1, 0.2, 0.3]).high
