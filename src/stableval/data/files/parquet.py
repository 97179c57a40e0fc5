"""Parquet files: read through Arrow (string columns as dictionaries when coding categories), with the label
scale a file declares, and a worded error for a damaged file.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.parquet"
>>> pd.DataFrame({"item": ["q1"], "label": [2]}).to_parquet(path)
>>> read_parquet(path).to_dict("records")
[{'item': 'q1', 'label': '2'}]
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stableval.data.files.categories import all_text, categories_of, text_categories
from stableval.data.files.formats import SCALE_KEY
from stableval.data.files.rows import refuse_duplicated, row_error
from stableval.errors import InputError

__all__ = ["parquet_damage", "parquet_frame", "read_parquet", "text_columns", "wanted_columns"]


# what a damaged Parquet file's raw Arrow message means, in the order they are looked for
_PARQUET_DAMAGE = (
    ("magic bytes not found", "no Parquet footer at its end (the file was cut short, or it is not Parquet)"),
    ("smaller than indicated metadata size", "no Parquet footer at its end (the file was cut short, or it is not "
                                             "Parquet)"),
    ("invalid base64", "its 'ARROW:schema' metadata is not valid base64"),
    ("multiple matches for fieldref", "two columns share one name"),
    ("deserialize thrift", "its footer (the schema and row-group index) cannot be decoded"),
    ("flatbuffer", "its 'ARROW:schema' metadata cannot be decoded"),
)


def parquet_damage(path: str | os.PathLike[str], exc: BaseException) -> InputError:
    """Our :class:`InputError` for a Parquet file Arrow cannot read: what is wrong and what to do, the raw library
    text only as a detail at the end.

    >>> str(parquet_damage("a.parquet", OSError("Parquet magic bytes not found in footer.")))
    'a.parquet: not a readable Parquet file: no Parquet footer at its end (the file was cut short, or it is not \
Parquet); re-export it or convert it to CSV (detail: Parquet magic bytes not found in footer.)'
    """
    raw = " ".join(str(exc).split())
    lowered = raw.lower()
    what = next((meaning for key, meaning in _PARQUET_DAMAGE if key in lowered),
                "Arrow cannot decode it (damaged, or written by a tool Arrow does not support)")
    detail = f" (detail: {raw if len(raw) <= 200 else raw[:197] + '...'})" if raw else ""
    return InputError(f"not a readable Parquet file: {what}; re-export it or convert it to CSV{detail}",
                      file=str(path))


def read_parquet(path: Path, categorical: bool = False, columns: Sequence[str] | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    try:
        schema = pq.read_schema(path)
        refuse_duplicated(path, schema.names)
        wanted = wanted_columns(schema.names, columns)
        table = pq.read_table(path, columns=wanted,
                              read_dictionary=text_columns(schema, wanted) if categorical else None)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise parquet_damage(path, exc) from exc
    return parquet_frame(path, table, categorical)


def parquet_frame(path: Path, table: Any, categorical: bool) -> pd.DataFrame:
    """The frame of an Arrow table read from Parquet: text (or categories of text), with its declared scale."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    for index, (name, column) in enumerate(zip(table.column_names, table.columns, strict=True)):
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            table = table.set_column(index, name, _binary_as_text(path, name, column))

    def as_text(part: Any) -> pd.DataFrame:
        try:
            return all_text(part.to_pandas())
        except Exception as exc:  # e.g. an extension type pandas cannot hold
            raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=str(path),
                             allowed="a Parquet file of text or number columns") from exc

    frame = categories_of(table, as_text) if categorical else None
    if frame is None:
        frame = as_text(table)
        frame = text_categories(frame) if categorical else frame
    scale = (table.schema.metadata or {}).get(SCALE_KEY.encode())
    if scale is not None:
        try:
            frame.attrs[SCALE_KEY] = json.loads(scale)
        except ValueError:  # metadata someone else wrote: not ours to judge
            pass
    return frame


def _binary_as_text(path: Path, name: str, column: Any) -> Any:
    """A Parquet ``binary`` column as UTF-8 text; a value that is not UTF-8 raises naming its row."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    try:
        return column.cast(pa.string())
    except pa.ArrowInvalid:
        pass
    for row, value in enumerate(column.to_pylist(), start=1):
        if value is None:
            continue
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise row_error(f"binary value is not UTF-8 text ({exc.reason} at byte {exc.start})", source=str(path),
                            row=row, offset=None, column=name, value=value,
                            allowed="UTF-8 text (write the column as a string column)") from exc
    raise InputError("binary column cannot be read as text", file=str(path), column=name,
                     allowed="UTF-8 text")  # pragma: no cover - the loop finds the bad value


def text_columns(schema: Any, wanted: Sequence[str] | None) -> list[str]:
    """The string columns of a Parquet schema among ``wanted``: read as dictionaries, so that each distinct text
    is decoded once (Parquet usually stores them as a dictionary already)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    return [field.name for field in schema if (wanted is None or field.name in wanted)
            and (pa.types.is_string(field.type) or pa.types.is_large_string(field.type))]


def wanted_columns(names: Sequence[str], columns: Sequence[str] | None) -> list[str] | None:
    """The names to read: those of ``names`` in ``columns`` (every one when ``columns`` is None)."""
    return None if columns is None else [name for name in names if name in set(columns)]
