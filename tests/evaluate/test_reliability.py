"""Reliability against QC: NVIDIA's toy example, flags and skips, gold files, consensus, Wilson intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from stableval.data import annotations_from_frame
from stableval.datasets.gold import read_gold
from stableval.datasets.judgments import read_judgments
from stableval.datasets.nvidia_reliability import read_toy_json
from stableval.errors import InputError
from stableval.evaluate.reliability import reliability_vs_qc

from paths import RELIABILITY_FLAGS, nvidia_toy_files


def by_evaluator(result: object) -> pd.DataFrame:
    return result.evaluators.set_index("evaluator")  # type: ignore[attr-defined]


# ------------------------------------------------------------------ the toy example (spec)
def test_toy_example_reproduces_the_notebook() -> None:
    data, expected_path = nvidia_toy_files()
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
    data, _ = nvidia_toy_files()
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
    result = reliability_vs_qc(read_judgments(RELIABILITY_FLAGS), qc_rater="qc", min_items=3)
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
    frame = read_judgments(RELIABILITY_FLAGS)
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
    result = reliability_vs_qc(read_judgments(RELIABILITY_FLAGS), qc_rater="qc", confidence=0.9)
    for row in result.evaluators.itertuples(index=False):
        low, high = proportion_confint(row.correct, row.applicable, alpha=0.1, method="wilson")
        assert (row.ci_low, row.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_few_items_warning() -> None:
    result = reliability_vs_qc(read_judgments(RELIABILITY_FLAGS), qc_rater="qc", min_items=4)
    assert result.evaluators["few_items"].all()
    assert any("fewer than 4 applicable items" in note for note in result.notes)


def test_annotation_table_input() -> None:
    frame = pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": "A", "rater": ["qc", "r", "qc", "r"],
                          "label": [1, 1, 0, 1]})
    result = reliability_vs_qc(annotations_from_frame(frame), qc_rater="qc", min_items=1)
    assert by_evaluator(result).loc["r", "reliability"] == 0.5


def test_duplicates_and_qc_problems() -> None:
    frame = read_judgments(RELIABILITY_FLAGS)
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
