"""Which ranking aggregation recovers the planted true ranking (issue 29); the docs' table comes from
``stableval ablate --metric ranking-recovery -n 100`` (docs/rankings.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from stableval.simulate.ranking_recovery import (
    RECOVERY_BASE,
    _kendall_rows,
    _top1,
    recovery_table,
    recovery_trials,
    run_recovery,
    summarise_recovery,
)


def test_kendall_rows_against_scipy_and_top1_hand_worked() -> None:
    rng = np.random.default_rng(0)
    estimate = rng.integers(0, 4, size=(20, 6)).astype(float)  # ties, as pooled options give
    truth = rng.normal(size=(20, 6))
    ours = _kendall_rows(estimate, truth)
    for row in range(20):
        assert ours[row] == pytest.approx(kendalltau(estimate[row], truth[row]).statistic, nan_ok=True)
    # row 0: the true best (option 1) alone first -> 1; row 1: tied for first with another -> 1/2; row 2: missed
    estimate = np.array([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0], [0.8, 0.1, 0.1]])
    truth = np.array([[0.0, 2.0, 1.0], [2.0, 0.0, 1.0], [0.0, 0.0, 3.0]])
    assert _top1(estimate, truth).tolist() == [1.0, 0.5, 0.0]


def test_more_rankings_recover_more_and_rater_pl_discounts_noisy_raters() -> None:
    """A small grid: every method recovers the truth better with 8 rankings per item than with 1, and at 8 the
    rater-aware model, which learns to discount the noisy raters, beats the rater-blind PL it extends."""
    config = dataclasses.replace(RECOVERY_BASE, items=60)
    frame = pd.concat([recovery_trials(budget, 4, seed=1, methods=["irn", "borda", "pl", "rater-pl"], config=config)
                       for budget in (1, 8)], ignore_index=True)
    summary = summarise_recovery(frame).set_index(["budget", "method"])
    for method in ("irn", "borda", "pl", "rater-pl"):
        assert summary.loc[(8, method), "tau"] > summary.loc[(1, method), "tau"] + 0.1, method
        assert summary.loc[(8, method), "top1"] > summary.loc[(1, method), "top1"], method
        assert summary.loc[(8, method), "trials"] == 4
    assert summary.loc[(8, "rater-pl"), "tau"] > summary.loc[(8, "pl"), "tau"]
    assert summary.loc[(8, "rater-pl"), "top1"] > summary.loc[(8, "pl"), "top1"]


def test_run_recovery_writes_the_table(tmp_path: Path) -> None:
    files = run_recovery((1, 2), 2, 0, tmp_path, methods=["irn", "pl"])
    assert [f.name for f in files] == ["ranking_recovery_trials.csv", "ranking_recovery.csv", "ranking_recovery.md"]
    assert len(pd.read_csv(files[0])) == 2 * 2 * 2
    text = files[2].read_text(encoding="utf-8")
    assert text.count("\n| 1 |") == 1 and text.count("\n| 2 |") == 1
    assert "| IRN τ | PL τ | IRN top-1 | PL top-1 |" in text
    assert recovery_table(pd.read_csv(files[1])).splitlines()[0].startswith("| rankings per item")
    again = recovery_trials(2, [1], seed=0, methods=["pl"])  # seeded per (seed, budget, trial): trial 1 alone
    stored = pd.read_csv(files[0]).query("budget == 2 and trial == 1 and method == 'pl'")
    assert again[["tau", "top1"]].to_numpy() == pytest.approx(stored[["tau", "top1"]].to_numpy())
