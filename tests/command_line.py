"""Helpers of the command-line tests: a small ratings file, a ties file, renamed pairwise votes, and checks that a
run failed cleanly (no traceback) with the exit code expected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

LEVEL_FLAGS = ["--levels", "bad,good"]


def two_item_ratings(path: Path, agent: str = "m1", rater: str = "r1") -> Path:
    """Two items, agents ``agent`` and m2, raters ``rater`` and r2, labels bad/good."""
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


def renamed_pairwise(folder: Path) -> tuple[Path, list[str]]:
    """Pairwise votes whose columns no alias matches, and the flags that name them."""
    path = folder / "votes.csv"
    pd.DataFrame({"q": ["q1", "q1", "q2", "q2", "q3", "q3"], "left": ["A", "B", "A", "C", "B", "C"],
                  "right": ["B", "C", "C", "B", "A", "A"], "judge": ["r1", "r2", "r1", "r2", "r1", "r2"],
                  "pick": ["a", "a", "tie", "a", "b", "a"]}).to_csv(path, index=False)
    return path, ["--pairwise", "--item-col", "q", "--agent-a-col", "left", "--agent-b-col", "right",
                  "--rater-col", "judge", "--winner-col", "pick"]


def ties_file(folder: Path) -> Path:
    """Two agents; each response ties 0/1 (raters r1, r2), A with 1 first, B with 0 first; plus one clear vote."""
    rows = []
    for i in range(6):
        rows += [(f"q{i}", "A", "r1", 1), (f"q{i}", "A", "r2", 0), (f"q{i}", "A", "r3", 1 if i < 3 else 0),
                 (f"q{i}", "A", "r4", 0 if i < 3 else 1)]
        rows += [(f"q{i}", "B", "r1", 0), (f"q{i}", "B", "r2", 1)]
    path = folder / "ties.csv"
    pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]).to_csv(path, index=False)
    return path


def nrp_group() -> Any:
    import typer

    from stableval.commands import nrp as command

    return typer.main.get_command(command.app)


def plain(output: str) -> str:
    """CLI output without the error box's borders and line breaks."""
    return " ".join(output.replace("│", " ").split())
