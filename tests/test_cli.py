"""The `stableval` command: output formats, exit codes, and error messages that say what to fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import example_path

runner = CliRunner()


def write_ratings(path: Path) -> Path:
    frame = pd.DataFrame({
        "item": ["q1", "q1", "q1", "q2", "q2", "q1", "q1", "q2", "q2"],
        "model": ["A", "A", "A", "A", "A", "B", "B", "B", "B"],
        "annotator": ["r1", "r2", "r3", "r1", "r2", "r1", "r2", "r1", "r3"],
        "rating": ["good", "good", "bad", "ok", "ok", "bad", "ok", "bad", "bad"],
    })
    frame.to_csv(path, index=False)
    return path


def test_score_table_output(tmp_path: Path) -> None:
    path = write_ratings(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["score", str(path), "--levels", "bad,ok,good", "-B", "50"])
    assert result.exit_code == 0, result.output
    for text in ("Leaderboard", "MV [95% CI]", "STABLEVAL [95% CI]", "9 judgments", "2 agents", "3 raters"):
        assert text in result.output
    # best agent first
    assert result.output.index(" A ") < result.output.index(" B ")


def test_score_json_and_csv_outputs(tmp_path: Path) -> None:
    path = write_ratings(tmp_path / "ratings.csv")
    out = tmp_path / "scores.json"
    result = runner.invoke(app, ["score", str(path), "--levels", "bad,ok,good", "-B", "40", "--format", "json",
                                 "-o", str(out), "--method", "mv,stableval"])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["dataset"]["judgments"] == 9
    assert {row["method"] for row in payload["scores"]} == {"mv", "stableval"}
    assert payload["settings"]["bootstrap"] == 40 and "command" in payload
    result = runner.invoke(app, ["score", str(path), "--levels", "bad,ok,good", "-B", "0", "-f", "csv"])
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("method,agent,score,ci_low,ci_high,rank") and len(lines) == 7


def test_credit_flag_changes_scores(tmp_path: Path) -> None:
    path = write_ratings(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["score", str(path), "--levels", "bad,ok,good", "--credit", "0,0,1", "-B", "0",
                                 "-f", "json", "-m", "mv"])
    scores = {row["agent"]: row["score"] for row in json.loads(result.output)["scores"]}
    assert scores == {"A": pytest.approx(0.5), "B": pytest.approx(0.0)}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--levels", "bad,good"], ["row 4 (line 5)", "'rating'", "'ok'", "bad, good"]),
        (["--levels", "bad,ok,good", "--credit", "0,x,1"], ["credit", "'x'"]),
        (["--levels", "bad,ok,good", "--credit", "0,1"], ["credit", "3"]),
        (["--levels", "good"], ["at least 2 levels"]),
    ],
)
def test_bad_input_exits_1_with_a_message_that_says_what_to_fix(tmp_path: Path, args: list[str],
                                                                  expected: list[str]) -> None:
    path = write_ratings(tmp_path / "ratings.csv")
    result = runner.invoke(app, ["score", str(path), *args])
    assert result.exit_code == 1
    message = result.output
    assert "ratings.csv" in message or "credit" in message
    for text in expected:
        assert text in message, message


def test_missing_file_and_missing_column(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", str(tmp_path / "nope.csv")])
    assert result.exit_code == 1 and "nope.csv" in result.output
    (tmp_path / "bad.csv").write_text("item,model,rating\nq1,A,1\n")
    result = runner.invoke(app, ["score", str(tmp_path / "bad.csv")])
    assert result.exit_code == 1
    assert "rater" in result.output and "--rater-col" in result.output


def test_duplicates_error_names_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "dup.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\nq1,A,r1,0\nq2,A,r1,1\n")
    result = runner.invoke(app, ["score", str(path)])
    assert result.exit_code == 1 and "--duplicates" in result.output
    result = runner.invoke(app, ["score", str(path), "--duplicates", "last", "-B", "0"])
    assert result.exit_code == 0 and "dropped 1 duplicate" in result.output


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    path = write_ratings(tmp_path / "ratings.csv")
    assert runner.invoke(app, ["score", str(path), "--method", "median"]).exit_code == 2
    assert runner.invoke(app, ["score", str(path), "--format", "xml"]).exit_code == 2
    assert runner.invoke(app, ["score", str(path), "--bootstrap", "-3"]).exit_code == 2


def test_demo_scores_the_bundled_example() -> None:
    result = runner.invoke(app, ["demo", "-B", "100"])
    assert result.exit_code == 0, result.output
    assert "1,689" in result.output and "3,378 judgments" in result.output and "65 raters" in result.output
    for agent in ("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b-v1.2", "alpaca-13b", "llama-13b"):
        assert agent in result.output


def test_pairwise_example_via_score(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", str(example_path()), "--duplicates", "keep", "-B", "0", "-f", "json",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    stable = {r["agent"]: r["rank"] for r in payload["scores"] if r["method"] == "stableval"}
    # the two GPT models lead and the two 13B instruction-tuned baselines trail, under every method
    assert {stable["gpt-4"], stable["gpt-3.5-turbo"]} == {1, 2}
    assert {stable["alpaca-13b"], stable["llama-13b"]} == {5, 6}


def test_console_script_and_version() -> None:
    done = subprocess.run([sys.executable, "-m", "stableval", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("stableval ")
    done = subprocess.run([sys.executable, "-m", "stableval", "score", "/no/such/file.csv"], capture_output=True,
                          text=True)
    assert done.returncode == 1 and "/no/such/file.csv" in done.stderr


def test_every_public_name_resolves() -> None:
    import stableval

    for name in stableval.__all__:
        assert getattr(stableval, name) is not None
    with pytest.raises(AttributeError):
        _ = stableval.no_such_name  # type: ignore[attr-defined]


def test_score_reports_accuracy_against_gold(tmp_path: Path) -> None:
    ratings = tmp_path / "answers.csv"
    ratings.write_text("item,rater,label\n" + "".join(
        f"q{i},r{r},{(i + (r == 2 and i % 3 == 0)) % 2}\n" for i in range(12) for r in range(3)))
    gold = tmp_path / "truth.csv"
    gold.write_text("question,truth\n" + "".join(f"q{i},{i % 2}\n" for i in range(12)))
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", str(ratings), "--default-agent", "bot", "--gold", str(gold), "-B", "0",
                                 "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    accuracy = {row["method"]: row["accuracy"] for row in json.loads(out.read_text())["gold_accuracy"]
                if row["agent"] == "(all)"}
    assert accuracy["mv"] == pytest.approx(1.0)  # two of three raters are always right
    text = runner.invoke(app, ["score", str(ratings), "--default-agent", "bot", "--gold", str(gold), "-B", "0"])
    assert "Accuracy against gold" in text.output and "MV: 1.0000 on 12 responses" in text.output
    text = runner.invoke(app, ["diagnose", str(ratings), "--default-agent", "bot", "--gold", str(gold)])
    assert text.exit_code == 0, text.output
    assert "Accuracy of the predicted levels against gold: 1.0000 on 12 responses" in text.output


def test_one_gold_file_for_score_diagnose_and_reliability(tmp_path: Path) -> None:
    """The same gold file (``question,truth``, no agent column, a flagged row) works for score --gold,
    diagnose --gold and reliability --qc-file."""
    ratings = tmp_path / "answers.csv"
    ratings.write_text("item,rater,label\n" + "".join(
        f"q{i},r{r},{(i + (r == 2 and i % 3 == 0)) % 2}\n" for i in range(12) for r in range(3)))
    gold = tmp_path / "truth.csv"
    gold.write_text("question,truth,flag\n" + "".join(f"q{i},{i % 2},no\n" for i in range(11)) + "q11,,yes\n")
    score = runner.invoke(app, ["score", str(ratings), "--default-agent", "bot", "--gold", str(gold), "-B", "0",
                                "-f", "json"])
    assert score.exit_code == 0, score.output
    rows = {row["method"]: row for row in json.loads(score.stdout)["gold_accuracy"] if row["agent"] == "(all)"}
    assert rows["mv"]["accuracy"] == pytest.approx(1.0) and rows["mv"]["gold_responses"] == 11   # flagged q11: none
    diagnose = runner.invoke(app, ["diagnose", str(ratings), "--default-agent", "bot", "--gold", str(gold)])
    assert diagnose.exit_code == 0, diagnose.output
    assert "Accuracy of the predicted levels against gold: 1.0000 on 11 responses" in diagnose.output
    reliability = runner.invoke(app, ["reliability", str(ratings), "--qc-file", str(gold), "--min-items", "1",
                                      "-f", "json"])
    assert reliability.exit_code == 0, reliability.output
    payload = json.loads(reliability.stdout)
    evaluators = {row["evaluator"]: row for row in payload["evaluators"]}
    # r0 and r1 always match the truth; r2 is wrong on q0, q3, q6, q9; every rater mismatches QC's flag on q11
    assert (evaluators["r0"]["correct"], evaluators["r0"]["applicable"]) == (11, 11)
    assert (evaluators["r2"]["correct"], evaluators["r2"]["applicable"]) == (7, 11)
    assert payload["overall"]["flag_mismatches"] == 3 and payload["overall"]["qc_flagged"] == 1
