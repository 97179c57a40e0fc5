"""Exceptions raised by stableval.

Every input problem is an :class:`InputError` whose message says *where* (file, row, column), *what*
(the offending value) and *what is allowed*, so a user can fix the file without reading code.

>>> str(InputError("label not among the levels", file="a.csv", row=3, column="label", value="maybe",
...                allowed="one of: bad, good"))
"a.csv, row 3, column 'label': label not among the levels: got 'maybe'; allowed: one of: bad, good"

When the fix is to set an option, the error names it (``option``: its Python name, e.g. ``duplicates``,
``levels``, or ``columns.item`` for a column role) and its text mentions options as ``{name}`` placeholders.
``str(error)`` spells them as Python code sets them; the command line spells them as its flags
(:meth:`InputError.spelled`), so the data layer never writes a flag.

>>> error = InputError("rows repeat", file="a.csv", allowed="{duplicates} to keep one",
...                    options={"duplicates": "first|last"})
>>> error.option, str(error)
('duplicates', "a.csv: rows repeat; allowed: duplicates='first'|'last' to keep one")
>>> error.spelled(lambda option, value: f"--{option} {value}")
'a.csv: rows repeat; allowed: --duplicates first|last to keep one'

An error about the value of an option itself (it names the option, but no file, no column and no placeholder of
that option) names the option where a column would stand, in the same spelling:

>>> error = InputError("unknown tie policy", option="ties", value="up", allowed="optimistic, mid, pessimistic")
>>> str(error)
"option 'ties': unknown tie policy: got 'up'; allowed: optimistic, mid, pessimistic"
>>> error.spelled(lambda option, value: f"--{option}" if value is None else f"--{option} {value}")
"option '--ties': unknown tie policy: got 'up'; allowed: optimistic, mid, pessimistic"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["COLUMN_OPTION", "InputError", "MissingColumnError", "NotFittedError", "Spelling", "StableValError",
           "python_spelling",
           "spell_options"]

#: Spells an option a message asks the user to set: ``(option, value to give it or None) → text``.
Spelling = Callable[[str, str | None], str]
#: The prefix of the option that names a column role: ``columns.item`` is ``columns={'item': ...}``.
COLUMN_OPTION = "columns."


def python_spelling(option: str, value: str | None = None) -> str:
    """How Python code sets ``option`` to ``value``.

    ``value`` is written as on the command line: alternatives separated by ``|``, a placeholder in capitals
    (``NAME``, ``FILE``) left as it is, anything else quoted; ``None`` names the option alone.

    >>> python_spelling("duplicates", "first|last|keep"), python_spelling("columns.item", "NAME")
    ("duplicates='first'|'last'|'keep'", "columns={'item': NAME}")
    >>> python_spelling("levels", "a,b,c"), python_spelling("format"), python_spelling("columns.rater")
    ("levels='a,b,c'", 'format=', "columns={'rater': ...}")
    """
    if option.startswith(COLUMN_OPTION):
        role = option[len(COLUMN_OPTION):]
        return f"columns={{{role!r}: {_python_value(value) if value is not None else '...'}}}"
    return f"{option}={_python_value(value) if value is not None else ''}"


def _python_value(value: str) -> str:
    return "|".join(part if part.isalpha() and part.isupper() else repr(part) for part in value.split("|"))


def spell_options(text: str, options: Mapping[str, str | None], spelling: Spelling = python_spelling) -> str:
    """``text`` with each ``{option}`` placeholder of ``options`` (option → value) spelled by ``spelling``.

    >>> spell_options("or {levels}", {"levels": "a,b,c"})
    "or levels='a,b,c'"
    """
    for option, value in options.items():
        text = text.replace("{" + option + "}", spelling(option, value))
    return text


class StableValError(Exception):
    """Base class of every error stableval raises on purpose."""


class InputError(StableValError, ValueError):
    """Bad input data: names the file, row, column, offending value and what is allowed.

    ``row`` is the 1-based data row (the header is not counted); ``line`` the file line it stands on, where lines
    mean something (for CSV/TSV ``row + 1``). ``option`` is the Python name of the option that fixes the problem,
    if one does; ``options`` maps each option that ``problem`` and ``allowed`` mention as a ``{name}`` placeholder
    to the value to suggest (``None``: the option alone), and defaults to ``{option: None}``. Without ``file``
    and ``column``, an ``option`` the text does not mention is what the error is about: it is named where a column
    would be (:attr:`about_option`).
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: str | None = None,
        value: Any = None,
        allowed: str | None = None,
        has_value: bool | None = None,
        option: str | None = None,
        options: Mapping[str, str | None] | None = None,
    ) -> None:
        self.options: dict[str, str | None] = dict(options) if options else ({option: None} if option else {})
        self.option = option if option is not None else next(iter(self.options), None)
        self.problem_template, self.allowed_template = problem, allowed
        self.problem = spell_options(problem, self.options)
        self.file = file
        self.row = row
        self.line = line
        self.column = column
        self.value = value
        self.allowed = spell_options(allowed, self.options) if allowed is not None else None
        self.has_value = value is not None if has_value is None else has_value
        super().__init__(self.spelled())

    def spelled(self, spelling: Spelling = python_spelling) -> str:
        """The message with its options spelled by ``spelling`` (``str(error)``: :func:`python_spelling`)."""
        where = [part for part in (
            self.file,
            (f"row {self.row}" + (f" (line {self.line})" if self.line is not None else ""))
            if self.row is not None else None,
            f"column {self.column!r}" if self.column is not None else None,
            f"option {spelling(self.option, None).removesuffix('=')!r}"
            if self.option is not None and self.about_option else None,
        ) if part]
        text = (", ".join(where) + ": " if where else "") + spell_options(self.problem_template, self.options,
                                                                           spelling)
        if self.has_value:
            text += f": got {self.value!r}"
        if self.allowed_template:
            text += f"; allowed: {spell_options(self.allowed_template, self.options, spelling)}"
        return text

    @property
    def about_option(self) -> bool:
        """Whether the error is about the value of its ``option`` (no file, no column, no placeholder of it)."""
        mentioned = "{" + str(self.option) + "}"
        return (self.option is not None and self.file is None and self.column is None
                and mentioned not in self.problem_template and mentioned not in (self.allowed_template or ""))

    def replace(self, **changes: Any) -> InputError:
        """A copy with some fields changed; ``problem`` and ``allowed`` are given with their placeholders (as
        ``problem_template`` and ``allowed_template`` hold them).

        >>> InputError("bad", file="a.csv", row=2).replace(file="b.csv").spelled()
        'b.csv, row 2: bad'
        """
        fields = {"problem": self.problem_template, "file": self.file, "row": self.row, "line": self.line,
                  "column": self.column, "value": self.value, "allowed": self.allowed_template,
                  "has_value": self.has_value, "option": self.option, "options": self.options}
        return type(self)(**{**fields, **changes})

    def __reduce__(self) -> tuple[Any, ...]:  # every field survives pickling (errors raised on Dask workers)
        return _rebuild, (type(self), self.problem_template, {
            "file": self.file, "row": self.row, "line": self.line, "column": self.column, "value": self.value,
            "allowed": self.allowed_template, "has_value": self.has_value, "option": self.option,
            "options": self.options})


def _rebuild(kind: type[InputError], problem: str, fields: dict[str, Any]) -> InputError:
    return kind(problem, **fields)


class MissingColumnError(InputError, KeyError):
    """A column the input must have is missing: an :class:`InputError` to stableval's users, a ``KeyError`` to
    pandas' and crowd-kit's (``data["task"]`` raises ``KeyError`` there).

    >>> error = MissingColumnError("no such column", column="task", allowed="task, worker, label")
    >>> isinstance(error, KeyError), isinstance(error, InputError), str(error)
    (True, True, "column 'task': no such column; allowed: task, worker, label")
    """

    __str__ = InputError.__str__  # the message as written, not KeyError's repr of it


class NotFittedError(StableValError, AttributeError):
    """An estimator's results were used before ``fit`` was called."""
