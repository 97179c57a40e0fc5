"""``stableval diagnose``: table and JSON output, the rater models it offers, the starts it shows, judges,
GLAD's difficulty, and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval import example_path
from stableval.cli import app
from stableval.evaluate.diagnostics import diagnose

from command_line import plain, ties_file
from synthetic import LOW_MID_HIGH, planted_table, small_three_level_table, write_table, yes_no_table

runner = CliRunner()


def test_diagnose_has_no_majority_vote_so_no_ties_flag(tmp_path: Path) -> None:
    """Issue 12: exact conventions."""
    result = runner.invoke(app, ["diagnose", str(ties_file(tmp_path)), "--ties", "first"])
    assert result.exit_code == 2 and "--ties" in result.output


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_outputs(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    yes_no_table().to_frame().to_csv(path, index=False)
    args = ["diagnose", str(path), "--levels", "no,yes", "-m", "ds"]
    result = runner.invoke(app, [*args, "--ambiguity-threshold", "0.0"])
    assert result.exit_code == 0, result.output
    for text in ("Raters (best class-balanced accuracy first)", "Spammer", "Most ambiguous responses", "a=no; b=yes",
                 "ambiguity > 0", "DS: EM converged"):
        assert text in result.output
    out = tmp_path / "diag.json"
    result = runner.invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert len(payload["raters"]) == 3 and "confusion" in payload["raters"][0] and "command" in payload
    result = runner.invoke(app, [*args, "-f", "csv"])
    assert result.output.splitlines()[0].startswith("rater,ratings,responses,accuracy,weighted_accuracy")
    result = runner.invoke(app, [*args, "-f", "csv", "--csv-table", "responses"])
    header = result.output.splitlines()[0]
    assert header.startswith("item,agent,judgments,n_no,n_yes,p_no,p_yes,predicted") and len(
        result.output.strip().splitlines()) == 5


def test_cli_errors(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    yes_no_table().to_frame().to_csv(path, index=False)
    result = runner.invoke(app, ["diagnose", str(path), "--levels", "no,yes", "-m", "mv"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["diagnose", str(path), "--levels", "no,maybe"])
    assert result.exit_code == 1 and "ratings.csv" in result.output and "'yes'" in result.output


def test_diagnose_command_difficulty_in_table_and_json(tmp_path: Path) -> None:
    table, _ = planted_table()
    path = tmp_path / "planted.csv"
    table.to_frame().to_csv(path, index=False)
    runner = CliRunner()
    shown = runner.invoke(app, ["diagnose", str(path), "--levels", "a,b,c", "--method", "mace", "--difficulty"])
    assert shown.exit_code == 0, shown.output
    assert "Hardest responses" in shown.output and "i7" in shown.output.split("Hardest responses")[1]
    out = runner.invoke(app, ["diagnose", str(path), "--levels", "a,b,c", "--method", "glad", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["difficulty"]["hardest"][0]["item"] == "i7"


# ====================================================================================== command line
def test_cli_diagnose_reports_the_judges(judge_files: tuple[Path, Path]) -> None:
    ratings, agents = judge_files
    result = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--length-col", "words",
                                 "--judge-bootstrap", "50", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    judges = {row["judge"]: row for row in payload["llm_judges"]["judges"]}
    assert judges["judge-gpt"]["self_preference"] > 0.05 and judges["judge-gpt"]["length_slope"] > 0
    assert payload["llm_judges"]["settings"]["agent_family"]["gpt-big"] == "gpt"
    table = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--judge-bootstrap", "0",
                                "--top", "0"])
    assert table.exit_code == 0 and "LLM judges against the human consensus" in table.stdout
    assert "judge-gpt" in table.stdout
    csv = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(agents), "--judge-bootstrap", "0",
                              "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 0 and csv.stdout.startswith("judge,family,judgments,compared,agreement")


def test_cli_judge_options_without_judges_are_refused(judge_files: tuple[Path, Path], tmp_path: Path) -> None:
    ratings, _ = judge_files
    people = tmp_path / "people.csv"
    frame = pd.read_csv(ratings)
    frame[frame["rater_kind"] == "human"].to_csv(people, index=False)
    plain = runner.invoke(app, ["diagnose", str(people), "--top", "0"])
    assert plain.exit_code == 0 and "LLM judges" not in plain.stdout
    length = runner.invoke(app, ["diagnose", str(people), "--length-col", "words"])
    assert length.exit_code == 1 and "no rater is an LLM judge" in length.output
    csv = runner.invoke(app, ["diagnose", str(people), "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 2 and "--csv-table" in csv.output
    missing = runner.invoke(app, ["diagnose", str(ratings), "--rater-info", str(tmp_path / "nope.csv")])
    assert missing.exit_code == 1 and "nope.csv: file not found" in missing.output


def test_diagnose_offers_the_rater_models_only(tmp_path: Path) -> None:
    path = write_table(small_three_level_table(), tmp_path)
    result = runner.invoke(app, ["diagnose", str(path), "--levels", ",".join(LOW_MID_HIGH), "-m", "mv"])
    assert result.exit_code == 2 and "allowed: ds, stableval" in plain(result.output)
    assert "mv has no rater model (it estimates no confusion matrix per rater" in plain(result.output)  # why
    with pytest.raises(ValueError, match="wawa has none \\(it estimates no confusion matrix per rater"):
        diagnose(small_three_level_table(), "wawa")
    assert "--ties" not in runner.invoke(app, ["diagnose", "--help"]).output


def test_diagnose_shows_every_start_and_the_one_kept() -> None:
    """Every start of the kept fit, in the table and the JSON (issue 28: the default's starts are the paper and the
    soft-vote starts; ``--param stableval.n_starts=2`` adds two random ones)."""
    args = ["diagnose", str(example_path()), "--duplicates", "keep", "--param", "stableval.n_starts=2"]
    table = runner.invoke(app, args)
    assert table.exit_code == 0
    line = next(text for text in table.output.splitlines() if "starts (log posterior" in text)
    payload = json.loads(runner.invoke(app, [*args, "-f", "json"]).output)
    starts = payload["fit"]["starts"]
    assert [row["start"] for row in starts] == ["paper", "soft", "random-1", "random-2"]
    assert f"kept: {payload['fit']['start']}" in line
    best = max((row for row in starts if row["admissible"]), key=lambda row: row["objective"])
    assert payload["fit"]["start"] == best["start"] and f"{best['objective']:,.2f}" in line


def test_score_and_diagnose_json_record_the_start_and_the_prior() -> None:
    """Issue 28: the JSON of ``score`` and ``diagnose`` says which start won, where the prior was learnt from and
    how strong it is (pseudo-judgments per true level)."""
    path = str(example_path())
    scored = runner.invoke(app, ["score", path, "--duplicates", "keep", "--bootstrap", "0", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    diagnosed = runner.invoke(app, ["diagnose", path, "--duplicates", "keep", "-f", "json"])
    assert diagnosed.exit_code == 0, diagnosed.output
    for fit in (json.loads(scored.stdout)["fits"]["stableval"], json.loads(diagnosed.stdout)["fit"]):
        assert fit["start"] in {record["start"] for record in fit["starts"]} == {"paper", "soft"}
        assert fit["prior_from"] == "flat fit"
        assert len(fit["prior_strength"]) == 3 and all(s > 0 for s in fit["prior_strength"])
        assert np.asarray(fit["alpha_pi"]).shape == (3, 3)


def test_cli_diagnose_llm_raters_only_skips_the_judge_statistics(tmp_path: Path) -> None:
    """Issue 25: when every rater is an LLM (an AlpacaEval, MT-Bench judge or inspect-ai file), there is no human
    consensus to measure the judges against: their statistics are skipped with a note, and the raters are still
    diagnosed (before, diagnose exited with "no judgments by human raters")."""
    rows = [(f"q{i}", agent, judge, (i + (agent == "a") + (judge == "j3") * (i % 2)) % 3, "llm", 50 + i)
            for i in range(12) for agent in "ab" for judge in ("j1", "j2", "j3")]
    path = tmp_path / "llm.csv"
    pd.DataFrame(rows, columns=["item", "agent", "rater", "label", "rater_kind", "words"]).to_csv(path, index=False)
    result = runner.invoke(app, ["diagnose", str(path), "--top", "0", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert sorted(row["rater"] for row in payload["raters"]) == ["j1", "j2", "j3"] and "llm_judges" not in payload
    assert any("no human raters" in note for note in payload["dataset"]["notes"])
    table = runner.invoke(app, ["diagnose", str(path), "--top", "0", "--length-col", "words"])
    assert table.exit_code == 0, table.output
    assert "no human raters" in table.stdout and "LLM judges against the human consensus" not in table.stdout
    csv = runner.invoke(app, ["diagnose", str(path), "-f", "csv", "--csv-table", "judges"])
    assert csv.exit_code == 2 and "human raters" in csv.output


def test_item_text_and_key_findings(tmp_path: Path) -> None:
    """Issue 31: --item-text (a column, or a file) shows each ambiguous response with its text; the mean ambiguity
    and the fragile majorities are printed and in the JSON."""
    path = tmp_path / "ratings.csv"
    path.write_text("item,agent,rater,label,prompt\n"
                    "q1,A,r1,1,Is the sky blue?\nq1,A,r2,0,Is the sky blue?\nq1,A,r3,1,Is the sky blue?\n"
                    "q2,A,r1,0,Why?\nq2,A,r2,0,Why?\nq2,A,r3,0,Why?\nq3,A,r1,1,How?\nq3,A,r2,0,How?\n")
    args = ["diagnose", str(path), "--ambiguity-threshold", "0.0", "--levels", "0,1"]
    out = runner.invoke(app, [*args, "--item-text", "prompt"])
    assert out.exit_code == 0, out.output
    text = plain(out.stdout)
    prompts = {"q1": "Is the sky blue?", "q2": "Why?", "q3": "How?"}
    assert "Text" in text and any(f" {prompt} " in text for prompt in prompts.values())
    assert "Mean ambiguity" in text and "2 fragile majorities" in text
    texts = tmp_path / "texts.csv"
    texts.write_text("item,text\nq1,First question\n")
    payload = json.loads(runner.invoke(app, [*args, "--item-text", str(texts), "-f", "json"]).stdout)
    assert payload["key_findings"]["fragile_majorities"] == 2 and payload["key_findings"]["ties"] == 1
    assert payload["ambiguous"] and all(row["text"] == {"q1": "First question"}.get(row["item"], "")
                                        for row in payload["ambiguous"])
    bad = runner.invoke(app, [*args, "--item-text", "nope"])
    assert bad.exit_code == 1 and "--item-text" in bad.output and "no such item text column" in bad.output


def test_a_rater_family_column_alone_stops_diagnose(tmp_path: Path) -> None:
    """Issue 26 (E7): exit 1 naming the column, not the plain rater table without a word."""
    from command_line import clean_failure

    path = tmp_path / "fam.csv"
    path.write_text("item,agent,rater,label,rater_family\nq1,m1,r1,good,\nq1,m1,j1,good,gpt\nq1,m2,r1,bad,\n"
                    "q1,m2,j1,good,gpt\n")
    output = clean_failure(runner.invoke(app, ["diagnose", str(path), "--levels", "bad,good"]), 1)
    assert "rater_family" in output and "without a rater kind column" in output


def test_diagnose_notes_gold_rows_that_match_no_response(tmp_path: Path) -> None:
    """Issue 26 (E9): as ``score --gold`` does, in the table and the JSON."""
    from command_line import LEVEL_FLAGS, two_item_ratings

    path = two_item_ratings(tmp_path / "r.csv")
    gold = tmp_path / "gold.csv"
    gold.write_text("item,agent,gold\nq1,m1,good\nq2,m2,bad\nq9,m1,good\n")
    text = runner.invoke(app, ["diagnose", str(path), *LEVEL_FLAGS, "--gold", str(gold)])
    assert text.exit_code == 0, text.output
    assert "1 gold entry matched no response" in text.output
    result = runner.invoke(app, ["diagnose", str(path), *LEVEL_FLAGS, "--gold", str(gold), "-f", "json"])
    assert any("matched no response" in note for note in json.loads(result.stdout)["gold_notes"])


@pytest.mark.parametrize("command", [["diagnose"], ["score", "-B", "0"]])
def test_a_gold_file_matching_no_response_is_an_error_not_nan(tmp_path: Path, command: list[str]) -> None:
    """Issue 26 (E9): exit 1 naming the gold file, some of its ids and some of the ratings'; never ``nan``."""
    from command_line import LEVEL_FLAGS, clean_failure, two_item_ratings

    path = two_item_ratings(tmp_path / "r.csv")
    gold = tmp_path / "gold.csv"
    gold.write_text("item,agent,gold\nq9,m1,good\n")
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:], "--gold",
                                               str(gold)]), 1)
    assert "gold.csv" in output and "q9" in output and "q1" in output and "nan" not in output
