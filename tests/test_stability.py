"""Ranking stability under rater subsampling: hand-worked cases, properties, determinism, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data.table import AnnotationTable
from stableval.evaluate.stability import kendall_tau_b, ranking_stability, resolve_sizes
from stableval.report.figures import save_figure
from stableval.report.figures.stability import stability_figure

from synthetic import synthetic_frame

runner = CliRunner()
LEVELS = ("low", "mid", "high")  # credit 0, 0.5, 1


def hand_table() -> AnnotationTable:
    """Three agents, one item each, three raters (labels r1, r2, r3):

    A: (2, 2, 1) -> MV 2 (credit 1)      all raters: A > B > C
    B: (1, 1, 2) -> MV 1 (credit 0.5)    r3 alone:   B > A > C  (one discordant pair of three: tau-b = 1/3)
    C: (0, 0, 0) -> MV 0 (credit 0)      r1 or r2 alone: the full ranking (tau-b = 1)
    """
    labels = {"A": (2, 2, 1), "B": (1, 1, 2), "C": (0, 0, 0)}
    rows = [("q1", agent, f"r{r + 1}", value) for agent, values in labels.items() for r, value in enumerate(values)]
    return AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]), levels=LEVELS)


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
    result = ranking_stability(hand_table(), ["mv"], sizes=[1], repetitions=30, seed=3)
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
    result = ranking_stability(hand_table(), ["mv"], sizes=[2], repetitions=20, seed=1)
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
    return AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]), levels=LEVELS)


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
    table = hand_table()
    frame = table.to_frame()
    frame["label"] = frame["label"].map({name: code for code, name in enumerate(LEVELS)})
    # agent D is judged by r3 only, on two items: both responses drop out when r3 is not drawn
    extra = pd.DataFrame({"item": ["q1", "q2"], "agent": "D", "rater": "r3", "label": [1, 0]})
    table = AnnotationTable.from_frame(pd.concat([frame, extra], ignore_index=True), levels=LEVELS)
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
    table = AnnotationTable.from_frame(frame, levels=LEVELS)
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
    table = hand_table()
    with pytest.raises(ValueError, match="repetitions"):
        ranking_stability(table, ["mv"], repetitions=0)
    with pytest.raises(ValueError, match="unknown method"):
        ranking_stability(table, ["nope"])
    with pytest.raises(ValueError, match="more than the 3 raters"):
        ranking_stability(table, ["mv"], sizes=[4])


def test_to_dict_is_strict_json_and_plot_has_labels(tmp_path: Path) -> None:
    result = ranking_stability(hand_table(), ["mv", "ds"], sizes=[1, 2], repetitions=5, seed=0)
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert {row["method"] for row in payload["summary"]} == {"mv", "ds"}
    assert payload["subsets"][0]["drawn"] and payload["settings"]["repetitions"] == 5
    figure = stability_figure(result)
    axes = figure.axes[0]
    assert axes.get_title() and "raters in subset" in axes.get_xlabel() and "τ-b" in axes.get_ylabel()
    assert [text.get_text() for text in axes.get_legend().get_texts()] == ["MV", "DS"]
    png = save_figure(stability_figure(result), tmp_path / "stability.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in save_figure(stability_figure(result), tmp_path / "stability.svg").read_text()[:500]
    with pytest.raises(ValueError, match="suffix"):
        save_figure(stability_figure(result), tmp_path / "stability.gif")


# ---------------------------------------------------------------------------------------------- CLI
def write_hand_csv(path: Path) -> Path:
    frame = hand_table().to_frame()
    frame.to_csv(path, index=False)
    return path


def test_cli_table_json_csv_and_plot(tmp_path: Path) -> None:
    path = write_hand_csv(tmp_path / "ratings.csv")
    args = ["stability", str(path), "--levels", ",".join(LEVELS), "-m", "mv,ds", "--sizes", "1,2", "-R", "6"]
    result = runner.invoke(app, [*args, "--plot", str(tmp_path / "tau.png")])
    assert result.exit_code == 0, result.output
    for text in ("Ranking stability", "tau-b [95% CI]", "mean rank SD", "P(top agent changes)", "1 rater", "MV",
                 "DS"):
        assert text in result.output
    assert (tmp_path / "tau.png").stat().st_size > 1000
    out = tmp_path / "stability.json"
    result = runner.invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["settings"]["sizes"] == [{"size": "1", "raters": 1}, {"size": "2", "raters": 2}]
    assert len(payload["repetitions"]) == 2 * 2 * 6 and "command" in payload
    result = runner.invoke(app, [*args, "-f", "csv"])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("method,size,raters,fraction,repetitions,tau_mean,tau_ci_low,tau_ci_high")
    assert len(lines) == 5


def test_cli_errors(tmp_path: Path) -> None:
    path = write_hand_csv(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LEVELS), "--sizes", "0.5,x"])
    assert result.exit_code == 2 and "--sizes" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LEVELS), "--sizes", "7"])
    assert result.exit_code == 2 and "more than the 3 raters" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", "low,high"])
    assert result.exit_code == 1 and "ratings.csv" in result.output and "'mid'" in result.output
    result = runner.invoke(app, ["stability", str(path), "--levels", ",".join(LEVELS), "--plot", "x.gif"])
    assert result.exit_code == 2
