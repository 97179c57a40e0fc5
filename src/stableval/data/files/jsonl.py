"""JSON Lines files: Arrow's C++ reader when every column is text or integers, a line-by-line reader otherwise
(it keeps numbers exactly as written and names a bad line); :func:`iter_jsonl` for nested records.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.jsonl"
>>> _ = path.write_text('{"item": "q1", "label": 2.50}\\n')
>>> read_jsonl(path).to_dict("records")
[{'item': 'q1', 'label': '2.50'}]
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from stableval.data.files.categories import all_text, categories_of, text_categories
from stableval.data.files.formats import SCALE_KEY, not_utf8, utf8_problem
from stableval.data.files.rows import LINE_OFFSET, duplicated_names
from stableval.errors import InputError

__all__ = ["iter_jsonl", "read_jsonl"]


def read_jsonl(path: Path, categorical: bool = False) -> pd.DataFrame:
    data = path.read_bytes()
    problem = utf8_problem(data)
    if problem is not None:
        raise not_utf8(path, problem, "UTF-8 JSON Lines text")
    scale, data = _scale_record(data)
    frame = _read_jsonl_records(path, data, first_line=1 if scale is None else 2, categorical=categorical)
    if scale is not None:
        frame.attrs[SCALE_KEY] = scale
    return frame


def _read_jsonl_records(path: Path, data: bytes, *, first_line: int, categorical: bool = False) -> pd.DataFrame:
    """The judgments of a JSON Lines file whose ``data`` start at line ``first_line``."""
    if not data.startswith(b"\xef\xbb\xbf"):
        fast = _read_jsonl_fast(data, categorical)
        if fast is not None:
            if LINE_OFFSET in fast.attrs:
                fast.attrs[LINE_OFFSET] = first_line - 1
            return fast
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path),
                         allowed="UTF-8 JSON Lines text") from exc
    decoder = json.JSONDecoder(parse_int=str, parse_float=str, object_pairs_hook=_no_duplicate_keys)
    records: list[dict[str, Any]] = []
    blank = False
    for number, line in enumerate(text.splitlines(), start=first_line):
        if not line.strip():
            blank = True
            continue
        try:
            record = decoder.decode(line)
        except _DuplicateKey as exc:
            raise InputError(f"line {number} names the key {exc.args[0]!r} twice", file=str(path),
                             column=str(exc.args[0]), allowed="each key once per object") from exc
        except json.JSONDecodeError as exc:
            raise InputError(f"line {number} is not valid JSON ({exc.msg}, column {exc.colno})",
                             file=str(path),
                             value=line if len(line) <= 80 else line[:77] + "...",
                             allowed="one JSON object per line") from exc
        if not isinstance(record, dict):
            raise InputError(f"line {number} is not a JSON object", file=str(path),
                             value=line if len(line) <= 80 else line[:77] + "...",
                             allowed='one JSON object per line, e.g. {"item": "q1", "rater": "r1", ...}')
        records.append(record)
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    frame = all_text(frame)
    if not blank:
        frame.attrs[LINE_OFFSET] = first_line - 1
    return frame


def _read_jsonl_fast(data: bytes, categorical: bool = False) -> pd.DataFrame | None:
    """JSON Lines through pyarrow's C++ reader, when every column is text or integers (else None).

    Other types (floats, dates pyarrow infers from strings, nested values) and any parse error fall back to
    the line-by-line reader, which keeps numbers exactly as written and names a bad line.
    """
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.json as pa_json  # type: ignore[import-untyped, unused-ignore]

    try:
        table = pa_json.read_json(io.BytesIO(data))
    except (pa.ArrowException, ValueError):
        return None
    for name, column in zip(table.column_names, table.columns, strict=True):
        kind = column.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)
                or pa.types.is_null(kind)):
            return None
        text = name.encode("utf-8")
        keys = sum(data.count(b'"' + text + b'"' + gap + b":") for gap in (b"", b" "))
        nulls = sum(data.count(b'"' + text + b'":' + gap + b"null") for gap in (b"", b" "))
        if keys > len(column) - column.null_count + nulls:  # a key twice in one object: the slow path names it
            return None

    def as_text(part: Any) -> pd.DataFrame:
        columns = {name: column.cast(pa.string()).fill_null("")
                   for name, column in zip(part.column_names, part.columns, strict=True)}
        frame = pa.table(columns).to_pandas() if columns else pd.DataFrame()
        return frame.astype(str) if len(frame.columns) else frame

    frame = categories_of(table, as_text) if categorical and table.num_columns else None
    if frame is None:
        frame = as_text(table)
        frame = text_categories(frame) if categorical else frame
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(frame) == lines:  # no blank lines: data row r is line r
        frame.attrs[LINE_OFFSET] = 0
    return frame


def _scale_record(data: bytes) -> tuple[dict[str, Any] | None, bytes]:
    """The scale record a JSON Lines file may open with (``{"stableval.scale": {...}}``, written by
    :func:`write_frame`), and the bytes after it; ``(None, data)`` when the first line is not one."""
    if not data.startswith(b'{"' + SCALE_KEY.encode()):
        return None, data
    line, _, rest = data.partition(b"\n")
    try:
        record = json.loads(line)
    except ValueError:
        return None, data
    if not isinstance(record, dict) or list(record) != [SCALE_KEY] or not isinstance(record[SCALE_KEY], dict):
        return None, data
    return record[SCALE_KEY], rest


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    twice = duplicated_names([key for key, _ in pairs])
    if twice:
        raise _DuplicateKey(twice[0])
    return dict(pairs)


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (raised by the line reader's object hook)."""


def iter_jsonl(path: str | os.PathLike[str], *, allowed: str = "one JSON object per line"
               ) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON Lines file, values parsed as JSON as they are.

    For nested records (the dataset loaders); :func:`read_table_file` reads flat tables. Text that is not
    UTF-8 and a line that is not JSON raise :class:`InputError` naming the file and the line; ``allowed`` says
    what a line should hold.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = path.write_text('{"id": 1}\\n\\n{"id": 2}\\n')
    >>> list(iter_jsonl(path))
    [(1, {'id': 1}), (3, {'id': 2})]
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not UTF-8 text ({exc.reason})", file=source, allowed="UTF-8 JSON Lines") from exc
    for line_no, line in enumerate(text.split("\n"), start=1):  # not splitlines(): U+2028 etc. are text in JSON
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {line_no} is not valid JSON ({exc.msg})", file=source, row=line_no,
                             allowed=allowed) from exc
        yield line_no, value
