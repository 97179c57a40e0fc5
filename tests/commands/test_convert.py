"""``stableval convert``: a readable table from each public dataset, its suggested levels, and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import read_annotations
from stableval.datasets import read_gold

from paths import shared_file

runner = CliRunner()


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_converted_file_scores_without_levels(tmp_path: Path, suffix: str) -> None:
    """Issue 16: bad input."""
    from paths import shared_file

    source = shared_file("dawid_skene_1979")
    out = tmp_path / f"ds{suffix}"
    result = runner.invoke(app, ["convert", "dawid-skene", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "score it: stableval score " + str(out) + " --duplicates keep" in result.output
    scored = runner.invoke(app, ["score", str(out), "--duplicates", "keep", "-B", "0", "-m", "mv", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["dataset"]["levels"] == ["1", "2", "3", "4"]


# ====================================================================================== convert's --levels
def toy_truth(folder: Path, answers: list[tuple[str, str, int]], truth: list[tuple[str, int]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "answer.csv").write_text("question,worker,answer\n" + "".join(f"{q},{w},{a}\n" for q, w, a in answers))
    (folder / "truth.csv").write_text("question,truth\n" + "".join(f"{q},{t}\n" for q, t in truth))
    return folder


def test_convert_suggests_the_levels_present_for_one_based_labels(tmp_path: Path) -> None:
    """Regression: 1..4 labels were suggested as --levels 0,1,2,3,4 (a phantom level 0 that shifts the credit).
    Issue 12: exact conventions."""
    folder = toy_truth(tmp_path / "likert", [("q1", "w1", 1), ("q1", "w2", 2), ("q2", "w1", 4), ("q2", "w2", 3),
                                             ("q3", "w1", 4), ("q3", "w2", 4)], [("q1", 1), ("q2", 4)])
    out = tmp_path / "likert.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"score it: stableval score {out} --levels 1,2,3,4\n" in result.output
    assert "--levels 0," not in result.output and "level 0 occurs in no judgment or gold label" in result.output
    scored = runner.invoke(app, ["score", str(out), "--levels", "1,2,3,4", "-m", "mv", "-B", "0", "-f", "json"])
    payload = json.loads(scored.stdout)
    assert payload["dataset"]["credit"] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    # q1 1/2 tie → mean credit 1/6; q2 4/3 tie → 5/6; q3 4 → 1
    assert payload["scores"][0]["score"] == pytest.approx((1 / 6 + 5 / 6 + 1) / 3)


def test_convert_names_skipped_integer_labels(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    folder = toy_truth(tmp_path / "gap", [("q1", "w1", 1), ("q1", "w2", 2), ("q2", "w1", 4)], [("q1", 1)])
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "gap.csv")])
    assert result.exit_code == 0, result.output
    assert "--levels 1,2,4\n" in result.output
    assert "integer labels skip 3" in result.output and "score with --levels 1,2,3,4" in result.output
    # a gold level that no answer has is kept (score --gold would otherwise reject it)
    folder = toy_truth(tmp_path / "gold", [("q1", "w1", 1), ("q1", "w2", 2)], [("q1", 3)])
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "g.csv")])
    assert "--levels 1,2,3\n" in result.output


def test_convert_levels_on_real_data(tmp_path: Path) -> None:
    """A real 0-based set keeps 0..3; the same answers shifted to 1..4 get 1..4 and score identically.
    Issue 12: exact conventions."""
    source = shared_file("zheng2017_truth_inference", "s4_Face_Sentiment_Identification")
    out = tmp_path / "face.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(source), "-o", str(out)])
    assert result.exit_code == 0 and "--levels 0,1,2,3\n" in result.output
    shifted = tmp_path / "shifted"
    shifted.mkdir()
    answers = pd.read_csv(source / "answer.csv", dtype=str)
    answers[answers.columns[2]] = (answers[answers.columns[2]].astype(int) + 1).astype(str)
    answers.to_csv(shifted / "answer.csv", index=False)
    truth = pd.read_csv(source / "truth.csv", dtype=str)
    truth[truth.columns[1]] = (truth[truth.columns[1]].astype(int) + 1).astype(str)
    truth.to_csv(shifted / "truth.csv", index=False)
    out_shifted = tmp_path / "shifted.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(shifted), "-o", str(out_shifted)])
    assert result.exit_code == 0 and f"score it: stableval score {out_shifted} --levels 1,2,3,4\n" in result.output
    scores = [json.loads(runner.invoke(app, ["score", str(path), "--levels", levels, "-m", "mv", "-B", "0",
                                             "-f", "json"]).stdout)["scores"][0]["score"]
              for path, levels in ((out, "0,1,2,3"), (out_shifted, "1,2,3,4"))]
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)


def _toy_truth(tmp_path: Path) -> Path:
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "answer.csv").write_text("question,worker,answer\nq1,w1,1\nq1,w2,1\nq2,w1,0\nq2,w2,1\n")
    (folder / "truth.csv").write_text("question,truth\nq1,1\nq2,0\n")
    return folder


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_convert_cli_writes_a_readable_table(tmp_path: Path, suffix: str) -> None:
    folder = _toy_truth(tmp_path)
    out, gold = tmp_path / f"out{suffix}", tmp_path / "gold.csv"
    result = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(out), "--gold-output",
                                 str(gold)])
    assert result.exit_code == 0, result.output
    assert "4 judgments of 2 responses" in result.output
    levels = "" if suffix in (".parquet", ".jsonl") else " --levels 0,1"  # Parquet and JSONL carry their levels
    assert f"score it: stableval score {out}{levels}\n" in result.output
    table = read_annotations(out, levels="0,1")
    assert table.n_judgments == 4 and table.to_frame()["label"].tolist() == ["1", "1", "0", "1"]
    assert read_gold(gold) == {("q1", "toy"): "1", ("q2", "toy"): "0"}


def test_convert_cli_real_mt_bench(tmp_path: Path) -> None:
    path = shared_file("mt_bench_human_judgments", "mt_bench_human_votes_available.jsonl")
    out = tmp_path / "mt.csv"
    result = runner.invoke(app, ["convert", "mt_bench", str(path), "-o", str(out), "--mapping", "drop-ties"])
    assert result.exit_code == 0, result.output
    assert "dropped 405 tie votes" in result.output and "--duplicates keep" in result.output
    credit_run = runner.invoke(app, ["convert", "mt-bench", str(path), "-o", str(out), "--mapping", "tie-0.25"])
    assert "--levels loss,tie,win --credit 0,0.25,1 --duplicates keep" in credit_run.output
    table = read_annotations(out, levels="loss,tie,win", duplicates="keep")
    assert table.n_judgments == 2 * 1689


def test_convert_cli_errors(tmp_path: Path) -> None:
    folder = _toy_truth(tmp_path)
    bad_suffix = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "x.xlsx")])
    assert bad_suffix.exit_code == 2 and ".xlsx" in bad_suffix.output
    wrong_option = runner.invoke(app, ["convert", "truth-inference", str(folder), "-o", str(tmp_path / "x.csv"),
                                       "--turns", "1"])
    assert wrong_option.exit_code == 2 and "mt-bench" in wrong_option.output
    unknown = runner.invoke(app, ["convert", "imagenet", str(folder), "-o", str(tmp_path / "x.csv")])
    assert unknown.exit_code == 2
    missing = runner.invoke(app, ["convert", "qags", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x.csv")])
    assert missing.exit_code == 1 and "not found" in missing.output and "nowhere" in missing.output
