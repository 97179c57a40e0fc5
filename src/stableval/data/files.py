"""Table files: read CSV, TSV, JSON Lines and Parquet with every column as text, write frames back, and name rows.

One suffix table (:data:`FORMATS`) serves reading and writing. Every problem is an
:class:`~stableval.errors.InputError` naming the file, the 1-based data row (the header is not counted; in CSV
and TSV files the line is ``row + 1``), the column, the offending value and what is allowed.

>>> import pathlib, tempfile
>>> import pandas as pd
>>> path = write_frame(pd.DataFrame({"item": ["007"], "label": ["good"]}), pathlib.Path(tempfile.mkdtemp()) / "t.tsv")
>>> output_format(path), read_table_file(path).to_dict("records")
('tsv', [{'item': '007', 'label': 'good'}])
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal, overload

import pandas as pd

from stableval.data.flags import CLI_FLAGS
from stableval.errors import InputError

__all__ = [
    "FORMATS",
    "iter_jsonl",
    "line_offset",
    "output_format",
    "read_table_file",
    "row_error",
    "rows_text",
    "write_frame",
]

#: File suffix → format name, for reading and for writing.
FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

_ALLOWED_FORMATS = "csv (.csv), tsv (.tsv, .tab), jsonl (.jsonl, .ndjson), parquet (.parquet, .pq)"
# frame.attrs key: the file line of data row r is r + offset (absent where lines mean nothing, e.g. Parquet)
_LINE_OFFSET = "stableval.line_offset"


# ====================================================================================== rows and lines
def line_offset(frame: pd.DataFrame) -> int | None:
    """The file line of data row ``r`` is ``r + line_offset(frame)``; ``None`` where lines mean nothing.

    >>> line_offset(pd.DataFrame()) is None
    True
    """
    offset = frame.attrs.get(_LINE_OFFSET)
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
              line_at: Literal["row", "problem"] = "row") -> InputError:
    """An InputError at 1-based data row ``row``; where ``offset`` is known the message also gives the file line.

    ``line_at="row"`` writes the line after the row (``'a.csv, row 5 (line 6), column ...'``); ``"problem"``
    after the problem (``'a.csv, row 5, column 'x': bad value (line 6): got ...'``), as the dataset loaders do.

    >>> str(row_error("empty id", source="a.csv", row=5, offset=1, column="item", value=""))
    "a.csv, row 5 (line 6), column 'item': empty id: got ''"
    >>> str(row_error("bad", source="a.csv", row=5, offset=1, column="x", value="?", line_at="problem"))
    "a.csv, row 5, column 'x': bad (line 6): got '?'"
    """
    if offset is not None and line_at == "problem":
        problem = f"{problem} (line {row + offset})"
    error = InputError(problem, file=source, row=row, column=column, value=value, allowed=allowed,
                       has_value=has_value)
    if offset is not None and line_at == "row":
        head = f"{source}, row {row}"
        message = str(error)
        if message.startswith(head):
            error.args = (f"{head} (line {row + offset})" + message[len(head):],)
    return error


# ====================================================================================== reading files
def _canonical(format: str) -> str | None:
    """``"csv"``, ``".tab"``, ``"PQ"`` ... → the format's name (``csv``, ``tsv``, ``parquet``); None if unknown."""
    name = format.lower().lstrip(".")
    name = FORMATS.get("." + name, name)
    return name if name in FORMATS.values() else None


def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        name = _canonical(format)
        if name is None:
            raise InputError("unknown format", file=str(path), value=format, allowed=_ALLOWED_FORMATS)
        return name
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError("cannot tell the file format from its suffix", file=str(path),
                         value=path.suffix or "",
                         allowed=f"{_ALLOWED_FORMATS}; or pass format= (CLI: {CLI_FLAGS['format']})")
    return FORMATS[suffix]


def _sniff_separator(path: Path) -> str:
    """The separator of a .csv file, guessed from its header line: ';' (European CSV), tab, or ','."""
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        header = ""
        for line in handle:
            if line.strip():
                header = line
                break
    counts = {sep: header.count(sep) for sep in (",", ";", "\t")}
    best = max(counts, key=lambda sep: counts[sep])
    return best if counts[best] > counts[","] else ","


def _read_text_table(path: Path, sep: str, fmt: str) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_filter=False,
                            encoding="utf-8-sig", skipinitialspace=False)
    except pd.errors.EmptyDataError as exc:
        raise InputError("file has no header and no rows", file=str(path),
                         allowed="a header line naming the columns, then one line per judgment") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path),
                         allowed=f"UTF-8 {fmt.upper()} text") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        detail = " ".join(str(exc).split())
        raise InputError(f"cannot parse as {fmt.upper()} (separator {sep!r}): {detail}", file=str(path),
                         allowed=f"{fmt.upper()} with a header line and the same number of fields on "
                                 "every line") from exc
    frame.attrs[_LINE_OFFSET] = 1
    return frame


def _read_jsonl_fast(data: bytes) -> pd.DataFrame | None:
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
    columns = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        kind = column.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)
                or pa.types.is_null(kind)):
            return None
        columns[name] = column.cast(pa.string()).fill_null("")
    frame = pa.table(columns).to_pandas() if columns else pd.DataFrame()
    frame = frame.astype(str) if len(frame.columns) else frame
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(frame) == lines:  # no blank lines: data row r is line r
        frame.attrs[_LINE_OFFSET] = 0
    return frame


def _read_jsonl(path: Path) -> pd.DataFrame:
    data = path.read_bytes()
    if not data.startswith(b"\xef\xbb\xbf"):
        fast = _read_jsonl_fast(data)
        if fast is not None:
            return fast
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path),
                         allowed="UTF-8 JSON Lines text") from exc
    decoder = json.JSONDecoder(parse_int=str, parse_float=str)
    records: list[dict[str, Any]] = []
    blank = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            blank = True
            continue
        try:
            record = decoder.decode(line)
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
    frame = _all_text(frame)
    if not blank:
        frame.attrs[_LINE_OFFSET] = 0
    return frame


def _all_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text; missing values become ''."""
    out = {}
    for name in frame.columns:
        column = frame[name]
        missing = column.isna().to_numpy()
        text = column.astype(object).to_numpy(copy=True)
        if missing.any():
            text[missing] = ""
        out[str(name)] = pd.Series(text, index=frame.index).astype(str)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=str(path),
                         allowed="an Apache Parquet file") from exc
    return _all_text(frame)


def read_table_file(path: str | os.PathLike[str], *, format: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV/JSONL/Parquet file with every column as text (``"007"`` stays ``"007"``).

    The format comes from the suffix (``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``,
    ``.parquet``/``.pq``) unless ``format=`` names it. A ``.csv`` file whose header has more ``;`` than ``,``
    is read with ``;``. Missing, empty, header-only, unparsable files and unknown suffixes raise
    :class:`InputError`.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
    >>> _ = path.write_text("item;rater;label\\n007;r1;2\\n")
    >>> read_table_file(path).to_dict("records")
    [{'item': '007', 'rater': 'r1', 'label': '2'}]
    """
    path = Path(path)
    fmt = _format_of(path, format)
    if not path.exists():
        raise InputError("file not found", file=str(path), allowed=f"an existing file: {_ALLOWED_FORMATS}")
    if path.is_dir():
        raise InputError("is a directory, not a file", file=str(path), allowed=_ALLOWED_FORMATS)
    if path.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=str(path),
                         allowed="a header line naming the columns, then one line per judgment")
    if fmt == "csv":
        frame = _read_text_table(path, _sniff_separator(path), fmt)
    elif fmt == "tsv":
        frame = _read_text_table(path, "\t", fmt)
    elif fmt == "jsonl":
        frame = _read_jsonl(path)
    else:
        frame = _read_parquet(path)
    if len(frame) == 0:
        raise InputError("file has no data rows" + (" (only a header)" if len(frame.columns) else ""),
                         file=str(path), allowed="one row per judgment after the header")
    return frame


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
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {line_no} is not valid JSON ({exc.msg})", file=source, row=line_no,
                             allowed=allowed) from exc
        yield line_no, value


# ====================================================================================== writing files
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
    name = _canonical(format)
    if name is None:
        raise ValueError(f"unknown output format {format!r}; allowed: {', '.join(dict.fromkeys(FORMATS.values()))}")
    return name


def _text(frame: pd.DataFrame, fmt: str) -> str:
    if fmt == "jsonl":
        return str(frame.to_json(orient="records", lines=True, force_ascii=False))
    return str(frame.to_csv(index=False, sep="\t" if fmt == "tsv" else ","))


@overload
def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str], *, format: str | None = None) -> Path: ...


@overload
def write_frame(frame: pd.DataFrame, target: IO[bytes], *, format: str) -> None: ...


@overload
def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes], *, format: str) -> Path | None: ...


def write_frame(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes], *,
                format: str | None = None) -> Path | None:
    """Write ``frame`` (no index) as CSV, TSV, JSON Lines (UTF-8) or Parquet.

    ``target`` is a path, whose suffix gives the format unless ``format`` names it (the path is returned), or a
    binary stream such as ``io.BytesIO``, which needs ``format``. Unknown formats raise ``ValueError``.

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
            frame.to_parquet(path, index=False)
        elif fmt == "jsonl":
            frame.to_json(path, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
        return path
    if format is None:
        raise ValueError("writing to a stream needs format= (csv, tsv, jsonl or parquet)")
    fmt = _format_name(format)
    if fmt == "parquet":
        frame.to_parquet(target, index=False)
    else:
        target.write(_text(frame, fmt).encode("utf-8"))
    return None
