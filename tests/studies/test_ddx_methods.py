"""The DDx comparison of ranking methods and DDx conformal sets (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from displayed import check_displayed
from stableval.aggregate.rankings import ranking_method_names
from stableval.studies.ddx_methods import compare_ddx_methods, conformal_ddx, synthetic_models

from synthetic import certain_ddx_cases


def test_comparison_has_a_row_per_method_and_the_reference_never_changes_its_own_winner_on_certain_cases() -> None:
    ann, _ = certain_ddx_cases(40, 6, seed=1)
    models = synthetic_models(ann)
    table = compare_ddx_methods(ann, models, "all", n_draws=10)
    frame = table.frame
    assert frame["method"].tolist() == list(ranking_method_names())
    bootstrap = frame[frame["samples"] == "bootstrap"]
    assert (bootstrap["certainty_mean"] == 1).all() and (bootstrap["winner_changes"] == 0).all()
    assert set(frame["rank_order"].str.split(" > ").iloc[0]) == set(models)
    assert {"top1_A", "top3_D", "top1 A"} <= set(frame.columns)
    assert "methods" in table.to_dict()
    check_displayed(table)


def test_comparison_needs_models() -> None:
    ann, _ = certain_ddx_cases(5, 4, seed=1)
    with pytest.raises(ValueError, match="at least one model"):
        compare_ddx_methods(ann, {}, "irn")


def test_conformal_on_certain_cases_covers_with_one_condition() -> None:
    """Certain cases (plausibility concentrated) and a perfect scorer: the sets hold the truth, coverage ≥ 1 − α."""
    ann, truth = certain_ddx_cases(200, 6, seed=3)
    scores = np.full((200, 6), 0.01)
    scores[np.arange(200), truth] = 0.9
    result = conformal_ddx(ann, {"perfect": scores}, 0.1, method="pl", seed=2)
    row = result.summary.iloc[0]
    assert row["coverage"] >= 0.85 and row["calibration"] + row["held_out"] == 200
    assert (result.sets["size"] >= 1).all()
    check_displayed(result)
