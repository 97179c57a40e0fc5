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

__all__ = ["GOLD_MARK", "MAX_TEXT", "answer_text", "blank", "common_columns", "maybe_json", "question_records",
           "text_cell"]

#: Longest prompt, answer or item text accepted at import (characters): longer text makes pages slow to load.
MAX_TEXT = 100_000
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
                yield row, {str(k).strip().lower(): v for k, v in value.items()}
        except InputError as error:
            if error.file == source:
                raise
            raise InputError(error.problem.replace(str(path), source), file=source, row=error.row,
                             column=error.column, value=error.value, allowed=error.allowed,
                             has_value=error.has_value) from None
        return
    frame = read_table(path, source)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    for row, record in enumerate(frame.to_dict("records"), start=1):
        yield row, {str(k): ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                    for k, v in record.items()}


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
