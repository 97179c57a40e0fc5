"""Bad input never gives a traceback, a wrong answer with exit 0, or garbage on the terminal (issue 16).

Each test is the minimal reproduction of one defect of ``../shared/reviews/bad-input.md``: names that look like
Rich markup or carry terminal control codes, bytes that are not UTF-8, non-finite or huge hyper-parameters,
negative seeds, output paths that cannot be written, and API arguments the CLI flags would refuse.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands.output import literal, make_console, styled_text, visible
from stableval.data import example_path, read_pairwise
from stableval.errors import InputError

runner = CliRunner()
LEVELS = ["--levels", "bad,good"]


def ratings(path: Path, agent: str = "m1", rater: str = "r1") -> Path:
    """Two items, agents ``agent`` and m2, raters ``rater`` and r2 (the review's mini.csv with names swapped)."""
    frame = pd.DataFrame({
        "item": ["q1"] * 4 + ["q2"] * 4,
        "agent": [agent, agent, "m2", "m2"] * 2,
        "rater": [rater, "r2"] * 4,
        "label": ["good", "good", "bad", "good", "good", "bad", "bad", "bad"],
    })
    frame.to_csv(path, index=False)
    return path


def clean_failure(result: object, code: int) -> str:
    """The output (whitespace collapsed) of a run that failed cleanly with ``code``; fails the test otherwise."""
    exception = getattr(result, "exception", None)
    output = str(getattr(result, "output", ""))
    assert getattr(result, "exit_code", None) == code, (output, exception)
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    assert "Traceback" not in output
    return " ".join(output.replace("│", " ").split())  # usage errors come in a wrapped box


# ====================================================================================== D1, D2: names on the terminal
@pytest.mark.parametrize("name", ["[/]", "[b]x1[/b]", "[reverse]x[/reverse]", "[link=https://x.y]z[/link]",
                                  "[bold", "x\\", ":smile:"])
@pytest.mark.parametrize("command", [["score", "-B", "5"], ["diagnose"], ["agreement", "-B", "5"]])
def test_markup_in_names_is_shown_as_written(tmp_path: Path, name: str, command: list[str]) -> None:
    path = ratings(tmp_path / "r.csv", agent=name, rater=name)
    result = runner.invoke(app, [command[0], str(path), *LEVELS, *command[1:]])
    assert result.exit_code == 0, (result.output, result.exception)
    if command[0] != "agreement":  # agreement lists rater pairs only when they share enough responses
        assert name in result.output


def test_markup_names_in_pairwise_table(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2", "q3"], "model_a": ["[/]", "[b]x1[/b]", "[/]"],
                  "model_b": ["[b]x1[/b]", "m2", "m2"], "judge": "r1", "winner": ["a", "b", "tie"]}
                 ).to_csv(path, index=False)
    result = runner.invoke(app, ["pairwise", str(path), "-B", "5", "--prior", "1"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "[/]" in result.output and "[b]x1[/b]" in result.output


def test_control_codes_in_names_are_escaped(tmp_path: Path) -> None:
    name = "\x1b[31mRED\x1b[0m\x07\x1b]0;pwned\x07"
    path = ratings(tmp_path / "r.csv", agent=name)
    for command in (["score", "-B", "5"], ["diagnose"]):
        result = runner.invoke(app, [command[0], str(path), *LEVELS, *command[1:]])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "\\x1b[31mRED\\x1b[0m\\x07" in result.output


def test_error_messages_are_not_markup(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,agent,rater,label\nq1,a,r1,[/]\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)
    assert "error:" in output and "'[/]'" in output


def test_console_styles_only_the_projects_tags() -> None:
    assert styled_text("[bold red]warning:[/] [/] [b]x[/b] [bold]").plain == "warning: [/] [b]x[/b] [bold]"
    assert [span.style for span in styled_text("[bold red]warning:[/] x").spans] == ["bold red"]
    assert visible("a\u202eb\x9bc\td") == "a\\u202eb\\x9bc\td"
    buffer = io.StringIO()
    make_console(buffer, to_file=True).print("[yellow]note:[/] agent [/] \x1b[2J")
    assert buffer.getvalue() == "note: agent [/] \\x1b[2J\n"
    assert styled_text(f"[bold]{literal('[bold]x[/] [dim]y')}[/]").plain == "[bold]x[/] [dim]y"



def test_a_name_spelled_like_our_style_tags_prints_literally(tmp_path: Path) -> None:
    (tmp_path / "[bold]d[").mkdir()
    path = ratings(tmp_path / "[bold]d[" / "]f.csv", agent="[bold]x[/]")  # the path reads "[bold]d[/]f.csv"
    result = runner.invoke(app, ["score", str(path), *LEVELS, "-B", "10"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "[bold]d[/]f.csv:" in result.output  # the file name in the dataset line
    assert "\n [bold]x[/] " in result.output  # the leaderboard row
    assert "P([bold]x[/] scores above m2)" in result.output or "P(m2 scores above [bold]x[/])" in result.output
    assert "per agent: [bold]x[/]" in result.output or ", [bold]x[/] " in result.output  # the comparison line
    assert "\u2060" not in result.output


# ====================================================================================== D3, D4: not UTF-8
def test_jsonl_bad_byte_inside_a_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d3.jsonl"
    path.write_bytes(b'{"item":"q1","agent":"m1","rater":"r1","label":"good"}\n'
                     b'{"item":"q1","agent":"m1","rater":"caf\xe9","label":"bad"}\n')
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS, "-B", "5"]), 1)
    assert "line 2 is not UTF-8" in output
    path.write_bytes(b'{"item":"q1","agent":"m1","rater":"r1","label":"good"}\n{"i\xc3\x28tem":"q1"}\n')
    assert "line 2 is not UTF-8" in clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)


def test_csv_bad_byte_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(b"item,agent,rater,label\nq1,m1,r1,good\nq1,m1,caf\xe9,bad\n")
    assert "line 3 is not UTF-8" in clean_failure(runner.invoke(app, ["agreement", str(path), *LEVELS]), 1)


@pytest.mark.parametrize("column", ["item", "rater", "label"])
def test_parquet_binary_column_not_utf8_names_the_row(tmp_path: Path, column: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = {"item": ["q1"] * 4, "agent": ["m1", "m1", "m2", "m2"], "rater": ["r1", "r2", "r1", "r2"],
              "label": ["good", "bad", "bad", "bad"]}
    data: dict[str, object] = dict(values)
    raw = [v.encode() for v in values[column]]
    raw[1] = raw[1] + b"\xff"
    data[column] = pa.array(raw, pa.binary())
    path = tmp_path / "binary.parquet"
    pq.write_table(pa.table(data), path)
    output = clean_failure(runner.invoke(app, ["agreement", str(path), *LEVELS, "-B", "5"]), 1)
    assert f"row 2, column '{column}'" in output and "not UTF-8" in output
    data[column] = pa.array([v.encode() for v in values[column]], pa.binary())  # valid UTF-8 binary is read
    pq.write_table(pa.table(data), path)
    assert runner.invoke(app, ["agreement", str(path), *LEVELS, "-B", "5"]).exit_code == 0


# ====================================================================================== D5: non-finite numbers
@pytest.mark.parametrize("flag", [["--alpha-pi", "inf"], ["--alpha-mu", "inf"], ["--alpha-pi", "1e308"],
                                  ["--alpha-mu", "1e308"], ["--param", "stableval.alpha_pi=1e300"]])
@pytest.mark.parametrize("command", ["score", "diagnose"])
def test_huge_or_infinite_priors_are_refused(tmp_path: Path, flag: list[str], command: str) -> None:
    path = ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, [command, str(path), *LEVELS, *flag]), 2)
    assert flag[0] in output


def test_json_output_never_holds_non_finite_numbers(tmp_path: Path) -> None:
    path = ratings(tmp_path / "r.csv")
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", str(path), *LEVELS, "-B", "5", "--alpha-pi", "1e6", "-f", "json",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))


# ====================================================================================== D6: negative seed
@pytest.mark.parametrize("command", [["score", "-B", "5"], ["agreement", "-B", "5"], ["stability"]])
def test_negative_seed_is_a_usage_error_naming_seed(tmp_path: Path, command: list[str]) -> None:
    path = ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVELS, *command[1:], "--seed", "-1"]), 2)
    assert "--seed" in output and "--sizes" not in output


def test_negative_seed_pairwise() -> None:
    output = clean_failure(runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep",
                                               "-B", "5", "--seed", "-1"]), 2)
    assert "--seed" in output


# ====================================================================================== D7: output paths
@pytest.mark.parametrize("command", [["score", "-B", "5"], ["diagnose"], ["agreement", "-B", "5"],
                                     ["stability", "-R", "2"]])
def test_output_onto_a_folder_is_refused_before_the_work(tmp_path: Path, command: list[str]) -> None:
    path = ratings(tmp_path / "r.csv")
    folder = tmp_path / "outdir"
    folder.mkdir()
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVELS, *command[1:], "-o", str(folder)]), 2)
    assert "--output" in output and "is a folder" in output
    blocker = tmp_path / "afile"
    blocker.write_text("")
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVELS, *command[1:], "-o",
                                               str(blocker / "x.json")]), 2)
    assert "is a file, not a folder" in output


def test_output_into_a_missing_folder_creates_it(tmp_path: Path) -> None:
    path = ratings(tmp_path / "r.csv")
    target = tmp_path / "results" / "deeper" / "scores.json"
    result = runner.invoke(app, ["score", str(path), *LEVELS, "-B", "5", "-f", "json", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text())["command"].startswith("stableval")


def test_stability_plot_onto_a_folder_is_refused(tmp_path: Path) -> None:
    path = ratings(tmp_path / "r.csv")
    folder = tmp_path / "fig.png"
    folder.mkdir()
    output = clean_failure(runner.invoke(app, ["stability", str(path), *LEVELS, "--plot", str(folder)]), 2)
    assert "--plot" in output


# ====================================================================================== D8: API arguments
@pytest.mark.parametrize(("argument", "value", "message"), [
    ("bootstrap", -5, "bootstrap must be a whole number >= 0"),
    ("bootstrap", 2.5, "bootstrap must be a whole number >= 0"),
    ("seed", -1, "seed must be a whole number >= 0"),
    ("confidence", 1.5, "confidence must be a number in (0, 1)"),
    ("prior", float("inf"), "prior must be a finite number >= 0"),
])
def test_pairwise_leaderboard_validates_arguments(argument: str, value: object, message: str) -> None:
    from stableval import pairwise_leaderboard

    votes = read_pairwise(example_path("mt_bench"), duplicates="keep")
    with pytest.raises(ValueError) as error:
        pairwise_leaderboard(votes, **{argument: value})  # type: ignore[arg-type]
    assert message in str(error.value) and repr(value) in str(error.value)


def test_ranking_stability_validates_seed() -> None:
    from stableval.data import read_any
    from stableval.evaluate.stability import ranking_stability

    table = read_any(example_path("mt_bench"), duplicates="keep")
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        ranking_stability(table, ["mv"], sizes=[0.5], repetitions=2, seed=-1)


# ====================================================================================== duplicated headers
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_duplicated_column_header_is_refused(tmp_path: Path, suffix: str) -> None:
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
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS, "-B", "0"]), 1)
    assert "'label'" in output and ("more than once" in output or "twice" in output)
    assert "FieldRef" not in output


def test_pipe_separated_csv_says_unrecognised_separator(tmp_path: Path) -> None:
    path = tmp_path / "pipe.csv"
    path.write_text("item|agent|rater|label\nq1|m1|r1|good\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)
    assert "unrecognised separator '|'" in output


def test_read_table_file_refuses_duplicated_header(tmp_path: Path) -> None:
    from stableval.data.files import read_table_file

    path = tmp_path / "dup.csv"
    path.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="column 'a' appears more than once"):
        read_table_file(path)


# ====================================================================================== quiet wrong-answer traps
def test_stray_integer_label_warns_with_unused_levels_and_rows(tmp_path: Path) -> None:
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
    path = tmp_path / "ok.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": ["A", "B", "A", "B"], "rater": "r1",
                  "label": ["0", "1", "2", "1"]}).to_csv(path, index=False)
    result = runner.invoke(app, ["score", str(path), "-B", "0", "-m", "mv"])
    assert result.exit_code == 0 and "warning" not in result.stderr.lower()


def _votes_with_turns(path: Path) -> Path:
    rows = [{"question_id": 81, "turn": turn, "model_a": "A", "model_b": "B", "winner": winner, "judge": "j1",
             "category": "writing"} for turn, winner in ((1, "model_a"), (2, "model_b"))]
    rows.append({"question_id": 82, "turn": 1, "model_a": "A", "model_b": "B", "winner": "tie", "judge": "j1",
                 "category": "roleplay"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_turn_column_makes_each_turn_its_own_item(tmp_path: Path) -> None:
    path = _votes_with_turns(tmp_path / "votes.jsonl")
    votes = read_pairwise(path)
    assert votes.frame["item"].tolist() == ["81-turn1", "81-turn2", "82-turn1"]
    assert any("column 'turn'" in note for note in votes.notes)
    result = runner.invoke(app, ["score", str(path), "-B", "0", "-m", "mv", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dataset"]["responses"] == 6


def test_duplicate_error_names_the_column_that_tells_rows_apart(tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": "A", "rater": "r1", "criterion": ["fluency", "facts"] * 2,
                  "label": ["good", "bad", "good", "good"]}).to_csv(path, index=False)
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)
    assert "differ in column(s) 'criterion'" in output and "--duplicates keep would merge them" in output
    result = runner.invoke(app, ["score", str(path), *LEVELS, "--duplicates", "keep", "-B", "0", "-m", "mv"])
    assert result.exit_code == 0 and "differ in column(s) 'criterion'" in " ".join(result.stderr.split())


@pytest.mark.parametrize(("agents", "winner"), [(("b", "a"), "a"), (("x", "tie"), "tie"),
                                                (("model_b", "y"), "model_b")])
def test_agents_named_like_winner_values_are_refused(tmp_path: Path, agents: tuple[str, str], winner: str) -> None:
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2"], "model_a": [agents[0], "m1"], "model_b": [agents[1], "m2"], "judge": "r1",
                  "winner": [winner, "a"]}).to_csv(path, index=False)
    output = clean_failure(runner.invoke(app, ["pairwise", str(path), "-B", "0"]), 1)
    assert f"winner '{winner}' is ambiguous" in output and "row 1 (line 2)" in output


def test_agent_named_like_its_own_position_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2"], "model_a": ["a", "a"], "model_b": ["b", "b"], "judge": "r1",
                  "winner": ["a", "b"]}).to_csv(path, index=False)
    assert read_pairwise(path).frame["winner"].tolist() == ["a", "b"]


# ====================================================================================== first-hour polish
def test_parquet_keeps_its_levels_and_credit(tmp_path: Path) -> None:
    from stableval.data import read_any
    from stableval.data.files import write_frame

    frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": "A", "rater": ["r1", "r2", "r1"],
                          "label": ["ok", "good", "ok"]})
    path = write_frame(frame, tmp_path / "t.parquet",
                       scale={"column": "label", "levels": ["bad", "ok", "good"], "credit": [0, 0.25, 1]})
    table = read_any(path)
    assert table.levels == ("bad", "ok", "good") and table.credit.tolist() == [0.0, 0.25, 1.0]
    assert table.label.tolist() == [1, 2, 1]
    assert read_any(path, levels="ok,good").levels == ("ok", "good")  # explicit levels still win


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_converted_file_scores_without_levels(tmp_path: Path, suffix: str) -> None:
    from conftest import shared_file

    source = shared_file("dawid_skene_1979")
    out = tmp_path / f"ds{suffix}"
    result = runner.invoke(app, ["convert", "dawid-skene", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "score it: stableval score " + str(out) + " --duplicates keep" in result.output
    scored = runner.invoke(app, ["score", str(out), "--duplicates", "keep", "-B", "0", "-m", "mv", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["dataset"]["levels"] == ["1", "2", "3", "4"]


def test_stability_flags_trivial_results(tmp_path: Path) -> None:
    path = ratings(tmp_path / "r.csv")  # 2 agents, 2 raters
    result = runner.invoke(app, ["stability", str(path), *LEVELS, "-R", "3", "-s", "1,2", "-m", "mv", "-f", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    trivial = payload["settings"]["trivial"]
    assert trivial[0].startswith("only 2 agents: tau-b can only be +1") and "takes all 2 raters" in trivial[1]
    assert [row["trivial"] for row in payload["summary"]] == [True, True]
    assert [row["fraction"] for row in payload["summary"]] == [0.5, 1.0]
    table = runner.invoke(app, ["stability", str(path), *LEVELS, "-R", "3", "-s", "1", "-m", "mv"])
    assert "trivial: only 2 agents" in table.output and "1 rater)" not in table.output.replace("(1 rater)", "")


def test_names_fold_instead_of_being_cut(tmp_path: Path) -> None:
    from stableval.data import read_any
    from stableval.evaluate.scores import score_agents

    name = "gpt-3.5-turbo-0613-with-a-long-suffix"
    result = score_agents(read_any(ratings(tmp_path / "r.csv", agent=name), levels="bad,good"), bootstrap=0)
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=True, width=80))
    table = buffer.getvalue().split("━\n", 1)[1].split("STABLEVAL −")[0]
    assert "…" not in table
    first_column = [line.split()[0] for line in table.splitlines() if line[:2].strip()]
    assert "".join(first_column) == name + "m2"


@pytest.mark.parametrize("value", ["inf", "nan", "1e308"])
def test_pairwise_prior_must_be_finite(value: str) -> None:
    output = clean_failure(runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep",
                                               "-B", "0", "--prior", value]), 2)
    assert "--prior" in output and ("finite" in output or value == "nan")  # nan: typer's own range check


def test_help_has_no_bool_type_hints() -> None:
    result = runner.invoke(app, ["report", "--help"])
    assert result.exit_code == 0 and "--quick" in result.output and "<bool>" not in result.output


def test_cli_spelling_in_error_messages(tmp_path: Path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,good\nq1,A,r1,bad\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)
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
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS]), 1)
    assert "name it with --item-col NAME" in output and "columns=" not in output
    path.write_text("item,agent,rater,label\nq1,A,r1,good\n")
    output = clean_failure(runner.invoke(app, ["score", str(path), *LEVELS, "--raters", "llm"]), 1)
    assert "a rater metadata file (--rater-info FILE; columns" in output and "rater_info=" not in output
    output = clean_failure(runner.invoke(app, ["score", str(path.with_suffix(".txt")), *LEVELS]), 1)
    assert output.rstrip().endswith("or pass --input-format")


def test_an_input_error_keeps_its_option_through_pickling_and_replace() -> None:
    """Errors raised on Dask workers come back pickled; the loader moves a dataset error to its file: both keep the
    option, so the command line can still spell it as a flag."""
    import pickle

    from stableval.commands.common import flag_spelling

    error = InputError("rows repeat", file="a.csv", row=3, line=4, column="item", value="q1",
                       allowed="{duplicates} to keep one", options={"duplicates": "first|last"})
    for copy in (pickle.loads(pickle.dumps(error)), error.replace(file="b.csv").replace(file="a.csv")):
        assert str(copy) == str(error) == ("a.csv, row 3 (line 4), column 'item': rows repeat: got 'q1'; allowed: "
                                           "duplicates='first'|'last' to keep one")
        assert copy.spelled(flag_spelling).endswith("allowed: --duplicates first|last to keep one")
        assert (copy.option, copy.options, copy.line) == ("duplicates", {"duplicates": "first|last"}, 4)


def test_a_dataset_error_moved_to_its_file_still_spells_the_flag(tmp_path: Path) -> None:
    folder = tmp_path / "votes"
    folder.mkdir()
    frame = pd.DataFrame({"item": ["q1", "q2", "q1"], "agent": "A", "rater": "r1", "label": ["good", "bad", "bad"]})
    frame.iloc[:2].to_parquet(folder / "0.parquet", index=False)
    frame.iloc[2:].to_parquet(folder / "1.parquet", index=False)
    output = clean_failure(runner.invoke(app, ["score", str(folder), *LEVELS]), 1)
    assert "1.parquet, row 1:" in output and "(row 3 of the dataset" in output
    assert "--duplicates first|last|keep" in output and "duplicates='first'" not in output


def test_pairwise_win_rate_headers_are_not_cut() -> None:
    result = runner.invoke(app, ["pairwise", str(example_path("mt_bench")), "--duplicates", "keep", "-B", "0"])
    assert result.exit_code == 0
    header = next(line for line in result.output.splitlines() if "gpt-4" in line and "claude-v1" in line)
    assert "vicuna-13b-v1.2" in header


def test_figure_labels_from_the_data_draw_without_missing_glyphs(tmp_path: Path) -> None:
    import warnings

    from stableval.report.figures import figure_to_svg, save_figure
    from stableval.report.figures.base import new_figure

    fig = new_figure(3, 2)
    axes = fig.add_subplot()
    axes.set_title("agent 漢字\x1b[31m")
    axes.set_xticks([0, 1], ["gpt-4", "模型\x07"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        save_figure(fig, tmp_path / "f.png")
        svg = figure_to_svg(fig)
    assert not [w for w in caught if "Glyph" in str(w.message)], [str(w.message) for w in caught]
    assert axes.get_title() == "agent \\u6f22\\u5b57\\x1b[31m" and "svg" in svg


def test_side_output_onto_a_folder_is_refused_before_reading(tmp_path: Path) -> None:
    output = clean_failure(runner.invoke(app, ["ddx", str(tmp_path / "missing.json"), "--certainty-out",
                                               str(tmp_path)]), 2)
    assert "--certainty-out" in output and "is a folder" in output  # refused before the missing input is read


def test_jsonl_keeps_its_levels_and_credit(tmp_path: Path) -> None:
    from stableval.data import read_any
    from stableval.data.files import SCALE_KEY, read_table_file, write_frame

    frame = pd.DataFrame({"item": ["q1", "q1", "q2"], "agent": "A", "rater": ["r1", "r2", "r1"],
                          "label": ["ok", "good", "ok"]})
    scale = {"column": "label", "levels": ["bad", "ok", "good"], "credit": [0, 0.25, 1]}
    path = write_frame(frame, tmp_path / "t.jsonl", scale=scale)
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first) == {SCALE_KEY: scale}  # the scale record comes first, then one object per judgment
    table = read_any(path)
    assert table.levels == ("bad", "ok", "good") and table.credit.tolist() == [0.0, 0.25, 1.0]
    assert table.label.tolist() == [1, 2, 1] and table.n_judgments == 3
    assert read_any(path, levels="ok,good").levels == ("ok", "good")  # explicit levels still win
    assert len(read_table_file(path)) == 3


def test_jsonl_scale_record_keeps_line_numbers(tmp_path: Path) -> None:
    from stableval.data.files import write_frame

    frame = pd.DataFrame({"item": ["q1", "q2"], "agent": "A", "rater": ["r1", "r1"], "label": ["ok", "okay"]})
    path = write_frame(frame, tmp_path / "t.jsonl",
                       scale={"column": "label", "levels": ["bad", "ok"], "credit": [0, 1]})
    result = runner.invoke(app, ["score", str(path)])
    output = clean_failure(result, 1)
    assert "line 3" in output and "okay" in output  # data row 2 is line 3: line 1 holds the scale


def test_missing_values_in_tables_are_not_printed_as_nan(tmp_path: Path) -> None:
    from stableval.commands.nrp import TableResult

    frame = pd.DataFrame({"model": ["echo", "big"], "params": [float("nan"), 7e9], "mean_nrp": [1.0, 0.5]})
    buffer = io.StringIO()
    TableResult(frame, "NRP").render(make_console(buffer, to_file=True))
    text = buffer.getvalue()
    assert "nan" not in text and "7B" in text and "1.000" in text


@pytest.mark.parametrize("command", [["agreement"], ["diagnose"], ["score", "-B", "0"]])
def test_counts_of_one_are_singular(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "one.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\nq1,A,r2,0\nq2,A,r1,1\nq2,A,r2,1\n")
    result = runner.invoke(app, [*command, str(path), "--levels", "0,1"])
    assert result.exit_code == 0, result.output
    assert "1 agent)" in result.output or "1 agent " in result.output or command[0] == "diagnose"
    assert not re.search(r"\b1 (agents|raters|items|judgments|responses|iterations)\b", result.output), result.output


@pytest.mark.parametrize("body", ["q1,A,r1,1,EXTRA\nq2,A,r1,0\n", "q1,A,r1,1,\nq2,A,r1,0,\n"])
def test_a_row_longer_than_the_header_is_refused_not_shifted(tmp_path: Path, body: str) -> None:
    path = tmp_path / "long.csv"
    path.write_text("item,agent,rater,label\n" + body)
    output = clean_failure(runner.invoke(app, ["score", str(path), "-B", "0"]), 1)
    assert "line 2 has 5 fields but the header names 4" in output and "long.csv" in output
    assert ("separator at the end" in output) == body.endswith(",\n")
