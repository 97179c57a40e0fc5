"""Multi-file Parquet datasets: a folder or a glob of Parquet files read as one table, rows numbered across the
files, every bad file named.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> for part in ("a", "b"):
...     pd.DataFrame({"item": [part], "label": [1]}).to_parquet(folder / f"{part}.parquet")
>>> frame = read_parquet_dataset(folder, None, False, None)
>>> frame["item"].tolist(), dataset_part(frame, 2)[1]
(['a', 'b'], 1)
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.files.formats import ALLOWED_FORMATS, FORMATS, SCALE_KEY, canonical_format
from stableval.data.files.parquet import parquet_damage, parquet_frame, text_columns, wanted_columns
from stableval.data.files.rows import refuse_duplicated
from stableval.errors import InputError

__all__ = ["dataset_files", "dataset_part", "is_dataset_path", "parquet_columns", "read_parquet_dataset",
           "refuse_mixed_scales"]


_GLOB = ("*", "?", "[")
_PARTS_KEY = "stableval.parts"  # frame.attrs key: [(file, rows), ...] of a dataset, in row order


def is_dataset_path(path: str | os.PathLike[str]) -> bool:
    """True for a folder, or a glob pattern that is not an existing file: what is read as a Parquet dataset.

    >>> is_dataset_path("votes/part-*.parquet"), is_dataset_path("votes.parquet")
    (True, False)
    """
    path = Path(path)
    return path.is_dir() or (not path.exists() and any(char in str(path) for char in _GLOB))


def dataset_files(path: Path) -> list[Path]:
    """The Parquet files of a folder or glob (:func:`is_dataset_path`), in the sorted order their rows are read in;
    a folder without any, or a pattern that matches none or a file of another format, raises :class:`InputError`.
    """
    if path.is_dir():
        found = [p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".parquet", ".pq")]
        found = [p for p in found if not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)]
        if not found:
            raise InputError("folder holds no Parquet files", file=str(path),
                             allowed="a folder of .parquet/.pq files (a Parquet dataset), or one ratings file: "
                                     + ALLOWED_FORMATS)
        return sorted(found)
    anchor = Path(path.anchor) if path.is_absolute() else Path(".")
    pattern = str(path.relative_to(anchor)) if path.is_absolute() else str(path)
    found = sorted(p for p in anchor.glob(pattern) if p.is_file())
    if not found:
        raise InputError("no file matches the pattern", file=str(path),
                         allowed="a glob pattern matching Parquet files, e.g. 'votes/part-*.parquet'")
    others = [p for p in found if p.suffix.lower() not in (".parquet", ".pq")]
    if others:
        raise InputError("a pattern is read as a Parquet dataset, but it matches a file that is not Parquet",
                         file=str(path), value=str(others[0]), allowed="only .parquet/.pq files")
    return found


def _scale_text(scale: bytes | None) -> str:
    """A file's scale metadata as the reader shows it: ``levels bad < good`` (or as written, or none)."""
    if scale is None:
        return "no scale"
    try:
        return "levels " + " < ".join(map(str, json.loads(scale)["levels"]))
    except (ValueError, KeyError, TypeError):
        return repr(scale.decode("utf-8", "replace"))


def refuse_mixed_scales(files: Sequence[str | os.PathLike[str]], schemas: Sequence[Any]) -> None:
    """Raise :class:`InputError` naming the first file of a dataset whose scale metadata (``stableval.scale``: its
    levels, worst first, and credits) differs from the first file's, and both scales; ``schemas`` are the files'
    Arrow schemas. Every reader of a dataset (in memory, by integer lookup, on Dask) checks it before any work.

    >>> import pyarrow as pa
    >>> refuse_mixed_scales(["a.parquet", "b.parquet"], [pa.schema([], metadata={SCALE_KEY: '{"levels": [0, 1]}'}),
    ...                                                  pa.schema([])])
    Traceback (most recent call last):
    ...
    stableval.errors.InputError: b.parquet, column 'stableval.scale': the files declare different scales: no scale \
here but levels 0 < 1 in a.parquet; allowed: the same scale (levels worst first, credits) in every file's metadata; \
re-export the files with one scale
    """
    scales = [(schema.metadata or {}).get(SCALE_KEY.encode()) for schema in schemas]
    for part, scale in zip(files[1:], scales[1:], strict=True):
        if scale != scales[0]:
            raise InputError(f"the files declare different scales: {_scale_text(scale)} here but "
                             f"{_scale_text(scales[0])} in {files[0]}", file=str(part), column=SCALE_KEY,
                             allowed="the same scale (levels worst first, credits) in every file's metadata; "
                                     "re-export the files with one scale")


def read_parquet_dataset(path: Path, format: str | None, categorical: bool, columns: Sequence[str] | None
                          ) -> pd.DataFrame:
    """A folder or glob of Parquet files as one frame; each bad file is named."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.dataset as pa_dataset  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    if format is not None and canonical_format(format) != "parquet":
        raise InputError("a folder or glob pattern is read as a Parquet dataset", file=str(path), value=format,
                         allowed="format parquet (or none) for a dataset; other formats are read one file at a time")
    files = dataset_files(path)
    schemas, rows = [], []
    for part in files:
        try:
            metadata = pq.read_metadata(part)
            schema = metadata.schema.to_arrow_schema()
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise parquet_damage(part, exc) from exc
        refuse_duplicated(part, schema.names)
        schemas.append(schema)
        rows.append(int(metadata.num_rows))
    for part, schema in zip(files[1:], schemas[1:], strict=True):
        for field in schema:
            first = schemas[0].field(field.name) if field.name in schemas[0].names else None
            if first is not None and first.type != field.type:
                raise InputError(f"column {field.name!r} is {field.type} here but {first.type} in {files[0]}",
                                 file=str(part), column=field.name,
                                 allowed="the same type for a column in every file of a dataset; re-export the "
                                         "files with one schema")
    refuse_mixed_scales(files, schemas)
    unified = pa.unify_schemas(schemas)
    wanted = wanted_columns(unified.names, columns)
    text = text_columns(unified, wanted) if categorical else []  # read as dictionaries, as for one file
    schema = pa.schema([field.with_type(pa.dictionary(pa.int32(), field.type)) if field.name in text else field
                        for field in unified], metadata=unified.metadata)
    file_format = pa_dataset.ParquetFileFormat(read_options=pa_dataset.ParquetReadOptions(dictionary_columns=text))
    try:
        dataset = pa_dataset.dataset([str(p) for p in files], schema=schema, format=file_format)
        table = dataset.to_table(columns=wanted)
    except Exception as exc:  # name the file that cannot be read
        for part in files:
            try:
                pq.read_table(part)
            except Exception as inner:
                raise parquet_damage(part, inner) from inner
        raise parquet_damage(path, exc) from exc  # pragma: no cover - every file reads alone
    frame = parquet_frame(path, table, categorical)
    frame.attrs[_PARTS_KEY] = [(str(part), count) for part, count in zip(files, rows, strict=True)]
    return frame


def parquet_columns(path: str | os.PathLike[str], *, format: str | None = None) -> list[str] | None:
    """The column names of a Parquet file or dataset, from the footers only; None for other formats and for
    anything that cannot be read (reading it then says why).

    >>> import tempfile, pathlib
    >>> from stableval.data.files import write_frame
    >>> path = write_frame(pd.DataFrame({"item": ["q1"], "label": ["2"]}), pathlib.Path(tempfile.mkdtemp()) / "t.pq")
    >>> parquet_columns(path), parquet_columns(path.with_suffix(".csv"))
    (['item', 'label'], None)
    """
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    path = Path(path)
    try:
        if is_dataset_path(path):
            files = dataset_files(path)
        elif (canonical_format(format) if format is not None else FORMATS.get(path.suffix.lower())) == "parquet":
            files = [path]
        else:
            return None
        names: dict[str, None] = {}
        for part in files:
            names.update(dict.fromkeys(str(name) for name in pq.read_schema(part).names))
    except Exception:  # a bad path or file: reading it names the problem
        return None
    return list(names)


def dataset_part(frame: pd.DataFrame, row: int) -> tuple[str, int] | None:
    """(file, 1-based row in that file) of the 1-based ``row`` of a frame read from a Parquet dataset; None for a
    frame read from one file.

    >>> frame = pd.DataFrame({"item": ["q1", "q2", "q3"]})
    >>> frame.attrs[_PARTS_KEY] = [("a.parquet", 2), ("b.parquet", 1)]
    >>> dataset_part(frame, 3), dataset_part(pd.DataFrame(), 3)
    (('b.parquet', 1), None)
    """
    parts = frame.attrs.get(_PARTS_KEY)
    if not parts:
        return None
    ends = np.cumsum([count for _, count in parts])
    index = int(np.searchsorted(ends, row, side="left"))
    if index >= len(parts):
        return None
    return str(parts[index][0]), row - (int(ends[index - 1]) if index else 0)
