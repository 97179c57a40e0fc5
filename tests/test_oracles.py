"""The semantic oracles of every command that reads a ratings file, as hypothesis properties (issue 26): rows
shuffled give the identical output with the same seed; items, agents, raters and levels consistently renamed give
the identical scores and intervals; the same file given twice (every row repeated) is refused, naming the rows.
Strategies and helpers: ``tests/rating_strategies.py``. Bounded: a few examples each, well under a minute."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from typer.testing import CliRunner

from stableval.cli import app

from command_line import clean_failure
from rating_strategies import (
    Ratings,
    comparable,
    figure_data,
    ratings,
    renamed,
    renaming,
    report_text,
    run_json,
    shuffled,
    votes,
)

#: every command that reads a ratings file, with small settings (a few replicates) and a fixed seed
READING_COMMANDS = {
    "score": ["-B", "20", "--seed", "3"],
    "diagnose": [],
    "agreement": ["-B", "20", "--seed", "3"],
    "reliability": ["--qc-consensus"],
    "stability": ["-R", "3", "--seed", "3"],
}
PROPERTY = settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _output(command: str, data: Ratings, path: Path) -> dict:
    return run_json([command, str(data.write(path)), *data.level_flag, *READING_COMMANDS[command]])


@pytest.mark.parametrize("command", list(READING_COMMANDS))
@PROPERTY
@given(data=ratings(), seed=st.integers(0, 1000))
def test_shuffled_rows_give_the_identical_output(tmp_path: Path, command: str, data: Ratings, seed: int) -> None:
    """Issue 26: the same judgments in another row order, the same seed: the same output (lists compared as sets,
    numbers to 1e-6)."""
    path = tmp_path / "ratings.csv"
    assert comparable(_output(command, shuffled(data, seed), path)) == comparable(_output(command, data, path))


@pytest.mark.parametrize("command", list(READING_COMMANDS))
@PROPERTY
@given(data=ratings())
def test_consistently_renamed_names_give_the_identical_scores_and_intervals(tmp_path: Path, command: str,
                                                                            data: Ratings) -> None:
    """Issue 26: every item, agent, rater and level renamed (the sort order reversed, the scale kept): the same
    numbers once the names are mapped back."""
    path = tmp_path / "ratings.csv"
    mapping = renaming(data)
    back = {new: old for old, new in mapping.items()}
    before = comparable(_output(command, data, path))
    assert comparable(_output(command, renamed(data, mapping), path), back) == before


@pytest.mark.parametrize("command", list(READING_COMMANDS))
@PROPERTY
@given(data=ratings())
def test_the_same_file_given_twice_is_refused(tmp_path: Path, command: str, data: Ratings) -> None:
    """Issue 26: the file concatenated with itself repeats every (item, agent, rater): refused (exit 1) naming the
    repeated rows and how to keep them, never scored as twice the evidence."""
    import pandas as pd

    twice = Ratings(pd.concat([data.frame, data.frame], ignore_index=True), data.levels)
    path = twice.write(tmp_path / "twice.csv")
    result = CliRunner().invoke(app, [command, str(path), *data.level_flag, *READING_COMMANDS[command]])
    output = clean_failure(result, 1)
    assert "twice.csv" in output and "repeat" in output and "duplicates" in output


# ---------------------------------------------------------------------- report, plot and pairwise
def _pairwise(data: Ratings, path: Path) -> Any:
    return run_json(["pairwise", str(data.write(path)), "-B", "20", "--seed", "3"])


def _report(data: Ratings, path: Path) -> list[str]:
    """The words and numbers of the report (not its HTML bytes: the inline figures are compared by ``plot``)."""
    html = path.with_suffix(".html")
    result = CliRunner().invoke(app, ["report", str(data.write(path)), *data.level_flag, "--quick", "-B", "20",
                                      "--seed", "3", "--jobs", "1", "-o", str(html)])
    assert result.exit_code == 0, result.output
    return report_text(html.read_text(encoding="utf-8"))


def _plot(kind: str) -> Callable[[Ratings, Path], Any]:
    def figure(data: Ratings, path: Path) -> Any:
        """The data behind the figure (texts, points, bars, images), caught before it is saved."""
        import matplotlib.pyplot as plt

        import stableval.commands.output as output

        drawn: list[Any] = []
        saved = output.save_plot
        output.save_plot = lambda fig, out, **_: drawn.append(fig) or out  # type: ignore[assignment]
        try:
            result = CliRunner().invoke(app, ["plot", kind, str(data.write(path)), *data.level_flag, "-B", "20",
                                              "--seed", "3", "-o", str(path.with_suffix(".png"))])
        finally:
            output.save_plot = saved
        assert result.exit_code == 0 and len(drawn) == 1, result.output
        try:
            return figure_data(drawn[0])
        finally:
            plt.close(drawn[0])
    return figure


#: the other commands that read a ratings (or votes) file: the generated data they read and what they output
OTHER_READERS: dict[str, tuple[Callable[[], st.SearchStrategy[Ratings]], Callable[[Ratings, Path], Any]]] = {
    "pairwise": (votes, _pairwise),
    "report": (ratings, _report),
    "plot forest": (ratings, _plot("forest")),
    "plot confusion": (ratings, _plot("confusion")),
    "plot ratings": (votes, _plot("ratings")),
}


@pytest.mark.parametrize("command", list(OTHER_READERS))
@PROPERTY
@given(drawn=st.data(), seed=st.integers(0, 1000))
def test_report_plot_and_pairwise_give_the_identical_output_for_shuffled_rows(
        tmp_path: Path, command: str, drawn: st.DataObject, seed: int) -> None:
    """Issue 26: as for the other readers, rows shuffled give the same report, figure data and pairwise ratings."""
    strategy, output = OTHER_READERS[command]
    data = drawn.draw(strategy())
    path = tmp_path / "ratings.csv"
    assert comparable(output(shuffled(data, seed), path)) == comparable(output(data, path))


@pytest.mark.parametrize("command", list(OTHER_READERS))
@PROPERTY
@given(drawn=st.data())
def test_report_plot_and_pairwise_give_the_identical_numbers_for_renamed_names(
        tmp_path: Path, command: str, drawn: st.DataObject) -> None:
    """Issue 26: every item, agent, rater and level renamed (the sort order reversed): the same report, figure and
    pairwise numbers once the names are mapped back."""
    strategy, output = OTHER_READERS[command]
    data = drawn.draw(strategy())
    path = tmp_path / "ratings.csv"
    mapping = renaming(data)
    back = {new: old for old, new in mapping.items()}
    assert comparable(output(renamed(data, mapping), path), back) == comparable(output(data, path))


@pytest.mark.parametrize("command", list(OTHER_READERS))
@PROPERTY
@given(drawn=st.data())
def test_report_plot_and_pairwise_refuse_the_same_file_given_twice(tmp_path: Path, command: str,
                                                                   drawn: st.DataObject) -> None:
    """Issue 26: the file concatenated with itself is refused (exit 1) naming the repeated rows and the option."""
    import pandas as pd

    strategy, _ = OTHER_READERS[command]
    data = drawn.draw(strategy())
    twice = Ratings(pd.concat([data.frame, data.frame], ignore_index=True), data.levels)
    path = twice.write(tmp_path / "twice.csv")
    argv = [*command.split(), str(path), *data.level_flag, "-o", str(tmp_path / "out.png")] if command != "pairwise" \
        else [command, str(path)]
    output = clean_failure(CliRunner().invoke(app, [*argv, "-B", "20"]), 1)
    assert "twice.csv" in output and "repeat" in output and "duplicates" in output
