"""Write a frame as CSV, TSV, JSON Lines or Parquet, to a path or a binary stream, with its label scale where the
format can carry one.

>>> output_format("table.PARQUET")
'parquet'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any, overload

import pandas as pd

from stableval.data.files.formats import FORMATS, SCALE_KEY, canonical_format

__all__ = ["output_format", "write_frame"]


def output_format(path: str | os.PathLike[str]) -> str:
    """The format named by the suffix (:data:`FORMATS`); an unknown suffix raises ``ValueError`` listing them.

    >>> output_format("table.PARQUET")
    'parquet'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot tell the output format from the suffix {suffix or '(none)'!r} of {str(path)!r}; "
                         f"allowed: {', '.join(FORMATS)}")
    return FORMATS[suffix]


def _format_name(format: str) -> str:
    name = canonical_format(format)
    if name is None:
        raise ValueError(f"unknown output format {format!r}; allowed: {', '.join(dict.fromkeys(FORMATS.values()))}")
    return name


def _text(frame: pd.DataFrame, fmt: str, scale: dict[str, Any] | None = None) -> str:
    if fmt == "jsonl":
        head = "" if scale is None else json.dumps({SCALE_KEY: scale}, ensure_ascii=False) + "\n"
        return head + str(frame.to_json(orient="records", lines=True, force_ascii=False))
    return str(frame.to_csv(index=False, sep="\t" if fmt == "tsv" else ","))


def _parquet(frame: pd.DataFrame, target: Any, scale: dict[str, Any] | None) -> None:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if scale is not None:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               SCALE_KEY.encode(): json.dumps(scale).encode()})
    pq.write_table(table, target)


@overload
def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str], *, format: str | None = None,
                scale: dict[str, Any] | None = None) -> Path: ...


@overload
def write_frame(frame: pd.DataFrame, target: IO[bytes], *, format: str, scale: dict[str, Any] | None = None
                ) -> None: ...


@overload
def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes], *, format: str,
                scale: dict[str, Any] | None = None) -> Path | None: ...


def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes], *,
                format: str | None = None, scale: dict[str, Any] | None = None) -> Path | None:
    """Write ``frame`` (no index) as CSV, TSV, JSON Lines (UTF-8) or Parquet.

    ``target`` is a path, whose suffix gives the format unless ``format`` names it (the path is returned), or a
    binary stream such as ``io.BytesIO``, which needs ``format``. Unknown formats raise ``ValueError``.
    ``scale`` (``{"column": "label", "levels": [...], "credit": [...]}``) is kept in a Parquet file's metadata and
    as the first line of a JSON Lines file (``{"stableval.scale": {...}}``), so reading it back needs no
    ``levels``; CSV and TSV cannot carry it.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> write_frame(pd.DataFrame({"item": ["q1"], "label": ["é"]}), buffer, format="jsonl")
    >>> buffer.getvalue().decode()
    '{"item":"q1","label":"é"}\\n'
    """
    if isinstance(target, str | os.PathLike):
        path = Path(target)
        fmt = _format_name(format) if format is not None else output_format(path)
        if fmt == "parquet":
            _parquet(frame, path, scale)
        elif fmt == "jsonl":
            path.write_bytes(_text(frame, fmt, scale).encode("utf-8"))
        else:
            frame.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
        return path
    if format is None:
        raise ValueError("writing to a stream needs format= (csv, tsv, jsonl or parquet)")
    fmt = _format_name(format)
    if fmt == "parquet":
        _parquet(frame, target, scale)
    else:
        target.write(_text(frame, fmt, scale).encode("utf-8"))
    return None
