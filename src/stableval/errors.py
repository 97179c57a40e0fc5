"""Exceptions raised by stableval.

Every input problem is an :class:`InputError` whose message says *where* (file, row, column), *what*
(the offending value) and *what is allowed*, so a user can fix the file without reading code.

>>> str(InputError("label not among the levels", file="a.csv", row=3, column="label", value="maybe",
...                allowed="one of: bad, good"))
"a.csv, row 3, column 'label': label not among the levels: got 'maybe'; allowed: one of: bad, good"
"""

from __future__ import annotations

from typing import Any


class StableValError(Exception):
    """Base class of every error stableval raises on purpose."""


class InputError(StableValError, ValueError):
    """Bad input data: names the file, row, column, offending value and what is allowed.

    ``row`` is the 1-based data row (the header is not counted; for CSV/TSV the file line is ``row + 1``).
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
        value: Any = None,
        allowed: str | None = None,
        has_value: bool | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.row = row
        self.column = column
        self.value = value
        self.allowed = allowed
        self.has_value = value is not None if has_value is None else has_value
        super().__init__(self._format())

    def _format(self) -> str:
        where = [part for part in (
            self.file,
            f"row {self.row}" if self.row is not None else None,
            f"column {self.column!r}" if self.column is not None else None,
        ) if part]
        text = (", ".join(where) + ": " if where else "") + self.problem
        if self.has_value:
            text += f": got {self.value!r}"
        if self.allowed:
            text += f"; allowed: {self.allowed}"
        return text


class NotFittedError(StableValError, AttributeError):
    """An estimator's results were used before ``fit`` was called."""
