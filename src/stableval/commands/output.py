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

Text from the data (agent, rater and item names, file names) is never read as markup or sent to the terminal
raw: the console :func:`make_console` returns styles only the project's own tags (``[bold]``, ``[red]``, ...
closed by ``[/]``) and shows control characters escaped (:func:`visible`).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import typer

from stableval._version import __version__
from stableval.console import UNWRAPPED, Displayed, make_console, styled_text, terminal_columns, visible
from stableval.markup import literal

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from rich.console import Console

__all__ = ["UNWRAPPED", "Appended", "Output", "OutputFormat", "Result", "TableResult", "check_output_folder",
           "check_output_path", "emit", "literal", "make_console", "render_text", "save_plot", "say", "size_text",
           "styled_text", "terminal_columns", "visible", "write_csv", "write_failed", "write_file", "write_output",
           "wrote"]


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
class Appended(Displayed):
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
class TableResult(Displayed):
    """A table of results with a title, notes and extra JSON entries, written by :func:`emit` (JSON: the extra
    entries, ``notes`` and ``rows``; the table prints a missing number as ``-`` and ``params`` as ``124M``).

    >>> import pandas as pd
    >>> result = TableResult(pd.DataFrame({"model": ["gpt2"], "params": [1.24e8]}), "Sizes", ["one model"], {"k": 1})
    >>> result.to_dict()
    {'k': 1, 'notes': ['one model'], 'rows': [{'model': 'gpt2', 'params': 124000000.0}]}
    >>> "124M" in render_text(result, OutputFormat.TABLE, to_file=True)
    True
    """

    frame: pd.DataFrame
    title: str
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    digits: int = 3

    def to_dict(self) -> dict[str, Any]:
        from stableval._json import jsonable, records

        return {**jsonable(self.extra), "notes": list(self.notes), "rows": records(self.frame)}

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def _cell(self, column: Any, value: Any) -> str:
        """A missing number prints as ``-``; model sizes (``params``) as ``124M``, ``7B``."""
        if not isinstance(value, float):
            return str(value)
        if value != value:
            return "-"
        if column == "params":
            return size_text(value)
        return f"{value:.{self.digits}f}"

    def render(self, console: Console) -> None:
        from pandas.api.types import is_numeric_dtype
        from rich import box
        from rich.table import Table

        table = Table(box=box.SIMPLE_HEAVY, title=self.title, title_justify="left", show_edge=False)
        for column in self.frame.columns:
            table.add_column(str(column), justify="right" if is_numeric_dtype(self.frame[column]) else "left")
        for row in self.frame.itertuples(index=False):
            table.add_row(*[self._cell(column, value) for column, value in zip(self.frame.columns, row,
                                                                               strict=True)])
        console.print(table)
        for note in self.notes:
            console.print(f"note: {note}")


def size_text(value: float) -> str:
    """A parameter count as people write it.

    >>> size_text(1.24e8), size_text(7e9), size_text(512)
    ('124M', '7B', '512')
    """
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Output:
    """Where and how a command writes its result (``--format``, ``--output``)."""

    format: OutputFormat = OutputFormat.TABLE
    path: Path | None = None

    def emit(self, result: Result, *, frame: pd.DataFrame | None = None) -> None:
        """Write ``result`` (``frame`` replaces ``result.to_frame()`` as the CSV table)."""
        emit(result, self.format, self.path, frame=frame)


def render_text(result: Result, output_format: OutputFormat, *, command: str | None = None, to_file: bool = False,
                frame: pd.DataFrame | None = None, width: int | None = None) -> str:
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
         frame: pd.DataFrame | None = None) -> None:
    """Write ``result`` as a table, JSON or CSV to stdout, or to ``output`` (saying so on stderr): a table fits the
    terminal's width on a terminal, and is never wrapped in a file or a pipe."""
    write_output(render_text(result, output_format, to_file=output is not None, frame=frame), output)


def check_output_path(path: Path | None, option: str = "--output") -> Path | None:
    """``path`` if a file can be written there (missing folders will be created); else a usage error naming
    ``option`` and the reason (:func:`~stableval.data.files.unwritable`). Commands check their output paths before
    any work is done.

    >>> check_output_path(Path("results/new/scores.json")).name
    'scores.json'
    >>> try:
    ...     check_output_path(Path("."))
    ... except typer.BadParameter as error:
    ...     print(error.message)
    '.' is a folder; allowed: a file name, e.g. results.json
    """
    from stableval.data.files import unwritable

    if path is None:
        return None
    why = unwritable(path)
    if why is not None and why.endswith("is a folder, not a file"):
        raise typer.BadParameter(f"{str(path)!r} is a folder; allowed: a file name, e.g. "
                                 f"{visible(str(path / ('results' + (path.suffix or '.json'))))}", param_hint=option)
    if why is not None:
        raise typer.BadParameter(f"cannot write {str(path)!r}: {why}", param_hint=option)
    return path


def check_output_folder(path: Path | None, option: str = "--output") -> Path | None:
    """``path`` if a folder can be written there (it may exist; missing folders will be created); else a usage error
    naming ``option`` and the reason. Checked before any work.

    >>> check_output_folder(Path("plots/new")).name
    'new'
    """
    from stableval.data.files import unwritable

    why = unwritable(path, folder=True) if path is not None else None
    if why is not None:
        raise typer.BadParameter(f"cannot write into {str(path)!r}: {why}", param_hint=option)
    return path


def write_failed(path: Path | str, error: OSError) -> typer.Exit:
    """``error: cannot write PATH: reason`` on stderr; the exit (code 1) to raise."""
    typer.echo(f"error: cannot write {visible(str(path))}: {error.strerror or error}", err=True)
    return typer.Exit(code=1)


def write_file(text: str, path: Path) -> Path:
    """Write ``text`` to ``path`` (UTF-8, missing folders created); a failure is :func:`write_failed`'s error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise write_failed(path, error) from None
    return path


def write_output(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` (creating missing folders) and say so on stderr."""
    if output is None:
        sys.stdout.write(text)
    else:
        wrote(write_file(text, output))


def say(text: str) -> None:
    """Print ``text`` on stderr (a progress line, what was written), control characters escaped."""
    typer.echo(visible(text), err=True)


def wrote(path: Path, detail: str = "") -> Path:
    """Say on stderr that ``path`` was written, with ``detail`` after it."""
    say(f"wrote {path}{detail}")
    return path


def save_plot(figure: Any, path: Path, *, dpi: float = 150) -> Path:
    """Save a figure (format by suffix, folders created) and say so."""
    from stableval.report.figures import save_figure

    try:
        return wrote(save_figure(figure, path, dpi=dpi))
    except OSError as error:
        raise write_failed(error.filename or path, error) from None


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a side table (``--per-question``, ``--answers-out``, ...) as CSV, folders created, and say so."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
    except OSError as error:
        raise write_failed(path, error) from None
    return wrote(path)
