"""``stableval score`` and ``stableval demo``: output formats, exit codes, error messages that say what to fix, gold
accuracy, tie rules, the MV/STABLEVAL comparison and convergence warnings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from typer.testing import CliRunner

from stableval.cli import app
from stableval.data import example_path
from stableval.data.frames import as_table
from stableval.datasets import load_mt_bench
from stableval.errors import InputError
from stableval.evaluate import score_agents

from command_line import LEVEL_FLAGS, clean_failure, ties_file, two_item_ratings
from crowdkit_fixtures import load_crowdkit
from paths import MT_BENCH, shared_file

runner = CliRunner()


def test_error_messages_are_not_markup(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label\nq1,a,r1,[/]\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)
    assert "error:" in output and "'[/]'" in output


def test_a_name_spelled_like_our_style_tags_prints_literally(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    (tmp_path / "[bold]d[").mkdir()
    path = two_item_ratings(tmp_path / "[bold]d[" / "]f.csv", agent="[bold]x[/]")  # the path reads "[bold]d[/]f.csv"
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "10"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "[bold]d[/]f.csv:" in result.output  # the file name in the dataset line
    assert "\n [bold]x[/] " in result.output  # the leaderboard row
    assert "P([bold]x[/] scores above m2)" in result.output or "P(m2 scores above [bold]x[/])" in result.output
    assert "per agent: [bold]x[/]" in result.output or ", [bold]x[/] " in result.output  # the comparison line
    assert "\u2060" not in result.output


def test_jsonl_bad_byte_inside_a_line_names_the_line(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "d3.jsonl"
    path.write_bytes(b'{"item":"q1","agent":"m1","rater":"r1","label":"good"}\n'
                     b'{"item":"q1","agent":"m1","rater":"caf\xe9","label":"bad"}\n')
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "5"]), 1)
    assert "line 2 is not UTF-8" in output
    path.write_bytes(b'{"item":"q1","agent":"m1","rater":"r1","label":"good"}\n{"i\xc3\x28tem":"q1"}\n')
    assert "line 2 is not UTF-8" in clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)


def test_json_output_never_holds_non_finite_numbers(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "5", "--alpha-pi", "1e6", "-f", "json",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))


def test_output_into_a_missing_folder_creates_it(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    target = tmp_path / "results" / "deeper" / "scores.json"
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "5", "-f", "json", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text())["command"].startswith("stableval")


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_duplicated_column_header_is_refused(tmp_path: Path, suffix: str) -> None:
    """Issue 16: bad input."""
    path = tmp_path / f"dup{suffix}"
    if suffix == ".csv":
        path.write_text("item,agent,rater,label,label\nq1,m1,r1,good,bad\n")
    elif suffix == ".tsv":
        path.write_text("item\tagent\trater\tlabel\tlabel\nq1\tm1\tr1\tgood\tbad\n")
    elif suffix == ".jsonl":
        path.write_text('{"item":"q1","agent":"m1","rater":"r1","label":"good"}\n'
                        '{"item":"q1","agent":"m2","rater":"r1","label":"good","label":"bad"}\n')
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = [pa.array(v) for v in (["q1"], ["m1"], ["r1"], ["good"], ["bad"])]
        pq.write_table(pa.Table.from_arrays(columns, names=["item", "agent", "rater", "label", "label"]), path)
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "0"]), 1)
    assert "'label'" in output and ("more than once" in output or "twice" in output)
    assert "FieldRef" not in output


def test_pipe_separated_csv_says_unrecognised_separator(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "pipe.csv"
    path.write_text("item|agent|rater|label\nq1|m1|r1|good\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)
    assert "unrecognised separator '|'" in output


def test_stray_integer_label_warns_with_unused_levels_and_rows(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "stray.csv"
    labels = ["0", "1", "2", "1", "7", "2", "0", "1"]
    pd.DataFrame({"item": ["q1"] * 4 + ["q2"] * 4, "agent": ["A", "A", "B", "B"] * 2, "rater": ["r1", "r2"] * 4,
                  "label": labels}).to_csv(path, index=False)
    result = runner.invoke(app, ["score", str(path), "-B", "0", "-m", "mv", "-f", "json"])
    assert result.exit_code == 0, result.output
    warning = " ".join(result.stderr.split())
    assert "warning: integer labels 0..7 but levels 3, 4, 5, 6 never occur, so K = 8" in warning
    assert "row 5 (line 6)" in warning and "setting the levels to 0,1,2" in warning  # the fix, in words
    payload = json.loads(result.stdout)
    assert any(note.startswith("WARNING: integer labels 0..7") for note in payload["dataset"]["notes"])
    # the suggested fix turns the stray label into an error naming its row
    output = clean_failure(runner.invoke(app, ["score", str(path), "--levels", "0,1,2"]), 1)
    assert "row 5 (line 6), column 'label'" in output and "'7'" in output


def test_every_integer_level_used_gives_no_warning(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "ok.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": ["A", "B", "A", "B"], "rater": "r1",
                  "label": ["0", "1", "2", "1"]}).to_csv(path, index=False)
    result = runner.invoke(app, ["score", str(path), "-B", "0", "-m", "mv"])
    assert result.exit_code == 0 and "warning" not in result.stderr.lower()


def test_duplicate_error_names_the_column_that_tells_rows_apart(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": "A", "rater": "r1", "criterion": ["fluency", "facts"] * 2,
                  "label": ["good", "bad", "good", "good"]}).to_csv(path, index=False)
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)
    assert "differ in column(s) 'criterion'" in output and "--duplicates keep would merge them" in output
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "--duplicates", "keep", "-B", "0", "-m", "mv"])
    assert result.exit_code == 0 and "differ in column(s) 'criterion'" in " ".join(result.stderr.split())


def test_cli_spelling_in_error_messages(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "twice.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,good\nq1,A,r1,bad\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)
    assert "--duplicates first|last|keep" in output and "duplicates='first'" not in output


def test_an_input_error_names_its_option_in_python_terms_and_the_cli_spells_it_as_a_flag(tmp_path: Path) -> None:
    """Issue 25: the data layer says ``duplicates='first'|...`` (``option='duplicates'``); only the command line
    writes ``--duplicates``, from the option, for every kind of option: an input option, a column role, another
    option of the running command (``--rater-info``) and a format."""
    from stableval.data import read_any

    path = tmp_path / "twice.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,good\nq1,A,r1,bad\n")
    with pytest.raises(InputError) as caught:
        read_any(path, levels="bad,good")
    assert caught.value.option == "duplicates" and "--" not in str(caught.value)
    assert "allowed: duplicates='first'|'last'|'keep' to keep the first" in str(caught.value)
    path.write_text("query,agent,rater,label\nq1,A,r1,good\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS]), 1)
    assert "name it with --item-col NAME" in output and "columns=" not in output
    path.write_text("item,agent,rater,label\nq1,A,r1,good\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "--raters", "llm"]), 1)
    assert "a rater metadata file (--rater-info FILE; columns" in output and "rater_info=" not in output
    output = clean_failure(runner.invoke(app, ["score", str(path.with_suffix(".txt")), *LEVEL_FLAGS]), 1)
    assert output.rstrip().endswith("or pass --input-format")


def test_a_dataset_error_moved_to_its_file_still_spells_the_flag(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    folder = tmp_path / "votes"
    folder.mkdir()
    frame = pd.DataFrame({"item": ["q1", "q2", "q1"], "agent": "A", "rater": "r1", "label": ["good", "bad", "bad"]})
    frame.iloc[:2].to_parquet(folder / "0.parquet", index=False)
    frame.iloc[2:].to_parquet(folder / "1.parquet", index=False)
    output = clean_failure(runner.invoke(app, ["score", str(folder), *LEVEL_FLAGS]), 1)
    assert "1.parquet, row 1:" in output and "(row 3 of the dataset" in output
    assert "--duplicates first|last|keep" in output and "duplicates='first'" not in output


@pytest.mark.parametrize("body", ["q1,A,r1,1,EXTRA\nq2,A,r1,0\n", "q1,A,r1,1,\nq2,A,r1,0,\n"])
def test_a_row_longer_than_the_header_is_refused_not_shifted(tmp_path: Path, body: str) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "long.csv"
    path.write_text("item,agent,rater,label\n" + body)
    output = clean_failure(runner.invoke(app, ["score", str(path), "-B", "0"]), 1)
    assert "line 2 has 5 fields but the header names 4" in output and "long.csv" in output
    assert ("separator at the end" in output) == body.endswith(",\n")


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


def test_demo_from_a_long_path_is_never_wrapped_into_a_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27: ``make test`` failed in a clone whose path was 23 characters or more: the summary line, which starts
    with the example's absolute path, was hard-wrapped at 140 columns into a pipe, splitting "65 raters". Output to
    a pipe or a file is never wrapped, however long the path (here 200+ characters) or a line."""
    import stableval.data

    folder = tmp_path.joinpath(*["a-folder-of-a-long-clone-path"] * 7)
    folder.mkdir(parents=True)
    copy = folder / example_path("mt_bench").name
    copy.write_bytes(example_path("mt_bench").read_bytes())
    assert len(str(copy)) >= 200
    monkeypatch.setattr(stableval.data, "example_path", lambda name=None: copy)
    result = runner.invoke(app, ["demo", "-B", "20"])
    assert result.exit_code == 0, result.output
    summary = next(line for line in result.output.splitlines() if line.startswith(str(copy) + ":"))
    assert "3,378 judgments of 480 responses (80 items × 6 agents) by 65 raters; 7.04 judgments per response" in summary
    assert f"Same as: stableval score {copy} --duplicates keep" in result.output.splitlines()
    rows = [line.split() for line in result.output.splitlines() if line.startswith(" gpt-4 ")]
    assert len(rows) == 1 and len(rows[0]) == 17  # the whole row on one line: name, responses, 3 × (score, CI, rank)


@pytest.mark.slow  # a fresh interpreter
def test_demo_through_a_200_character_path_into_a_real_pipe(tmp_path: Path) -> None:
    """Issue 27: the package imported through a path of 200+ characters (a symlink to src/), the demo run in a
    fresh process with stdout a real pipe and COLUMNS set: the summary line, which starts with that path, is whole."""
    import os
    import subprocess
    import sys

    from paths import SRC

    folder = tmp_path.joinpath(*["a-folder-of-a-long-clone-path"] * 7)
    folder.mkdir(parents=True)
    (folder / "src").symlink_to(SRC.parent, target_is_directory=True)
    example = folder / "src" / "stableval" / "examples" / example_path("mt_bench").name
    assert len(str(example)) >= 200
    env = {**os.environ, "PYTHONPATH": str(folder / "src"), "COLUMNS": "80"}
    run = subprocess.run([sys.executable, "-m", "stableval", "demo", "-B", "20"], capture_output=True, text=True,
                         env=env, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = next(line for line in run.stdout.splitlines() if line.startswith(str(example) + ":"))
    assert "by 65 raters; 7.04 judgments per response" in summary


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


def _mv_scores(output: str) -> dict[str, float]:
    return {row["agent"]: row["score"] for row in json.loads(output)["scores"] if row["method"] == "mv"}


@pytest.mark.slow
def test_score_honours_every_tie_rule(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = ties_file(tmp_path)
    got = {}
    for rule in ("split", "first", "lowest", "highest"):
        result = runner.invoke(app, ["score", str(path), "-m", "mv", "--ties", rule, "-B", "0", "-f", "json"])
        assert result.exit_code == 0, result.output
        got[rule] = _mv_scores(result.stdout)
    assert got["split"] == {"A": 0.5, "B": 0.5}
    assert got["first"] == {"A": 1.0, "B": 0.0} and got["lowest"] == {"A": 0.0, "B": 0.0}
    assert got["highest"] == {"A": 1.0, "B": 1.0}


# ====================================================================================== accuracy against gold
def gold_case(folder: Path) -> tuple[Path, Path]:
    """q0 1,1 (gold 1); q1 0,1 tie (gold 1); q2 0,0 (gold 0); q3 1,0 tie (gold 1)."""
    ratings = folder / "answers.csv"
    ratings.write_text("item,rater,label\nq0,a,1\nq0,b,1\nq1,a,0\nq1,b,1\nq2,a,0\nq2,b,0\nq3,a,1\nq3,b,0\n")
    gold = folder / "truth.csv"
    gold.write_text("question,truth\nq0,1\nq1,1\nq2,0\nq3,1\n")
    return ratings, gold


def test_score_gold_accuracy_uses_the_tie_rule(tmp_path: Path) -> None:
    """Regression: ``score --gold`` scored majority vote by its vote shares, so ``--ties`` changed nothing.
    Issue 12: exact conventions."""
    ratings, gold = gold_case(tmp_path)
    expected = {"split": 0.75, "lowest": 0.5, "highest": 1.0, "first": 0.75}
    for rule, accuracy in expected.items():
        result = runner.invoke(app, ["score", str(ratings), "--default-agent", "bot", "--gold", str(gold), "-B", "0",
                                     "-m", "mv", "--ties", rule, "-f", "json"])
        assert result.exit_code == 0, result.output
        row = next(r for r in json.loads(result.stdout)["gold_accuracy"] if r["agent"] == "(all)")
        assert row["accuracy"] == pytest.approx(accuracy), rule
        assert row["expected_accuracy"] == pytest.approx(accuracy), rule   # hard labels: the same number


def test_score_json_csv_and_table_carry_the_comparison(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    path = shared_file(*MT_BENCH)
    table = load_mt_bench(path)
    result = score_agents(table, ["mv", "stableval"], bootstrap=0)
    comparison = result.comparison()
    assert comparison is not None
    wide = result.leaderboard().set_index("agent")
    np.testing.assert_allclose(comparison.agents.set_index("agent")["change"],
                               (wide["stableval_score"] - wide["mv_score"]).loc[comparison.agents["agent"]])
    assert comparison.pearson == pytest.approx(scipy.stats.pearsonr(wide["mv_score"], wide["stableval_score"])[0])
    assert comparison.spearman == pytest.approx(
        scipy.stats.spearmanr(wide["mv_score"], wide["stableval_score"])[0])
    change = (wide["stableval_score"] - wide["mv_score"])
    assert comparison.largest_agent == change.abs().idxmax()
    assert comparison.rank_changes == int((wide["stableval_rank"] != wide["mv_rank"]).sum())
    # MV's baseline scores on MT-Bench turn 1 (ties split): gpt-4 0.775, llama-13b 0.091 (README)
    assert wide.loc["gpt-4", "mv_score"] == pytest.approx(0.775, abs=5e-4)
    # the command line: JSON, CSV and the table
    out = tmp_path / "mt.csv"
    assert runner.invoke(app, ["convert", "mt-bench", str(path), "-o", str(out)]).exit_code == 0
    args = ["score", str(out), "--levels", "loss,tie,win", "--duplicates", "keep", "-m", "mv,stableval", "-B", "0"]
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    assert payload["comparison"]["method"] == "stableval" and payload["comparison"]["baseline"] == "mv"
    assert payload["comparison"]["largest_change"]["agent"] == comparison.largest_agent
    csv = pd.read_csv(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout))
    rows = csv[csv["method"] == "stableval"].set_index("agent")
    np.testing.assert_allclose(rows["score_minus_mv"], change.loc[rows.index], atol=1e-12)
    assert (csv.loc[csv["method"] == "mv", "score_minus_mv"] == 0).all()
    text = runner.invoke(app, args).stdout
    assert "STABLEVAL − MV per agent: " in text and "Pearson r = " in text and "ranked differently" in text
    no_pair = json.loads(runner.invoke(app, [*args[:-4], "-m", "ds,stableval", "-B", "0", "-f", "json"]).stdout)
    assert "comparison" not in no_pair


def test_cli_score_by_rater_kind(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, _ = judge_files
    scores = {}
    for kind in ("human", "llm"):
        result = runner.invoke(app, ["score", str(ratings), "--raters", kind, "-m", "mv", "-B", "0", "-f", "json"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert payload["dataset"]["raters"] == {"human": 8, "llm": 2}[kind]
        scores[kind] = {row["agent"]: row["score"] for row in payload["scores"]}
    assert scores["llm"]["gpt-big"] > scores["human"]["gpt-big"]
    bare = tmp_path / "bare.csv"
    pd.read_csv(ratings)[["item", "agent", "rater", "label"]].to_csv(bare, index=False)
    failed = runner.invoke(app, ["score", str(bare), "--raters", "llm", "-B", "0"])
    assert failed.exit_code == 1 and "kinds are not known" in failed.output
    usage = runner.invoke(app, ["score", str(bare), "--raters", "robots"])
    assert usage.exit_code == 2


def test_learnt_priors_from_the_command_line() -> None:
    args = ["score", str(example_path()), "--duplicates", "keep", "-B", "0", "-m", "stableval", "-f", "json"]
    for value in ("auto", "pooled"):
        result = runner.invoke(app, [*args, "--param", f"stableval.alpha_pi={value}"])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.output)
        assert payload["settings"]["params"]["stableval"]["alpha_pi"] == value
        assert "alpha_pi" in payload["fits"]["stableval"]
    bad = runner.invoke(app, [*args, "--param", "stableval.alpha_pi=sometimes"])
    assert bad.exit_code != 0 and "one of auto, pooled" in bad.output


# ---------------------------------------------------------------------------------------------- reporting
@pytest.mark.slow
def test_a_fit_at_the_cap_says_so_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_text(example_path().read_text())
    args = ["score", str(path), "--duplicates", "keep", "-B", "0", "--max-iter", "3"]
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "did NOT converge" in table.output and "--max-iter" in table.output
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).output)
    assert payload["fits"]["ds"]["converged"] is False
    assert any("--max-iter" in warning for warning in payload["warnings"])
    csv = runner.invoke(app, [*args, "-f", "csv"]).output.splitlines()
    assert csv[0].split(",")[-1] == "converged" and csv[-1].endswith("False")
    diagnose = json.loads(runner.invoke(app, ["diagnose", str(path), "--duplicates", "keep", "--max-iter", "3",
                                              "-f", "json"]).output)
    assert any("--max-iter" in warning for warning in diagnose["warnings"])
    report = tmp_path / "report.html"
    assert runner.invoke(app, ["report", str(path), "--duplicates", "keep", "-B", "20", "--max-iter", "3",
                               "-o", str(report)]).exit_code == 0
    assert "class='warning'" in report.read_text() and "--max-iter" in report.read_text()


def test_score_table_renders_for_the_new_methods() -> None:
    """Regression: the score table's footnote read ``log_likelihood`` from every non-empty fit summary, and
    ZeroBasedSkill's (which is not EM) had none."""
    import io

    from rich.console import Console

    from stableval import score_agents

    frame = load_crowdkit("zbs", "synthetic")[0]
    result = score_agents(as_table(frame.assign(agent="A")), ["onecoin", "wawa", "zbs"], bootstrap=20)
    out = io.StringIO()
    result.render(Console(file=out, width=160))
    text = out.getvalue()
    assert "OneCoin: EM converged" in text and "ZBS: EM" not in text and "Wawa" in text


# ====================================================================================== --combine ppi
def _people_on_first(ratings: Path, folder: Path, items: int) -> Path:
    """The planted-judge ratings with people's judgments kept on the first ``items`` items only."""
    frame = pd.read_csv(ratings)
    kept = frame[(frame["rater_kind"] == "llm") | (frame["item"].str[1:].astype(int) < items)]
    path = folder / f"people_{items}.csv"
    kept.to_csv(path, index=False)
    return path


def test_score_combine_ppi_side_by_side(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 30: people-only, judge-only and PPI scores per agent, widths and the human ratings saved; JSON and CSV
    carry the same numbers as the API."""
    from stableval import ppi_scores
    from stableval.data.raters import load_with_raters

    ratings = _people_on_first(judge_files[0], tmp_path, 60)
    args = ["score", str(ratings), "--combine", "ppi", "-B", "100"]
    text = runner.invoke(app, args, terminal_width=220)
    assert text.exit_code == 0, text.output
    for header in ("People [95% CI]", "Judge [95% CI]", "PPI++ [95% CI]", "Width ratio", "Eff. n (saved)"):
        assert header in text.stdout
    assert "human judgments saved" in text.stdout
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    rows = {row["agent"]: row for row in payload["ppi"]}
    assert set(rows) == {"gpt-big", "gpt-small", "claude-x", "llama-y"}
    assert all(row["both"] == 60 and row["judge_only"] == 240 and row["width_ratio"] < 1 for row in rows.values())
    loaded, info, _ = load_with_raters(ratings)
    assert info is not None
    api = ppi_scores(loaded.table, info, bootstrap=100).scores.set_index("agent")
    for agent, row in rows.items():
        assert row["ppi_score"] == pytest.approx(api.loc[agent, "ppi_score"], abs=1e-12)
        assert row["people_saved"] == pytest.approx(api.loc[agent, "people_saved"], abs=1e-9)
    csv = pd.read_csv(io.StringIO(runner.invoke(app, [*args, "-f", "csv"]).stdout)).set_index("agent")
    assert {"people_width", "judge_width", "ppi_width", "effective_people", "ratings_saved"} <= set(csv.columns)
    np.testing.assert_allclose(csv.loc[api.index, "ppi_width"], api["ppi_width"], atol=1e-12)


def test_score_combine_ppi_interval_kinds(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 30: ``--interval`` (declared once as ``INTERVAL``) reaches ``ppi_scores``: clt gives ppi_py's
    intervals, the default is bootstrap-t; a kind not declared, or the flag without --combine ppi, is a usage
    error."""
    from stableval import ppi_scores
    from stableval.data.raters import load_with_raters

    ratings = _people_on_first(judge_files[0], tmp_path, 60)
    args = ["score", str(ratings), "--combine", "ppi", "-B", "100", "-f", "json"]
    loaded, info, _ = load_with_raters(ratings)
    assert info is not None
    for extra, kind in (([], "bootstrap-t"), (["--interval", "clt"], "clt"), (["--interval", "t"], "t")):
        payload = json.loads(runner.invoke(app, [*args, *extra]).stdout)
        assert payload["settings"]["interval"] == kind
        api = ppi_scores(loaded.table, info, bootstrap=100, interval=kind).scores.set_index("agent")
        for row in payload["ppi"]:
            assert row["ppi_ci_low"] == pytest.approx(api.loc[row["agent"], "ppi_ci_low"], abs=1e-12)
    output = clean_failure(runner.invoke(app, [*args, "--interval", "wald"]), 2)
    assert "--interval" in output and "bootstrap-t, t, clt" in output
    output = clean_failure(runner.invoke(app, ["score", str(ratings), "-B", "0", "--interval", "t"]), 2)
    assert "--interval" in output and "--combine ppi" in output


def test_score_combine_ppi_rating_probabilities(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 30: ``--rating-probability FILE`` (item, agent, probability, or plan's p_active) weights the PPI++ and
    people-only scores by 1 / probability, as the API does; an answer people rated without a probability is an
    input error, and the flag needs --combine ppi."""
    from stableval import ppi_scores
    from stableval.data.raters import load_with_raters
    from stableval.evaluate.ppi import response_probabilities

    ratings = _people_on_first(judge_files[0], tmp_path, 60)
    frame = pd.read_csv(ratings)
    answers = frame[["item", "agent"]].drop_duplicates().assign(p_active=0.2)
    path = tmp_path / "probabilities.csv"
    answers.to_csv(path, index=False)
    args = ["score", str(ratings), "--combine", "ppi", "-B", "0", "--interval", "clt", "-f", "json"]
    result = runner.invoke(app, [*args, "--rating-probability", str(path)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    loaded, info, _ = load_with_raters(ratings)
    assert info is not None
    weights = response_probabilities(loaded.table, answers)
    api = ppi_scores(loaded.table, info, bootstrap=0, interval="clt", probability=weights).scores.set_index("agent")
    plain = ppi_scores(loaded.table, info, bootstrap=0, interval="clt").scores.set_index("agent")
    for row in payload["ppi"]:
        assert row["ppi_score"] == pytest.approx(api.loc[row["agent"], "ppi_score"], abs=1e-12)
        assert row["ppi_score"] != pytest.approx(plain.loc[row["agent"], "ppi_score"], abs=1e-6)
    assert any("active inference" in note for note in payload["notes"])
    answers.iloc[:5].to_csv(path, index=False)  # the first answers only: most people-rated ones lack a probability
    output = clean_failure(runner.invoke(app, [*args, "--rating-probability", str(path)]), 1)
    assert "rating probabilities must be known" in output
    output = clean_failure(runner.invoke(app, ["score", str(ratings), "-B", "0", "--rating-probability", str(path)]), 2)
    assert "--rating-probability" in output and "--combine ppi" in output


def test_score_combine_ppi_errors(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 30: too few responses with both kinds of rating names the minimum; the kinds must be known; flags that
    do not apply are usage errors."""
    few = _people_on_first(judge_files[0], tmp_path, 8)
    output = clean_failure(runner.invoke(app, ["score", str(few), "--combine", "ppi", "-B", "0"]), 1)
    assert "the minimum is 10 per agent" in output and "'gpt-big' 8" in output
    bare = tmp_path / "bare.csv"
    pd.read_csv(judge_files[0])[["item", "agent", "rater", "label"]].to_csv(bare, index=False)
    output = clean_failure(runner.invoke(app, ["score", str(bare), "--combine", "ppi", "-B", "0"]), 1)
    assert "--rater-info FILE" in output
    for extra in (["--raters", "human"], ["--refit"]):
        output = clean_failure(runner.invoke(app, ["score", str(few), "--combine", "ppi", *extra]), 2)
        assert "--combine ppi" in output
    assert clean_failure(runner.invoke(app, ["score", str(few), "--combine", "average"]), 2)


@pytest.mark.parametrize("extra", [["-m", "mace", "--param", "mace.seed=4294967296"],
                                   ["-m", "stableval", "--param", "stableval.seed=4294967296"],
                                   ["-m", "mv", "--ties", "random", "--param", "mv.seed=-1"],
                                   ["-m", "mace", "--seed", "4294967296"]])
def test_a_seed_no_estimator_can_take_is_a_usage_error(tmp_path: Path, extra: list[str]) -> None:
    """Issue 26 (E5): seeds out of 0..2**32-1 are refused naming the flag and the range, not a numpy ValueError."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "0", *extra]), 2)
    assert extra[-2] in output or f"'{extra[-2]}'" in output
    assert "4294967295" in output or "≥ 0" in output


def test_the_largest_seed_seed_accepts_works_with_every_method(tmp_path: Path) -> None:
    """Issue 26 (E5): ``--seed 4294967295`` (the bound --seed states) runs MACE's restarts (seed + j wraps)."""
    path = two_item_ratings(tmp_path / "r.csv")
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "2", "-m", "mace,stableval,mv",
                                 "--ties", "random", "--seed", "4294967295"])
    assert result.exit_code == 0, (result.output, result.exception)


@pytest.mark.parametrize("raters", [[], ["--raters", "human"]])
def test_score_notes_rater_info_names_that_rate_nothing(tmp_path: Path, raters: list[str]) -> None:
    """Issue 26 (E8): the note diagnose gives, in the table and the JSON's dataset notes."""
    path = two_item_ratings(tmp_path / "r.csv")
    info = tmp_path / "raters.csv"
    info.write_text("name,kind,family\nr1,human,\nr2,human,\nghost,human,\n")
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "0", "--rater-info", str(info), *raters])
    assert result.exit_code == 0, result.output
    assert "do not rate in" in result.output and "ghost" in result.output
    result = runner.invoke(app, ["score", str(path), *LEVEL_FLAGS, "-B", "0", "--rater-info", str(info), *raters,
                                 "-f", "json"])
    assert any("ghost" in note for note in json.loads(result.stdout)["dataset"]["notes"])
