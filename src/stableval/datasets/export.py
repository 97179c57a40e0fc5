"""Write a frame (an annotation table's judgments, gold labels) as CSV, TSV, JSONL or Parquet by the suffix.

>>> import pathlib, tempfile
>>> import pandas as pd
>>> path = write_frame(pd.DataFrame({"item": ["q1"], "label": ["good"]}), pathlib.Path(tempfile.mkdtemp()) / "t.jsonl")
>>> path.read_text()
'{"item":"q1","label":"good"}\\n'
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

__all__ = ["WRITE_FORMATS", "output_format", "write_frame"]

#: Output suffix → format.
WRITE_FORMATS: dict[str, str] = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
                                 ".parquet": "parquet", ".pq": "parquet"}


def output_format(path: str | os.PathLike[str]) -> str:
    """The format named by the suffix; an unknown suffix raises ``ValueError`` listing the allowed ones.

    >>> output_format("table.PARQUET")
    'parquet'
    """
    suffix = Path(path).suffix.lower()
    if suffix not in WRITE_FORMATS:
        raise ValueError(f"cannot tell the output format from the suffix {suffix or '(none)'!r} of {str(path)!r}; "
                         f"allowed: {', '.join(WRITE_FORMATS)}")
    return WRITE_FORMATS[suffix]


def write_frame(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` (no index) to ``path`` in the format of its suffix; return the path."""
    path = Path(path)
    fmt = output_format(path)
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(path, index=False)
    return path
