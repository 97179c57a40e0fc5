"""Read any table file: the format from the suffix (or ``format=``), a folder or glob as a Parquet dataset, and
the checks every format shares (missing, empty, header-only).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.tsv"
>>> _ = path.write_text("item\\tlabel\\n007\\t2\\n")
>>> read_table_file(path, categorical=True)["item"].dtype
CategoricalDtype(categories=['007'], ordered=False, categories_dtype=str)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from stableval.data.files.categories import text_categories
from stableval.data.files.formats import ALLOWED_FORMATS, format_of
from stableval.data.files.jsonl import read_jsonl
from stableval.data.files.parquet import read_parquet
from stableval.data.files.parquet_dataset import is_dataset_path, read_parquet_dataset
from stableval.data.files.text import read_text
from stableval.errors import InputError

__all__ = ["read_table_file"]


def read_table_file(path: str | os.PathLike[str], *, format: str | None = None, categorical: bool = False,
                    columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a CSV/TSV/JSONL/Parquet file with every column as text (``"007"`` stays ``"007"``).

    The format comes from the suffix (``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``,
    ``.parquet``/``.pq``) unless ``format=`` names it. A ``.csv`` file whose header has more ``;`` than ``,``
    is read with ``;``. Missing, empty, header-only, unparsable files and unknown suffixes raise
    :class:`InputError`.

    A folder, or a glob pattern such as ``"votes/part-*.parquet"``, is read as one Parquet dataset: its
    ``.parquet``/``.pq`` files (names starting with ``.`` or ``_`` skipped) in sorted order, rows numbered across
    the files (:func:`dataset_part` names the file and row of a dataset row). ``columns`` reads only those columns
    of a Parquet file or dataset (names not in it are ignored); the whole header is still checked.

    ``categorical=True`` gives every column as a pandas ``Categorical`` of the same texts, value by value: Parquet
    and JSON Lines columns are coded in their own type (integers, dictionaries, strings) and each distinct value is
    turned into text once, which is what makes reading tens of millions of rows fast
    (:func:`categories_as_text` turns such a frame back into the plain one).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
    >>> _ = path.write_text("item;rater;label\\n007;r1;2\\n")
    >>> read_table_file(path).to_dict("records")
    [{'item': '007', 'rater': 'r1', 'label': '2'}]
    """
    path = Path(path)
    if is_dataset_path(path):
        frame = read_parquet_dataset(path, format, categorical, columns)
        if len(frame) == 0:
            raise InputError("dataset has no data rows", file=str(path), allowed="one row per judgment")
        return frame
    fmt = format_of(path, format)
    if not path.exists():
        raise InputError("file not found", file=str(path), allowed=f"an existing file: {ALLOWED_FORMATS}")
    if path.is_dir():
        raise InputError("is a directory, not a file", file=str(path), allowed=ALLOWED_FORMATS)
    if path.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=str(path),
                         allowed="a header line naming the columns, then one line per judgment")
    if fmt in ("csv", "tsv"):
        frame = read_text(path, fmt, categorical)
    elif fmt == "jsonl":
        frame = read_jsonl(path, categorical)
    else:
        frame = read_parquet(path, categorical, columns)
    if categorical and not all(isinstance(dtype, pd.CategoricalDtype) for dtype in frame.dtypes):
        frame = text_categories(frame)
    if len(frame) == 0:
        raise InputError("file has no data rows" + (" (only a header)" if len(frame.columns) else ""),
                         file=str(path), allowed="one row per judgment after the header")
    return frame
