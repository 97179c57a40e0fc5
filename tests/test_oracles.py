"""The semantic oracles of every command that reads a ratings file, as hypothesis properties (issue 26): rows
shuffled give the identical output with the same seed; items, agents, raters and levels consistently renamed give
the identical scores and intervals; the same file given twice (every row repeated) is refused, naming the rows.
Strategies and helpers: ``tests/rating_strategies.py``. Bounded: a few examples each, well under a minute."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from typer.testing import CliRunner

from stableval.cli import app

from command_line import clean_failure
from rating_strategies import Ratings, comparable, ratings, renamed, renaming, run_json, shuffled

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
