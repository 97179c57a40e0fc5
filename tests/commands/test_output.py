"""How every command writes its result (``commands/output.py``): names from the data printed as written (markup,
control codes), folded not cut, counts of one in the singular, strict JSON, and output paths checked first."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.commands.output import TableResult, literal, make_console, styled_text, visible

from command_line import LEVEL_FLAGS, clean_failure, two_item_ratings

runner = CliRunner()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["[/]", "[b]x1[/b]", "[reverse]x[/reverse]", "[link=https://x.y]z[/link]",
                                  "[bold", "x\\", ":smile:"])
@pytest.mark.parametrize("command", [["score", "-B", "5"], ["diagnose"], ["agreement", "-B", "5"]])
def test_markup_in_names_is_shown_as_written(tmp_path: Path, name: str, command: list[str]) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv", agent=name, rater=name)
    result = runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:]])
    assert result.exit_code == 0, (result.output, result.exception)
    if command[0] != "agreement":  # agreement lists rater pairs only when they share enough responses
        assert name in result.output


def test_control_codes_in_names_are_escaped(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    name = "\x1b[31mRED\x1b[0m\x07\x1b]0;pwned\x07"
    path = two_item_ratings(tmp_path / "r.csv", agent=name)
    for command in (["score", "-B", "5"], ["diagnose"]):
        result = runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:]])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "\\x1b[31mRED\\x1b[0m\\x07" in result.output


def test_console_styles_only_the_projects_tags() -> None:
    """Issue 16: bad input."""
    assert styled_text("[bold red]warning:[/] [/] [b]x[/b] [bold]").plain == "warning: [/] [b]x[/b] [bold]"
    assert [span.style for span in styled_text("[bold red]warning:[/] x").spans] == ["bold red"]
    assert visible("a\u202eb\x9bc\td") == "a\\u202eb\\x9bc\td"
    buffer = io.StringIO()
    make_console(buffer, to_file=True).print("[yellow]note:[/] agent [/] \x1b[2J")
    assert buffer.getvalue() == "note: agent [/] \\x1b[2J\n"
    assert styled_text(f"[bold]{literal('[bold]x[/] [dim]y')}[/]").plain == "[bold]x[/] [dim]y"


@pytest.mark.parametrize("command", [["score", "-B", "5"], ["diagnose"], ["agreement", "-B", "5"],
                                     ["stability", "-R", "2"]])
def test_output_onto_a_folder_is_refused_before_the_work(tmp_path: Path, command: list[str]) -> None:
    """Issue 16: bad input."""
    path = two_item_ratings(tmp_path / "r.csv")
    folder = tmp_path / "outdir"
    folder.mkdir()
    argv = [command[0], str(path), *LEVEL_FLAGS, *command[1:]]
    output = clean_failure(runner.invoke(app, [*argv, "-o", str(folder)]), 2)
    assert "--output" in output and "is a folder" in output
    blocker = tmp_path / "afile"
    blocker.write_text("")
    output = clean_failure(runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:], "-o",
                                               str(blocker / "x.json")]), 2)
    assert "is a file, not a folder" in output


def test_names_fold_instead_of_being_cut(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.data import read_any
    from stableval.evaluate.scores import score_agents

    name = "gpt-3.5-turbo-0613-with-a-long-suffix"
    result = score_agents(read_any(two_item_ratings(tmp_path / "r.csv", agent=name), levels="bad,good"), bootstrap=0)
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=True, width=30))  # narrower than the name and one method's column
    table = buffer.getvalue().split("━\n", 1)[1].split("Leaderboard")[0]
    assert "…" not in table
    first_column = [line.split()[0] for line in table.splitlines() if line[:2].strip() and "responses" not in line]
    assert "".join(first_column) == name + "m2"


def test_missing_values_in_tables_are_not_printed_as_nan(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    from stableval.commands.nrp import TableResult

    frame = pd.DataFrame({"model": ["echo", "big"], "params": [float("nan"), 7e9], "mean_nrp": [1.0, 0.5]})
    buffer = io.StringIO()
    TableResult(frame, "NRP").render(make_console(buffer, to_file=True))
    text = buffer.getvalue()
    assert "nan" not in text and "7B" in text and "1.000" in text


@pytest.mark.parametrize("command", [["agreement"], ["diagnose"], ["score", "-B", "0"]])
def test_counts_of_one_are_singular(tmp_path: Path, command: list[str]) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "one.csv"
    path.write_text("item,agent,rater,label\nq1,A,r1,1\nq1,A,r2,0\nq2,A,r1,1\nq2,A,r2,1\n")
    result = runner.invoke(app, [*command, str(path), "--levels", "0,1"])
    assert result.exit_code == 0, result.output
    assert "1 agent)" in result.output or "1 agent " in result.output or command[0] == "diagnose"
    assert not re.search(r"\b1 (agents|raters|items|judgments|responses|iterations)\b", result.output), result.output


def test_table_result_lives_in_output_and_is_still_importable_from_nrp() -> None:
    from stableval.commands import nrp, output

    assert nrp.TableResult is output.TableResult and nrp.size_text is output.size_text


def test_tables_fit_a_terminal_and_are_never_wrapped_into_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27: output to a pipe or a file was hard-wrapped at 140 columns (a long path split the demo's summary
    line; ``grep`` and log parsers lost lines). On a terminal lines and tables fit its width; into a file or a pipe
    (stdout not a terminal) nothing is wrapped, whatever ``COLUMNS`` says."""
    import stableval.commands.output as output

    line = "a line of " + "words " * 60
    frame = pd.DataFrame({"model": ["a-model-name-" + "x" * 150], "score": [0.5]})
    monkeypatch.setenv("COLUMNS", "80")
    for to_file in (True, False):  # --output FILE, and stdout into a pipe (CliRunner's stdout is not a terminal)
        buffer = io.StringIO()
        console = make_console(buffer, to_file=to_file)
        console.print(line)
        TableResult(frame, "Scores").render(console)
        lines = buffer.getvalue().splitlines()
        assert lines[0].rstrip() == line.rstrip() and any(frame["model"][0] in row for row in lines)
    monkeypatch.setattr("stableval.console.terminal_columns", lambda stream: 80)  # a terminal 80 columns wide
    buffer = io.StringIO()
    console = make_console(buffer, to_file=False)
    console.print(line)
    TableResult(frame, "Scores").render(console)
    shown = re.sub("\x1b\\[[0-9;]*m", "", buffer.getvalue())  # a terminal's colours, which take no room
    assert max(len(row) for row in shown.splitlines()) <= 80 and frame["model"][0] not in shown
    assert make_console(io.StringIO(), to_file=True).width == output.UNWRAPPED  # --output FILE: never the terminal's


def test_only_the_output_module_makes_consoles() -> None:
    """Issue 27: every command prints through :func:`stableval.console.make_console` (or ``typer.echo``), so no
    command's output to a pipe is wrapped; a rich ``Console`` made elsewhere would wrap at its own width."""
    from paths import SRC

    makers = sorted(str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
                    if "Console(" in path.read_text(encoding="utf-8"))  # Console(...) or class SafeConsole(Console)
    assert makers == ["console.py", "progress.py"]  # progress.py: the transient bar, on a terminal only


LONG_NAME = "x" * 300


@pytest.mark.parametrize("command", [
    ["score", "-B", "0", "-o", LONG_NAME + ".json"], ["diagnose", "-o", LONG_NAME + ".json"],
    ["agreement", "-B", "0", "-o", LONG_NAME + ".json"], ["stability", "-R", "2", "-o", LONG_NAME + ".json"],
    ["stability", "-R", "2", "--plot", LONG_NAME + ".png"], ["reliability", "-o", LONG_NAME + ".json"],
    ["report", "--quick", "-o", LONG_NAME + ".html"]])
def test_an_output_name_longer_than_the_system_allows_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    """Issue 26 (E3): an over-long output name is refused up front, naming the option, not an OSError traceback."""
    path = two_item_ratings(tmp_path / "r.csv")
    flag = command[-2]
    argv = [command[0], str(path), *LEVEL_FLAGS, *command[1:-1], str(tmp_path / command[-1])]
    output = clean_failure(runner.invoke(app, argv), 2)
    assert ("--output" if flag == "-o" else flag) in output and "at most 255" in output


def test_plot_refuses_an_over_long_name_and_a_path_under_a_file(tmp_path: Path) -> None:
    """Issue 26 (E3, E4): ``plot`` checks its image path before drawing."""
    path = two_item_ratings(tmp_path / "r.csv")
    blocker = tmp_path / "afile"
    blocker.write_text("")
    for target, says in ((tmp_path / (LONG_NAME + ".png"), "at most 255"), (blocker / "x.png", "is a file, not a")):
        output = clean_failure(runner.invoke(app, ["plot", "forest", str(path), *LEVEL_FLAGS, "-o", str(target)]), 2)
        assert says in output


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_write_that_fails_after_the_work_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """Issue 26 (E4): a failing write (a full disk) says ``error: cannot write PATH: reason``, exit 1."""
    path = two_item_ratings(tmp_path / "r.csv")
    output = clean_failure(runner.invoke(app, ["report", str(path), *LEVEL_FLAGS, "--quick", "-o", "/dev/full"]), 1)
    assert "error: cannot write /dev/full: No space left on device" in output


def test_report_under_a_file_is_refused_before_the_work(tmp_path: Path) -> None:
    """Issue 26 (E4): ``report -o plain.txt/report.html`` is a usage error naming --output, not FileExistsError."""
    path = two_item_ratings(tmp_path / "r.csv")
    blocker = tmp_path / "plain.txt"
    blocker.write_text("")
    output = clean_failure(runner.invoke(app, ["report", str(path), *LEVEL_FLAGS, "--quick", "-o",
                                               str(blocker / "report.html")]), 2)
    assert "--output" in output and "is a file, not a folder" in output


@pytest.mark.parametrize("command", [["score", "-B", "0", "-f", "json"], ["diagnose", "-f", "json"],
                                     ["agreement", "-B", "0", "-f", "json"]])
def test_the_path_written_is_shown_with_control_codes_escaped(tmp_path: Path, command: list[str]) -> None:
    """Issue 26 (E13): ``wrote out\\x07.json``, never the raw bell or escape sequence."""
    path = two_item_ratings(tmp_path / "r.csv")
    target = tmp_path / "out\x07\x1b[2J.json"
    result = runner.invoke(app, [command[0], str(path), *LEVEL_FLAGS, *command[1:], "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.exists()
    assert "\x07" not in result.output and "\x1b" not in result.output
    assert "out\\x07\\x1b[2J.json" in result.output
