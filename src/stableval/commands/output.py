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
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import typer

from stableval._version import __version__
from stableval.markup import LITERAL_MARK, TAG, literal

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from rich.console import Console

__all__ = ["Appended", "Output", "OutputFormat", "Result", "TableResult", "check_output_folder", "check_output_path",
           "emit", "literal", "make_console", "render_text", "save_plot", "say", "size_text", "styled_text", "visible",
           "write_csv", "write_failed", "write_file", "write_output", "wrote"]


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
class TableResult:
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
    width: int = 140

    def emit(self, result: Result, *, frame: pd.DataFrame | None = None) -> None:
        """Write ``result`` (``frame`` replaces ``result.to_frame()`` as the CSV table)."""
        emit(result, self.format, self.path, frame=frame, width=self.width)


# C0 and C1 control characters (tab and newline kept), DEL, and the bidirectional overrides and marks that
# reorder what a terminal shows
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# the style words the project's own messages use inside [...] tags; any other bracketed text is shown as written
_STYLE_WORDS = frozenset({"bold", "dim", "italic", "underline", "red", "green", "yellow", "blue", "magenta", "cyan"})


def _shown(text: str) -> str:
    return visible(text.replace(LITERAL_MARK + "[", "["))


def visible(text: str) -> str:
    r"""``text`` with control characters (terminal escapes, bell, bidirectional overrides) written as escapes.

    >>> visible("\x1b[31mRED\x1b[0m\tok\u202e")
    '\\x1b[31mRED\\x1b[0m\tok\\u202e'
    """
    def escaped(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escaped, text)


def styled_text(text: str, style: str = "") -> Any:
    """A rich ``Text`` of ``text`` where only the project's style tags (``[bold red]...[/]``) style it: any other
    bracketed text, an unmatched closing tag and control characters are shown as written (escaped).

    >>> styled_text("[bold]scores[/] of [b]x1[/b] and [/]").plain
    'scores of [b]x1[/b] and [/]'
    """
    from rich.text import Text

    opened: list[tuple[int, str]] = []  # (index of the opening tag, its style) not closed yet
    active: dict[int, str | None] = {}  # tag index → style it opens, or None for a closing tag; matched pairs only
    tags = list(TAG.finditer(text))
    for index, match in enumerate(tags):
        closing, words = match.group(1), " ".join(match.group(2).split())
        if not closing and words and set(words.split()) <= _STYLE_WORDS:
            opened.append((index, words))
        elif closing and opened and words in ("", opened[-1][1]):
            start, words = opened.pop()
            active[start], active[index] = words, None
    out = Text(style=style)
    stack: list[str] = []
    position = 0
    for index, match in enumerate(tags):
        if index not in active:
            continue
        out.append(_shown(text[position:match.start()]), style=" ".join(stack) or None)
        opens = active[index]
        if opens is not None:
            stack.append(opens)
        else:
            stack.pop()
        position = match.end()
    out.append(_shown(text[position:]), style=" ".join(stack) or None)
    return out


def _safe_console_class() -> type:
    """The rich Console that renders every string (printed lines, table cells, titles) with :func:`styled_text`."""
    from rich.console import Console
    from rich.text import Text

    class SafeConsole(Console):
        def render_str(self, text: str, *, style: Any = "", justify: Any = None, overflow: Any = None,
                       emoji: bool | None = None, markup: bool | None = None, highlight: bool | None = None,
                       highlighter: Any = None) -> Text:
            use_markup = markup or (markup is None and self._markup)
            rendered: Text = styled_text(text, style) if use_markup else Text(visible(text), style=style)
            rendered.justify = justify
            rendered.overflow = overflow
            return rendered

        def render(self, renderable: Any, options: Any = None) -> Any:
            _never_truncate(renderable)
            return super().render(renderable, options)

    return SafeConsole


def _never_truncate(renderable: Any) -> None:
    """Make a rich Table show every name in full: a cell too wide for its column folds onto the next line instead
    of being cut to an ellipsis (``gpt-3.…``)."""
    from rich.table import Table

    if isinstance(renderable, Table):
        for column in renderable.columns:
            if column.overflow == "ellipsis":
                column.overflow = "fold"


def make_console(buffer: io.StringIO | None = None, *, to_file: bool, width: int = 140,
                 stderr: bool = False) -> Console:
    r"""A rich console writing into ``buffer`` (or stderr): colours and the terminal's width on a terminal, plain
    text of ``width`` columns into files and pipes. Strings from the data are safe to print: only the project's
    style tags style text (:func:`styled_text`) and control characters are escaped (:func:`visible`).

    >>> buffer = io.StringIO()
    >>> make_console(buffer, to_file=True).print("[bold]agent[/] [/] \x1b[31m")
    >>> buffer.getvalue()
    'agent [/] \\x1b[31m\n'
    """
    stream = sys.stderr if stderr else sys.stdout
    terminal = not to_file and stream.isatty()
    columns = shutil.get_terminal_size((width, 40)).columns if terminal else width
    console: Console = _safe_console_class()(file=buffer, stderr=stderr, force_terminal=terminal, width=columns,
                                             highlight=False, emoji=False)
    return console


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
