"""Places in a table file: 1-based data rows, the file lines they stand on, and the header's column names.

>>> rows_text([3, 7], 1)
'rows 3 and 7 (lines 4 and 8)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from stableval.errors import InputError

__all__ = ["LINE_OFFSET", "duplicated_names", "line_offset", "refuse_duplicated", "row_error", "rows_text"]


#: frame.attrs key: the file line of data row r is r + offset (absent where lines mean nothing, e.g. Parquet)
LINE_OFFSET = "stableval.line_offset"


def line_offset(frame: pd.DataFrame) -> int | None:
    """The file line of data row ``r`` is ``r + line_offset(frame)``; ``None`` where lines mean nothing.

    >>> line_offset(pd.DataFrame()) is None
    True
    """
    offset = frame.attrs.get(LINE_OFFSET)
    return int(offset) if offset is not None else None


def rows_text(rows: Sequence[int], offset: int | None) -> str:
    """'rows 3 and 7 (lines 4 and 8)': 1-based data rows, with file lines where they mean something.

    >>> rows_text([3, 7], 1), rows_text([2], None)
    ('rows 3 and 7 (lines 4 and 8)', 'row 2')
    """
    def join(values: Sequence[int]) -> str:
        text = [str(v) for v in values]
        return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]

    noun = "row" if len(rows) == 1 else "rows"
    out = f"{noun} {join(rows)}"
    if offset is not None:
        out += f" ({'line' if len(rows) == 1 else 'lines'} {join([r + offset for r in rows])})"
    return out


def row_error(problem: str, *, source: str, row: int, offset: int | None, column: str | None = None,
              value: Any = None, allowed: str | None = None, has_value: bool | None = None,
              line_at: Literal["row", "problem"] = "row", option: str | None = None,
              options: Mapping[str, str | None] | None = None) -> InputError:
    """An InputError at 1-based data row ``row``; where ``offset`` is known the message also gives the file line.

    ``line_at="row"`` writes the line after the row (``'a.csv, row 5 (line 6), column ...'``); ``"problem"``
    after the problem (``'a.csv, row 5, column 'x': bad value (line 6): got ...'``), as the dataset loaders do.
    ``option`` and ``options`` name the options that fix it (see :class:`~stableval.errors.InputError`).

    >>> str(row_error("empty id", source="a.csv", row=5, offset=1, column="item", value=""))
    "a.csv, row 5 (line 6), column 'item': empty id: got ''"
    >>> str(row_error("bad", source="a.csv", row=5, offset=1, column="x", value="?", line_at="problem"))
    "a.csv, row 5, column 'x': bad (line 6): got '?'"
    """
    if offset is not None and line_at == "problem":
        problem = f"{problem} (line {row + offset})"
    return InputError(problem, file=source, row=row, line=row + offset if offset is not None and line_at == "row"
                      else None, column=column, value=value, allowed=allowed, has_value=has_value, option=option,
                      options=options)


def duplicated_names(names: Sequence[Any]) -> list[str]:
    """Column names that occur more than once, in order of first occurrence.

    >>> duplicated_names(["item", "label", "item", "label", "x"])
    ['item', 'label']
    """
    seen: set[str] = set()
    twice: dict[str, None] = {}
    for name in map(str, names):
        if name in seen:
            twice[name] = None
        seen.add(name)
    return list(twice)


def refuse_duplicated(path: Path, names: Sequence[Any]) -> None:
    """Raise :class:`InputError` naming the first column name that ``names`` (a file's header) holds twice."""
    twice = duplicated_names(names)
    if twice:
        raise InputError(f"column {twice[0]!r} appears more than once in the header"
                         + (f" (also: {', '.join(map(repr, twice[1:]))})" if len(twice) > 1 else ""),
                         file=str(path), column=twice[0], allowed="each column name once; rename or drop the copies")
