"""Reading question files one record at a time: the file's rows (JSON Lines parsed as nested JSON, other tables
through the portal's table reader), text cells checked for width, the columns every task type shares, answers that
may be agent transcripts, and the blanks and JSON-in-text of a ``gold`` cell.

Every problem is an :class:`~stableval.errors.InputError` naming the file, row, column, value and what is allowed.

>>> blank(float("nan")), blank(" "), blank("B")
(True, True, False)
>>> maybe_json('["d2", "d0"]'), maybe_json("B")
(['d2', 'd0'], 'B')
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from stableval.errors import InputError
from stableval.portal.tasks.transcripts import transcript_problem

__all__ = ["CONTROLS", "GOLD_MARK", "MAX_TEXT", "answer_text", "blank", "common_columns", "control_in", "maybe_json",
           "question_records", "text_cell", "without_controls"]

#: Longest prompt, answer or item text accepted at import (characters): longer text makes pages slow to load.
MAX_TEXT = 100_000
#: Control characters no stored text keeps (every one of U+0000-U+001F but tab, line feed and carriage return, and
#: DEL): PostgreSQL cannot store NUL, and none of them shows as text. Typed text loses them
#: (:func:`without_controls`); a question file holding one is refused, naming the row and column.
CONTROLS = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])


def without_controls(text: str) -> str:
    r"""``text`` without :data:`CONTROLS` (a NUL, a bell, an escape).

    >>> without_controls("Dr\x00 A\tB\r\nC\x1b")
    'Dr A\tB\r\nC'
    """
    return text.translate(CONTROLS)


def control_in(value: Any) -> str | None:
    """The first text in ``value`` (text, or JSON of lists and objects) that holds one of :data:`CONTROLS`, else
    None."""
    if isinstance(value, str):
        return value if value != value.translate(CONTROLS) else None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return next((found for item in value if (found := control_in(item)) is not None), None)
    return None


#: ``Question.gold`` of a gold question whose known answer is in ``payload["gold"]`` (the answer may be longer
#: than the ``gold`` column's 16 characters).
GOLD_MARK = "task"


def question_records(path: Path, source: str, read_table: Callable[[Path, str], pd.DataFrame]
                     ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row, record) per question, keys in lower case: JSON Lines parsed as nested JSON, other tables through
    ``read_table`` (empty cells as "")."""
    from stableval.data.files import iter_jsonl

    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            for row, value in iter_jsonl(path, allowed="one JSON object per question"):
                if not isinstance(value, dict):
                    raise InputError("not a JSON object", file=source, row=row, value=type(value).__name__,
                                     allowed="one JSON object per question")
                yield row, _storable({key: value[name] for name, key in _keys(value, row, source).items()}, row,
                                     source)
        except InputError as error:
            if error.file == source:
                raise
            raise InputError(error.problem.replace(str(path), source), file=source, row=error.row,
                             column=error.column, value=error.value, allowed=error.allowed,
                             has_value=error.has_value) from None
        return
    frame = read_table(path, source)
    frame.columns = list(_keys(dict.fromkeys(frame.columns), 1, source).values())
    for row, record in enumerate(frame.to_dict("records"), start=1):
        yield row, _storable({str(k): ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                              for k, v in record.items()}, row, source)


def _keys(record: dict[Any, Any], row: int, source: str) -> dict[Any, str]:
    """Each column name -> its key (stripped, lower case); two names with one key are refused, naming both."""
    keys: dict[Any, str] = {}
    for name in record:
        key = str(name).strip().lower()
        if key in keys.values():
            first = next(other for other, known in keys.items() if known == key)
            raise InputError("column named twice (case and spaces aside)", file=source, row=row, column=str(name),
                             value=f"{first!s} and {name!s}", allowed=f"one column {key!r}")
        keys[name] = key
    return keys


def _storable(record: dict[str, Any], row: int, source: str) -> dict[str, Any]:
    """The record, unless a cell holds a control character (:data:`CONTROLS`): then an error naming it."""
    for column, value in record.items():
        found = control_in(column) or control_in(value)
        if found is not None:
            code = next(ord(c) for c in found if ord(c) in CONTROLS)
            raise InputError(f"control character U+{code:04X} in the text", file=source, row=row, column=column,
                             value=found.translate(CONTROLS)[:40],
                             allowed="text without control characters (tab and line breaks are fine)")
    return record


def text_cell(record: dict[str, Any], column: str, row: int, source: str, *, required: bool, width: int = MAX_TEXT,
              allowed: str = "non-empty text") -> str:
    """The text of one cell (a whole number read as a float is written without ``.0``)."""
    value = record.get(column, "")
    if value is None:
        value = ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, dict | list):
        raise InputError("not text", file=source, row=row, column=column, value=json.dumps(value)[:40],
                         allowed=allowed)
    text = str(value)
    if required and not text.strip():
        raise InputError("empty value", file=source, row=row, column=column, value="", allowed=allowed)
    if len(text) > width:
        raise InputError(f"text too long ({len(text):,} characters)", file=source, row=row, column=column,
                         value=text[:40] + "…", allowed=f"at most {width:,} characters")
    return text


def common_columns(record: dict[str, Any], row: int, source: str, normalise_group: Callable[[Any], str]
                   ) -> dict[str, Any]:
    """The columns every task has: id, prompt, reference, specialty, subspecialty (and the pairwise answer columns,
    empty)."""
    return {"external_id": text_cell(record, "id", row, source, required=True, width=200).strip(),
            "prompt": text_cell(record, "prompt", row, source, required=True),
            "reference": text_cell(record, "reference", row, source, required=False),
            "specialty": normalise_group(text_cell(record, "specialty", row, source, required=False, width=100)),
            "subspecialty": normalise_group(text_cell(record, "subspecialty", row, source, required=False,
                                                      width=100)),
            "model_a": "", "answer_a": "", "model_b": "", "answer_b": "", "payload": None}


def answer_text(record: dict[str, Any], column: str, row: int, source: str) -> str:
    """An answer cell: Markdown text, or a valid agent transcript (:mod:`stableval.portal.tasks.transcripts`)."""
    text = text_cell(record, column, row, source, required=True)
    problem = transcript_problem(text)
    if problem:
        raise InputError(problem, file=source, row=row, column=column, value=text[:40],
                         allowed="Markdown text, or a JSON list of messages {role, content, reasoning?, "
                                 "tool_calls?} (see docs/portal.md, 'Transcripts')")
    return text


def blank(value: Any) -> bool:
    """An empty cell (None, NaN, blank text)."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def maybe_json(value: Any) -> Any:
    """A JSON object or list written as text (CSV cells) is read as JSON; other text stays text."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
