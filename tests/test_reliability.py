"""Reliability against QC: NVIDIA's toy example, flags and skips, gold files, consensus, Wilson intervals, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import annotations_from_frame
from stableval.datasets.gold import read_gold
from stableval.datasets.judgments import read_judgments
from stableval.datasets.nvidia_reliability import read_toy_json
from stableval.errors import InputError
from stableval.evaluate.reliability import reliability_vs_qc
from stableval.report.figures import reliability_figure, save_figure

from conftest import TEST_DATA, shared_file

runner = CliRunner()
FLAGS = TEST_DATA / "reliability_flags.csv"


def toy_paths() -> tuple[Path, Path]:
    return (shared_file("nvidia_reliability_wtl_toy", "toy_data.json"),
            shared_file("nvidia_reliability_wtl_toy", "expected_metrics_recomputed.csv"))


def by_evaluator(result: object) -> pd.DataFrame:
    return result.evaluators.set_index("evaluator")  # type: ignore[attr-defined]


# ------------------------------------------------------------------ the toy example (spec)
def test_toy_example_reproduces_the_notebook() -> None:
    data, expected_path = toy_paths()
    judgments = read_toy_json(data)
    assert len(judgments) == 72 and int(judgments["qc"].sum()) == 18          # 54 evaluator + 18 QC judgments
    result = reliability_vs_qc(judgments)
    expected = pd.read_csv(expected_path, dtype={"evaluator": str}).set_index("evaluator")
    rows = by_evaluator(result)
    evaluators = [e for e in expected.index if e != "Overall"]
    assert list(rows.index) == evaluators                                      # first-appearance order
    for column, ours in (("Reliability", "reliability"), ("correct", "correct"), ("applicable", "applicable"),
                         ("flag_mismatch_pct", "flag_mismatch_pct"), ("total_items", "total_items")):
        np.testing.assert_allclose(rows.loc[evaluators, ours].to_numpy(dtype=float),
                                   expected.loc[evaluators, column].to_numpy(dtype=float), atol=1e-12)
    overall = result.overall
    assert f"{100 * overall['reliability']:.2f}%" == "62.96%"                 # the notebook's printed number
    assert (overall["correct"], overall["applicable"], overall["total_items"]) == (34, 54, 54)
    assert overall["qc_flagged_pct"] == 0.0 and overall["qc_items"] == 18
    assert rows["few_items"].sum() == 7                                        # fewer than 10 applicable


def test_toy_example_as_long_csv_with_qc_rater_ids(tmp_path: Path) -> None:
    data, _ = toy_paths()
    judgments = read_toy_json(data)
    qc_ids = sorted(judgments.loc[judgments["qc"], "rater"].unique())
    assert len(qc_ids) == 3
    path = tmp_path / "toy.csv"
    judgments.assign(flag=np.where(judgments["flag"], "Yes", "No"))[["item", "rater", "label", "flag"]] \
        .to_csv(path, index=False)
    result = reliability_vs_qc(read_judgments(path), qc_rater=qc_ids)
    assert result.overall["correct"] == 34 and result.overall["applicable"] == 54


# ------------------------------------------------------------------ flags and skips (hand-worked)
def test_flags_and_skips_are_separated_from_label_errors() -> None:
    result = reliability_vs_qc(read_judgments(FLAGS), qc_rater="qc", min_items=3)
    rows = by_evaluator(result)
    # e1 flagged i2 (QC did not) and did not flag i3 (QC did): 2 flag mismatches of 5, neither item applicable;
    # applicable i1, i4, i5, all matching QC.
    e1 = rows.loc["e1"]
    assert (e1.correct, e1.applicable, e1.flag_mismatches, e1.flag_compared, e1.total_items, e1.skipped) == \
        (3, 3, 2, 5, 5, 0)
    assert e1.reliability == 1.0 and e1.flag_mismatch_pct == pytest.approx(40.0)
    # e2 flagged i3 like QC (no mismatch, not applicable), skipped i4; applicable i1 (B≠A), i2 (B=B), i5 (A≠C).
    e2 = rows.loc["e2"]
    assert (e2.correct, e2.applicable, e2.flag_mismatches, e2.flag_compared, e2.total_items, e2.skipped) == \
        (1, 3, 0, 4, 5, 1)
    assert e2.reliability == pytest.approx(1 / 3) and e2.flag_mismatch_pct == 0.0
    overall = result.overall
    assert overall["reliability"] == pytest.approx(4 / 6)
    assert overall["flag_mismatch_pct"] == pytest.approx(100 * 2 / 9)
    assert overall["qc_flagged_pct"] == pytest.approx(20.0)                    # QC flagged 1 of 5 items
    assert any("skipped" in note for note in result.notes)


def test_flag_matching_changes_reliability_not_label_accuracy() -> None:
    """The spec's point: flagging disagreements leave the label reliability alone."""
    frame = read_judgments(FLAGS)
    unflagged = frame.assign(flag=False, label=frame["label"].replace("", "A"), skip=False)
    before = by_evaluator(reliability_vs_qc(frame, qc_rater="qc")).loc["e1"]
    after = by_evaluator(reliability_vs_qc(unflagged, qc_rater="qc")).loc["e1"]
    assert before.flag_mismatches == 2 and after.flag_mismatches == 0
    assert after.applicable == 5 and after.correct == 4                        # i2 ('A' vs 'B') now counts as wrong


# ------------------------------------------------------------------ gold file and consensus
def test_gold_file_with_and_without_agents(tmp_path: Path) -> None:
    frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q2", "q3"], "agent": ["A", "B", "A", "B", "A"],
                          "rater": ["r1"] * 5, "label": ["good", "bad", "good", "good", "bad"]})
    gold_path = tmp_path / "gold.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2", "q9"], "agent": ["A", "B", "A", "B", "A"],
                  "label": ["good", "good", "good", "bad", "bad"]}).to_csv(gold_path, index=False)
    result = reliability_vs_qc(frame, gold=read_gold(gold_path), min_items=1)
    row = by_evaluator(result).loc["r1"]
    assert (row.correct, row.applicable, row.excluded) == (2, 4, 1)            # q3/A has no gold: excluded
    assert any("1 QC judgment(s) are of items no evaluator judged" in note for note in result.notes)
    by_item = tmp_path / "gold_items.csv"
    pd.DataFrame({"item": ["q1", "q2"], "label": ["good", "good"]}).to_csv(by_item, index=False)
    result = reliability_vs_qc(frame, gold=read_gold(by_item, every_agent=True), min_items=1)
    row = by_evaluator(result).loc["r1"]
    assert (row.correct, row.applicable, row.excluded) == (3, 4, 1)
    assert any("no agent column" in note for note in result.notes)


def test_consensus_leave_one_out_hand_worked() -> None:
    frame = pd.DataFrame({
        "item": ["j1"] * 4 + ["j2"] * 3 + ["j3"] * 3,
        "rater": ["a", "b", "c", "d", "a", "b", "c", "a", "b", "c"],
        "label": ["X", "X", "X", "Y", "X", "Y", "Z", "", "", "Y"],
        "flag": [False] * 7 + [True, True, False],
    })
    result = reliability_vs_qc(frame, consensus=True, min_items=1)
    rows = by_evaluator(result)
    # j1: a, b, c see (X, X, Y) or (X, X, X) among the others -> X; d sees (X, X, X) -> wrong.
    # j2: every rater sees two different labels -> no consensus (excluded).
    # j3: c sees two flags -> QC flagged, c did not flag -> mismatch; a and b see one flag, one label -> tie.
    expected = {"a": (1, 1, 0, 2), "b": (1, 1, 0, 2), "c": (1, 1, 1, 1), "d": (0, 1, 0, 0)}
    for rater, (correct, applicable, mismatches, excluded) in expected.items():
        row = rows.loc[rater]
        assert (row.correct, row.applicable, row.flag_mismatches, row.excluded) == \
            (correct, applicable, mismatches, excluded), rater
    assert result.overall["excluded"] == 5
    assert any("without a consensus" in note for note in result.notes)
    # with at least 3 other raters only j1 qualifies
    strict = by_evaluator(reliability_vs_qc(frame, consensus=True, consensus_min=3, min_items=1))
    assert int(strict["total_items"].sum()) == 4


# ------------------------------------------------------------------ intervals, warnings, inputs
def test_wilson_intervals_match_statsmodels() -> None:
    result = reliability_vs_qc(read_judgments(FLAGS), qc_rater="qc", confidence=0.9)
    for row in result.evaluators.itertuples(index=False):
        low, high = proportion_confint(row.correct, row.applicable, alpha=0.1, method="wilson")
        assert (row.ci_low, row.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_few_items_warning() -> None:
    result = reliability_vs_qc(read_judgments(FLAGS), qc_rater="qc", min_items=4)
    assert result.evaluators["few_items"].all()
    assert any("fewer than 4 applicable items" in note for note in result.notes)


def test_annotation_table_input() -> None:
    frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": "A", "rater": ["qc", "r", "qc", "r"],
                          "label": [1, 1, 0, 1]})
    result = reliability_vs_qc(annotations_from_frame(frame), qc_rater="qc", min_items=1)
    assert by_evaluator(result).loc["r", "reliability"] == 0.5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("item,rater,label,flag\nq1,r1,A,maybe\n", ["row 1 (line 2)", "'flag'", "'maybe'", "yes/no"]),
        ("item,rater,label,flag\nq1,r1,A,no\nq1,r2,,no\n", ["row 2 (line 3)", "'label'", "flag/skip"]),
        ("item,label\nq1,A\n", ["no rater column"]),
    ],
)
def test_bad_input_names_row_column_value(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_judgments(path)
    for part in expected:
        assert part in str(error.value)


def test_duplicates_and_qc_problems() -> None:
    frame = read_judgments(FLAGS)
    twice = pd.concat([frame, frame.iloc[[1]].assign(row=99)], ignore_index=True)
    with pytest.raises(InputError, match="repeat"):
        reliability_vs_qc(twice, qc_rater="qc")
    assert by_evaluator(reliability_vs_qc(twice, qc_rater="qc", duplicates="last")).loc["e1", "total_items"] == 5
    with pytest.raises(InputError, match="no judgment by the QC rater"):
        reliability_vs_qc(frame, qc_rater="boss")
    with pytest.raises(InputError, match="more than one QC judgment"):
        reliability_vs_qc(frame, qc_rater=["qc", "e1"])
    with pytest.raises(ValueError, match="one QC source"):
        reliability_vs_qc(frame, qc_rater="qc", consensus=True)
    with pytest.raises(ValueError, match="no QC"):
        reliability_vs_qc(frame)


def test_bad_toy_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"output_values": {"e": {"item_flag": "No"}}, "QC": {}}]))
    with pytest.raises(InputError, match="no 'best'"):
        read_toy_json(path)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="row 1"):
        read_toy_json(path)


def test_plot_is_a_png(tmp_path: Path) -> None:
    result = reliability_vs_qc(read_judgments(FLAGS), qc_rater="qc")
    out = save_figure(reliability_figure(result), tmp_path / "matrix.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_judgment_readers_live_in_datasets(tmp_path: Path) -> None:
    """The moved readers: column aliases, flag parsing, the .json dispatch, explicit columns and levels."""
    from stableval.datasets.judgments import FLAG_FALSE, FLAG_TRUE, judgments_from_frame, parse_flags

    assert {"yes", "1"} <= FLAG_TRUE and "" in FLAG_FALSE
    raw = pd.DataFrame({"Task": ["q1", "q2"], "Judge": ["a", "b"], "Best": ["tie", ""], "NSFW": ["N", "True"]})
    frame = judgments_from_frame(raw, levels="tie,response_1", default_agent="bot")
    assert frame[["item", "agent", "rater", "label", "flag", "skip", "row"]].values.tolist() == [
        ["q1", "bot", "a", "tie", False, False, 1], ["q2", "bot", "b", "", True, False, 2]]
    with pytest.raises(InputError, match="not one of the levels"):
        judgments_from_frame(raw.assign(Best=["win", "tie"]), levels=["tie"])
    with pytest.raises(InputError, match=r"row 2.*'sometimes'"):
        parse_flags(pd.DataFrame({"f": ["no", "sometimes"]}), "f", source="x.csv")
    path = tmp_path / "j.tsv"
    path.write_text("question\tworker\tgrade\tstatus\nq1\tr1\tA\tyes\n")
    read = read_judgments(path, columns={"skip": "status"})
    assert read["skip"].tolist() == [True] and read["label"].tolist() == ["A"]
    data, _ = toy_paths()
    pd.testing.assert_frame_equal(read_judgments(data), read_toy_json(data))


def test_figure_is_a_matplotlib_figure() -> None:
    from matplotlib.figure import Figure

    figure = reliability_figure(reliability_vs_qc(read_judgments(FLAGS), qc_rater="qc", min_items=4))
    assert isinstance(figure, Figure)
    axes = figure.axes[0]
    assert axes.get_title().startswith("Reliability against QC (rater): overall 66.67%")
    assert [label.get_text() for label in axes.get_yticklabels()] == ["e1 *", "e2 *", "Overall"]


# ------------------------------------------------------------------ CLI
def test_cli_toy_table_and_plot(tmp_path: Path) -> None:
    data, _ = toy_paths()
    plot = tmp_path / "rel.png"
    result = runner.invoke(app, ["reliability", str(data), "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "Overall reliability across all evaluators: 62.96% (34/54)" in result.output
    assert "flagged as non-ratable by QC: 0.00%" in result.output
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_cli_qc_rater_json_and_csv(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reliability", str(FLAGS), "--qc-rater", "qc", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["overall"]["correct"] == 4 and payload["settings"]["qc"] == "rater"
    result = runner.invoke(app, ["reliability", str(FLAGS), "--qc", "consensus", "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("evaluator,reliability,correct,applicable")
    assert result.output.splitlines()[-1].startswith("Overall,")


def test_cli_qc_file(tmp_path: Path) -> None:
    gold = tmp_path / "gold.csv"
    gold.write_text("item,label,flag\ni1,A,no\ni2,B,no\ni3,,yes\ni4,A,no\ni5,C,no\n")
    frame = read_judgments(FLAGS)
    ratings = tmp_path / "ratings.csv"
    frame.loc[frame["rater"] != "qc"].assign(flag=lambda f: f["flag"].map({True: "yes", False: "no"}),
                                             skip=lambda f: f["skip"].map({True: "yes", False: "no"})) \
        .drop(columns=["agent", "qc", "row"]).to_csv(ratings, index=False)
    result = runner.invoke(app, ["reliability", str(ratings), "--qc-file", str(gold), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["overall"]["correct"] == 4                # same as --qc-rater qc


def test_cli_usage_and_input_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reliability", str(FLAGS)])
    assert result.exit_code == 2 and "--qc" in result.output
    result = runner.invoke(app, ["reliability", str(FLAGS), "--qc-rater", "qc", "--qc", "consensus"])
    assert result.exit_code == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,label,flag\nq1,r1,A,perhaps\n")
    result = runner.invoke(app, ["reliability", str(bad), "--qc", "consensus"])
    assert result.exit_code == 1 and "'perhaps'" in result.output


def test_qc_consensus_is_one_flag_in_both_commands_and_qc_consensus_its_alias() -> None:
    """Issue 25: ``reliability --qc consensus`` and ``report --qc-consensus`` named one concept two ways; both
    commands now declare the same QC flags (``--qc-consensus``), and ``--qc consensus`` is an alias saying so."""
    from stableval.commands.common import QC_FLAGS

    for command in ("reliability", "report"):
        help_text = " ".join(runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output.split())
        assert "--qc-consensus" in help_text and "Alias of --qc-consensus" in help_text
        assert all(name in help_text for name in ("--qc-rater", "--qc-file"))
    assert set(QC_FLAGS) == {"qc_rater", "qc_file", "qc_consensus", "qc_alias"}
    new = runner.invoke(app, ["reliability", str(FLAGS), "--qc-consensus", "-f", "csv"])
    old = runner.invoke(app, ["reliability", str(FLAGS), "--qc", "consensus", "-f", "csv"])
    assert new.exit_code == old.exit_code == 0 and new.output == old.output
    both = runner.invoke(app, ["reliability", str(FLAGS), "--qc-file", str(FLAGS), "--qc-consensus"])
    assert both.exit_code == 2 and "give one QC source, not --qc-file and --qc-consensus" in " ".join(
        part for part in both.output.replace("│", " ").split())
