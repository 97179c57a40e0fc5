r"""The console every table is drawn on, for a terminal, a file or a notebook.

Text from the data (agent, rater and item names, file names) is never read as markup or sent to the terminal
raw: the console :func:`make_console` returns styles only the project's own tags (``[bold]``, ``[red]``, ...
closed by ``[/]``) and shows control characters escaped (:func:`visible`). In a notebook a result shows the same
table as HTML (:class:`Displayed`, :func:`html_of`), every character of the data escaped.

>>> class Hello(Displayed):
...     def render(self, console): console.print("<script>hello</script>")
>>> "&lt;script&gt;hello" in Hello()._repr_html_()
True
"""

from __future__ import annotations

import io
import re
import shutil
import sys
from typing import TYPE_CHECKING, Any, TextIO

from stableval.markup import LITERAL_MARK, TAG

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["Displayed", "html_of", "make_console", "styled_text", "visible"]


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


#: The width of text written to a file or a pipe: in effect none. A line is never wrapped there (``grep``, ``cut``
#: and log parsers read whole lines) and a table keeps its natural width, however long a name or a path is.
UNWRAPPED = 1_000_000


def terminal_columns(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to (``COLUMNS`` if set), or ``None`` when it is a file or pipe."""
    return shutil.get_terminal_size().columns if stream.isatty() else None


def make_console(buffer: io.StringIO | None = None, *, to_file: bool, width: int | None = None,
                 stderr: bool = False) -> Console:
    r"""A rich console writing into ``buffer`` (or stderr). On a terminal: colours, and lines and tables fitted to
    the terminal's width. Into files and pipes: plain text never wrapped (:data:`UNWRAPPED`). ``width`` fixes the
    width instead (tests, previews). Strings from the data are safe to print: only the project's style tags style
    text (:func:`styled_text`) and control characters are escaped (:func:`visible`).

    >>> buffer = io.StringIO()
    >>> make_console(buffer, to_file=True).print("[bold]agent[/] [/] \x1b[31m " + "x" * 200)
    >>> buffer.getvalue() == "agent [/] \\x1b[31m " + "x" * 200 + "\n"
    True
    """
    stream = sys.stderr if stderr else sys.stdout
    columns = None if to_file else terminal_columns(stream)
    terminal = columns is not None
    console: Console = _safe_console_class()(file=buffer, stderr=stderr, force_terminal=terminal,
                                             force_jupyter=False, width=width or columns or UNWRAPPED,
                                             soft_wrap=width is None and not terminal, highlight=False, emoji=False)
    return console


def html_of(result: Any, width: int | None = None) -> str:
    """The table ``result.render(console)`` draws, as HTML: the same text as the terminal's, its styles inline,
    every character of the data escaped.

    >>> class Hello:
    ...     def render(self, console): console.print("[bold]a & b[/]")
    >>> html = html_of(Hello())
    >>> "a &amp; b" in html and "font-weight: bold" in html
    True
    """
    console = make_console(io.StringIO(), to_file=True, width=width)
    console.record = True
    result.render(console)
    html = console.export_html(inline_styles=True, code_format="<pre style=\"font-family: monospace\">{code}</pre>")
    return html


class Displayed:
    """A result that shows its table in a notebook: ``_repr_html_`` is :func:`html_of` its ``render``."""

    def render(self, console: Console) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return html_of(self)
