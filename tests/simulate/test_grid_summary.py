"""Summaries of the ablation: means, t intervals and the best method marked."""

from __future__ import annotations

import pandas as pd
import pytest
import scipy.stats

from stableval.simulate.grid import summarise


def test_summary_marks_the_best_method() -> None:
    rows = []
    for method, offset in (("mv", 0.3), ("ds", 0.1), ("stableval", 0.1)):
        for trial in range(4):
            rows.append({"sweep": "s", "parameter": "hard", "value": "0", "index": 0, "method": method,
                         "trial": trial, "mse": offset + 0.01 * trial, "rank_accuracy": 1 - offset,
                         "kendall_tau": 1 - offset, "stability": offset})
    summary = summarise(pd.DataFrame(rows)).set_index(["metric", "method"])
    assert summary.loc[("mse", "mv"), "mean"] == pytest.approx(0.315)
    assert list(summary.xs("mse")["best"]) == [False, True, True]  # ds and stableval tie for the lowest MSE
    assert list(summary.xs("stability")["best"]) == [True, False, False]
    low, high = scipy.stats.t.interval(0.95, 3, loc=0.315, scale=scipy.stats.sem([0.30, 0.31, 0.32, 0.33]))
    assert (summary.loc[("mse", "mv"), "ci_low"], summary.loc[("mse", "mv"), "ci_high"]) == pytest.approx(
        (low, high))
