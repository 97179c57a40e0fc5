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

__all__ = ["output_format", "unwritable", "write_frame"]


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


def unwritable(path: str | os.PathLike[str], *, folder: bool = False) -> str | None:
    """Why no file (with ``folder``: no folder) can be made at ``path``, in words; ``None`` when one can (the
    writers create the missing folders on the way). Checked before any work, so a typo never costs a run.

    >>> unwritable("results/scores.json") is None, unwritable("x" * 300 + ".json")
    (True, 'a name in the path is 305 bytes long; at most 255 here')
    """
    target = Path(path)
    existing = target.parent
    while not _exists(existing) and existing != existing.parent:
        existing = existing.parent
    longest = max((len(os.fsencode(part)) for part in target.parts), default=0)
    most = _limit(existing, "PC_NAME_MAX", 255)
    if longest > most:
        return f"a name in the path is {longest} bytes long; at most {most} here"
    length, most = len(os.fsencode(os.path.abspath(target))), _limit(existing, "PC_PATH_MAX", 4096)
    if length > most:
        return f"the path is {length} bytes long; at most {most} here"
    if folder and _exists(target) and not target.is_dir():
        return f"{str(target)!r} is a file, not a folder"
    if not folder and target.is_dir():
        return f"{str(target)!r} is a folder, not a file"
    if _exists(existing) and not existing.is_dir():
        return f"{str(existing)!r} is a file, not a folder"
    if _exists(existing) and not os.access(existing, os.W_OK | os.X_OK):
        return f"no permission to write in {str(existing)!r}"
    return None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # e.g. a name too long to look up
        return False


def _limit(folder: Path, name: str, default: int) -> int:
    """The file system's limit ``name`` (``PC_NAME_MAX``, ``PC_PATH_MAX``) at ``folder``, or ``default``."""
    try:
        return int(os.pathconf(folder, name))
    except (AttributeError, OSError, ValueError):  # no pathconf (Windows) or no such limit
        return default


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
