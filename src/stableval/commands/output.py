r"""One way every command writes its result: a readable table, JSON or CSV, to stdout or a file.

A result implements :class:`Result` — ``to_dict()`` (JSON-ready), ``to_frame()`` (the CSV table) and
``render(console)`` (the table people read) — and a command ends with ``emit(result, output_format, output)``.
JSON output starts with the command line and the stableval version, and never holds NaN or infinities.

>>> import pandas as pd
>>> class Hello:
...     def to_dict(self): return {"greeting": "hello", "score": float("nan")}
...     def to_frame(self): return pd.DataFrame({"greeting": ["hello"]})
...     def render(self, console): console.print("hello")
>>> payload = json.loads(render_text(Hello(), OutputFormat.JSON, command="stableval hello"))
>>> payload["command"], payload["score"]
('stableval hello', None)
>>> render_text(Hello(), OutputFormat.CSV), render_text(Hello(), OutputFormat.TABLE, to_file=True)
('greeting\nhello\n', 'hello\n')
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import typer

from stableval._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from rich.console import Console

__all__ = ["Appended", "Output", "OutputFormat", "Result", "emit", "make_console", "render_text", "save_plot",
           "write_csv", "write_output", "wrote"]


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


class Result(Protocol):
    """What a command's result offers the output helper."""

    def to_dict(self) -> dict[str, Any]: ...

    def to_frame(self) -> pd.DataFrame: ...

    def render(self, console: Console) -> None: ...


@dataclass(frozen=True)
class Appended:
    """A result with more to say: ``json`` entries added to its dictionary, ``render_more`` printed after its
    table (e.g. accuracy against gold labels), ``render_options`` passed to its ``render`` (e.g. ``top=20``)."""

    result: Any
    json: dict[str, Any] = field(default_factory=dict)
    render_more: Callable[[Console], None] | None = None
    render_options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.result.to_dict(), **self.json}

    def to_frame(self) -> pd.DataFrame:
        frame: pd.DataFrame = self.result.to_frame()
        return frame

    def render(self, console: Console) -> None:
        self.result.render(console, **self.render_options)
        if self.render_more is not None:
            self.render_more(console)


@dataclass(frozen=True)
class Output:
    """Where and how a command writes its result (``--format``, ``--output``)."""

    format: OutputFormat = OutputFormat.TABLE
    path: Path | None = None
    width: int = 140

    def emit(self, result: Result, *, frame: pd.DataFrame | None = None) -> None:
        """Write ``result`` (``frame`` replaces ``result.to_frame()`` as the CSV table)."""
        emit(result, self.format, self.path, frame=frame, width=self.width)


def make_console(buffer: io.StringIO, *, to_file: bool, width: int = 140) -> Console:
    """A rich console writing into ``buffer``: colours and the terminal's width on a terminal, plain text of
    ``width`` columns into files and pipes."""
    from rich.console import Console

    terminal = not to_file and sys.stdout.isatty()
    columns = shutil.get_terminal_size((width, 40)).columns if terminal else width
    return Console(file=buffer, force_terminal=terminal, width=columns, highlight=False)


def render_text(result: Result, output_format: OutputFormat, *, command: str | None = None, to_file: bool = False,
                frame: pd.DataFrame | None = None, width: int = 140) -> str:
    """The text ``emit`` writes: JSON (command and version first), CSV (``frame`` or ``to_frame()``) or the
    rendered table."""
    if output_format is OutputFormat.JSON:
        from stableval._json import jsonable

        header = {"command": command if command is not None else " ".join(["stableval", *sys.argv[1:]]),
                  "version": __version__}
        return json.dumps(jsonable({**header, **result.to_dict()}), indent=2, allow_nan=False) + "\n"
    if output_format is OutputFormat.CSV:
        return (frame if frame is not None else result.to_frame()).to_csv(index=False)
    buffer = io.StringIO()
    result.render(make_console(buffer, to_file=to_file, width=width))
    return buffer.getvalue()


def emit(result: Result, output_format: OutputFormat, output: Path | None = None, *,
         frame: pd.DataFrame | None = None, width: int = 140) -> None:
    """Write ``result`` as a table, JSON or CSV to stdout, or to ``output`` (saying so on stderr)."""
    write_output(render_text(result, output_format, to_file=output is not None, frame=frame, width=width), output)


def write_output(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` (creating missing folders) and say so on stderr."""
    if output is None:
        sys.stdout.write(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        wrote(output)


def wrote(path: Path) -> Path:
    """Say on stderr that ``path`` was written."""
    typer.echo(f"wrote {path}", err=True)
    return path


def save_plot(figure: Any, path: Path, *, dpi: float = 150) -> Path:
    """Save a figure (format by suffix, folders created) and say so."""
    from stableval.report.figures import save_figure

    return wrote(save_figure(figure, path, dpi=dpi))


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a side table (``--per-question``, ``--answers-out``, ...) as CSV, folders created, and say so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return wrote(path)
