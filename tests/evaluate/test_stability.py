"""Ranking stability under rater subsampling: hand-worked cases, properties, determinism."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from stableval.data import example_path
from stableval.data.table import AnnotationTable
from stableval.evaluate.stability import kendall_tau_b, ranking_stability, resolve_sizes

from synthetic import LOW_MID_HIGH, stability_hand_table, synthetic_frame


def test_ranking_stability_validates_seed() -> None:
    """Issue 16: bad input."""
    from stableval.data import read_any
    from stableval.evaluate.stability import ranking_stability

    table = read_any(example_path("mt_bench"), duplicates="keep")
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        ranking_stability(table, ["mv"], sizes=[0.5], repetitions=2, seed=-1)


def test_resolve_sizes_fractions_counts_and_errors() -> None:
    sizes = resolve_sizes([0.25, "50%", 0.5, 3, "0.75"], 10)
    assert [(s.label, s.raters) for s in sizes] == [("25%", 3), ("50%", 5), ("75%", 8)]  # 25% and 3 coincide
    assert [s.raters for s in resolve_sizes([0.01, 1.0], 10)] == [1, 10]  # at least one rater; 100% = all
    for bad in (0, 0.0, 1.5, -2, "abc", "150%", True, 11):
        with pytest.raises(ValueError, match="subset size"):
            resolve_sizes([bad], 10)


def test_kendall_tau_b_with_ties_matches_hand_formula() -> None:
    # x = (1, .5, 0), y = (.75, .75, 0): 2 concordant, 0 discordant, 1 pair tied in y only
    # tau-b = (2 - 0) / sqrt((3 - 0) * (3 - 1)) = 2 / sqrt(6)
    assert kendall_tau_b(np.array([1.0, 0.5, 0.0]), np.array([0.75, 0.75, 0.0])) == pytest.approx(2 / math.sqrt(6))
    assert math.isnan(kendall_tau_b(np.array([1.0, 0.5]), np.array([0.3, 0.3])))  # one side all tied
    assert math.isnan(kendall_tau_b(np.array([1.0, 0.5]), np.array([0.3, np.nan])))  # < 2 agents in both


def test_hand_worked_single_rater_subsets() -> None:
    result = ranking_stability(stability_hand_table(), ["mv"], sizes=[1], repetitions=30, seed=3)
    drawn = [names[0] for names in result.subsets["drawn"]]
    assert set(drawn) == {"r1", "r2", "r3"}  # every subset occurs with this seed
    expected_tau = np.array([1 / 3 if name == "r3" else 1.0 for name in drawn])
    reps = result.repetitions
    np.testing.assert_allclose(reps["tau_b"], expected_tau)
    np.testing.assert_array_equal(reps["top_changed"], [name == "r3" for name in drawn])
    row = result.summary.iloc[0]
    assert row["tau_mean"] == pytest.approx(expected_tau.mean())
    assert row["p_top_change"] == pytest.approx(np.mean([name == "r3" for name in drawn]))
    # Student-t interval for the mean, computed independently
    from scipy import stats

    half = stats.t.ppf(0.975, 29) * expected_tau.std(ddof=1) / math.sqrt(30)
    assert row["tau_ci_low"] == pytest.approx(expected_tau.mean() - half)
    assert row["tau_ci_high"] == pytest.approx(min(1.0, expected_tau.mean() + half))
    # ranks: A is 1st except under r3 (2nd), B the reverse, C always 3rd
    n3 = drawn.count("r3")
    agents = result.agents.set_index("agent")
    rank_a = np.array([2.0 if name == "r3" else 1.0 for name in drawn])
    assert agents.loc["A", "rank_sd"] == pytest.approx(rank_a.std())
    assert agents.loc["A", "rank_range"] == 1 and agents.loc["B", "rank_range"] == 1
    assert agents.loc["C", "rank_sd"] == 0 and agents.loc["C", "rank_range"] == 0
    assert agents.loc["A", "mean_rank"] == pytest.approx(1 + n3 / 30)
    assert row["mean_rank_range"] == pytest.approx(2 / 3)
    assert row["responses_dropped_mean"] == 0 and row["agents_missing"] == 0


def test_hand_worked_pairs_with_split_ties() -> None:
    result = ranking_stability(stability_hand_table(), ["mv"], sizes=[2], repetitions=20, seed=1)
    scores = result.replicates[("mv", 2)]
    for names, tau, changed, row in zip(result.subsets["drawn"], result.repetitions["tau_b"],
                                        result.repetitions["top_changed"], scores, strict=True):
        if names == ("r1", "r2"):  # the full-data ranking
            np.testing.assert_allclose(row, [1.0, 0.5, 0.0])
            assert tau == pytest.approx(1.0) and not changed
        else:  # with r3, A and B are 1-1 ties: split credit (1 + 0.5) / 2 for both
            np.testing.assert_allclose(row, [0.75, 0.75, 0.0])
            assert tau == pytest.approx(2 / math.sqrt(6)) and changed  # rank-1 set {A, B} != {A}
    assert len(set(result.subsets["drawn"])) == 3


def identical_rater_table(n_raters: int = 5) -> AnnotationTable:
    """Every rater gives every response the same label; agents' label distributions are nested (first-order
    stochastic dominance), so any monotone credit ranks them the same way."""
    per_agent = {"A": [2] * 6, "B": [2, 2, 2, 1, 1, 1], "C": [1] * 6, "D": [1, 1, 1, 0, 0, 0], "E": [0] * 6}
    rows = [(f"q{i}", agent, f"r{r}", label) for agent, labels in per_agent.items()
            for i, label in enumerate(labels) for r in range(n_raters)]
    frame = pd.DataFrame(rows, columns=["item", "agent", "rater", "label"])
    return AnnotationTable.from_frame(frame, levels=LOW_MID_HIGH)


def test_identical_raters_are_perfectly_stable_for_every_method() -> None:
    result = ranking_stability(identical_rater_table(), ["mv", "ds", "stableval"], sizes=[1, 0.6, 1.0],
                               repetitions=4, seed=0)
    summary = result.summary
    assert len(summary) == 9
    np.testing.assert_allclose(summary["tau_mean"], 1.0)
    np.testing.assert_allclose(summary["p_top_change"], 0.0)
    np.testing.assert_allclose(summary["mean_rank_sd"], 0.0)
    np.testing.assert_allclose(summary["mean_rank_range"], 0.0)
    assert (summary["responses_dropped_mean"] == 0).all()


def test_dropped_responses_and_missing_agents_are_counted() -> None:
    table = stability_hand_table()
    frame = table.to_frame()
    frame["label"] = frame["label"].map({name: code for code, name in enumerate(LOW_MID_HIGH)})
    # agent D is judged by r3 only, on two items: both responses drop out when r3 is not drawn
    extra = pd.DataFrame({"item": ["q1", "q2"], "agent": "D", "rater": "r3", "label": [1, 0]})
    table = AnnotationTable.from_frame(pd.concat([frame, extra], ignore_index=True), levels=LOW_MID_HIGH)
    result = ranking_stability(table, ["mv"], sizes=[1], repetitions=12, seed=5)
    without_r3 = np.array([names != ("r3",) for names in result.subsets["drawn"]])
    assert without_r3.any() and not without_r3.all()
    reps = result.repetitions
    np.testing.assert_array_equal(reps["responses_dropped"], np.where(without_r3, 2, 0))
    np.testing.assert_array_equal(reps["agents_missing"], without_r3.astype(int))
    # without r3, D is left out: tau-b over A, B, C only (their ranking is the full one)
    np.testing.assert_allclose(reps["tau_b"][without_r3], 1.0)
    agents = result.agents.set_index("agent")
    assert agents.loc["D", "missing"] == without_r3.sum()
    assert result.summary["agents_missing"].iloc[0] == without_r3.sum()
    assert result.summary["responses_dropped_max"].iloc[0] == 2


def test_results_do_not_depend_on_jobs_or_other_sizes() -> None:
    frame, _ = synthetic_frame(n_items=30, n_raters=8, per_item=3, seed=2)
    table = AnnotationTable.from_frame(frame, levels=LOW_MID_HIGH)
    serial = ranking_stability(table, ["mv", "ds"], sizes=[0.5, 6], repetitions=4, seed=11, jobs=1)
    parallel = ranking_stability(table, ["mv", "ds"], sizes=[0.5, 6], repetitions=4, seed=11, jobs=2)
    for name in ("summary", "agents", "repetitions", "subsets", "full_scores"):
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(parallel, name))
    alone = ranking_stability(table, ["mv", "ds"], sizes=[6], repetitions=4, seed=11)
    pd.testing.assert_frame_equal(alone.repetitions, serial.repetitions[serial.repetitions["raters"] == 6]
                                  .reset_index(drop=True))
    other_seed = ranking_stability(table, ["mv"], sizes=[0.5], repetitions=4, seed=12)
    assert list(other_seed.subsets["drawn"]) != list(serial.subsets["drawn"][:4])


def test_bad_arguments_raise() -> None:
    table = stability_hand_table()
    with pytest.raises(ValueError, match="repetitions"):
        ranking_stability(table, ["mv"], repetitions=0)
    with pytest.raises(ValueError, match="unknown method"):
        ranking_stability(table, ["nope"])
    with pytest.raises(ValueError, match="more than the 3 raters"):
        ranking_stability(table, ["mv"], sizes=[4])
