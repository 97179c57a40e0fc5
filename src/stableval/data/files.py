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

import numpy as np
import pandas as pd

from stableval.data.flags import CLI_FLAGS
from stableval.errors import InputError

__all__ = [
    "FORMATS",
    "SCALE_KEY",
    "file_scale",
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
#: Parquet schema metadata key (and frame.attrs key) of the label scale a file carries: JSON
#: ``{"column": "label", "levels": [...], "credit": [...]}``, written by ``stableval convert``.
SCALE_KEY = "stableval.scale"


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


def _utf8_problem(data: bytes) -> tuple[int, int, str] | None:
    """(line, byte offset, reason) of the first byte that is not UTF-8 in ``data``; None if it all decodes.

    >>> _utf8_problem(b"ok\\ncaf\\xe9\\n"), _utf8_problem("café".encode())
    ((2, 6, 'invalid continuation byte'), None)
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1, exc.start, exc.reason
    return None


def _not_utf8(path: Path, problem: tuple[int, int, str], allowed: str) -> InputError:
    line, start, reason = problem
    return InputError(f"line {line} is not UTF-8 text ({reason} at byte {start}); re-save the file as UTF-8",
                      file=str(path), allowed=allowed)


def _duplicated(names: Sequence[Any]) -> list[str]:
    """Column names that occur more than once, in order of first occurrence.

    >>> _duplicated(["item", "label", "item", "label", "x"])
    ['item', 'label']
    """
    seen: set[str] = set()
    twice: dict[str, None] = {}
    for name in map(str, names):
        if name in seen:
            twice[name] = None
        seen.add(name)
    return list(twice)


def _refuse_duplicated(path: Path, names: Sequence[Any]) -> None:
    twice = _duplicated(names)
    if twice:
        raise InputError(f"column {twice[0]!r} appears more than once in the header"
                         + (f" (also: {', '.join(map(repr, twice[1:]))})" if len(twice) > 1 else ""),
                         file=str(path), column=twice[0], allowed="each column name once; rename or drop the copies")


# separators people use that stableval does not read: a header with one of them and no comma, semicolon or tab
_OTHER_SEPARATORS = ("|", ":", "^", "~")


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
        header = pd.read_csv(path, sep=sep, dtype=str, header=None, nrows=1, keep_default_na=False,
                             na_filter=False, encoding="utf-8-sig") if len(frame.columns) > 1 else None
    except pd.errors.EmptyDataError as exc:
        raise InputError("file has no header and no rows", file=str(path),
                         allowed="a header line naming the columns, then one line per judgment") from exc
    except UnicodeDecodeError as exc:
        problem = _utf8_problem(path.read_bytes())
        if problem is None:  # pragma: no cover - pandas and Python agree on UTF-8
            problem = (1, exc.start, exc.reason)
        raise _not_utf8(path, problem, f"UTF-8 {fmt.upper()} text") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        detail = " ".join(str(exc).split())
        raise InputError(f"cannot parse as {fmt.upper()} (separator {sep!r}): {detail}", file=str(path),
                         allowed=f"{fmt.upper()} with a header line and the same number of fields on "
                                 "every line") from exc
    if header is not None:
        _refuse_duplicated(path, header.iloc[0].tolist())
    elif len(frame.columns) == 1:
        name = str(frame.columns[0])
        other = [sep for sep in _OTHER_SEPARATORS if sep in name]
        if other:
            raise InputError(f"unrecognised separator {other[0]!r}: the header is one column", file=str(path),
                             value=name if len(name) <= 80 else name[:77] + "...",
                             allowed="comma- or semicolon-separated .csv, or tab-separated .tsv")
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
        text = name.encode("utf-8")
        keys = sum(data.count(b'"' + text + b'"' + gap + b":") for gap in (b"", b" "))
        nulls = sum(data.count(b'"' + text + b'":' + gap + b"null") for gap in (b"", b" "))
        if keys > len(column) - column.null_count + nulls:  # a key twice in one object: the slow path names it
            return None
    frame = pa.table(columns).to_pandas() if columns else pd.DataFrame()
    frame = frame.astype(str) if len(frame.columns) else frame
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(frame) == lines:  # no blank lines: data row r is line r
        frame.attrs[_LINE_OFFSET] = 0
    return frame


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    twice = _duplicated([key for key, _ in pairs])
    if twice:
        raise _DuplicateKey(twice[0])
    return dict(pairs)


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (raised by the line reader's object hook)."""


def _read_jsonl(path: Path) -> pd.DataFrame:
    data = path.read_bytes()
    problem = _utf8_problem(data)
    if problem is not None:
        raise _not_utf8(path, problem, "UTF-8 JSON Lines text")
    if not data.startswith(b"\xef\xbb\xbf"):
        fast = _read_jsonl_fast(data)
        if fast is not None:
            return fast
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path),
                         allowed="UTF-8 JSON Lines text") from exc
    decoder = json.JSONDecoder(parse_int=str, parse_float=str, object_pairs_hook=_no_duplicate_keys)
    records: list[dict[str, Any]] = []
    blank = False
    for number, line in enumerate(text.splitlines(), start=1):
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
    frame = _all_text(frame)
    if not blank:
        frame.attrs[_LINE_OFFSET] = 0
    return frame


def _all_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text; missing values become ''.

    Integer and boolean columns (ids, labels) are factorised in their own type first and only their distinct
    values turned into text: the same strings as converting every value, at the cost of one hash pass.
    """
    out = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "iub":
            out[str(name)] = _integer_text(column)
            continue
        missing = column.isna().to_numpy()
        text = column.astype(object).to_numpy(copy=True)
        if missing.any():
            text[missing] = ""
        out[str(name)] = pd.Series(text, index=frame.index).astype(str)
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _integer_text(column: pd.Series) -> pd.Series:
    """An integer or boolean column as text ('' where missing), converting only its distinct values: the codes
    index an Arrow dictionary of their text, cast in C to the string type ``astype(str)`` gives."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    text = [str(value) for value in uniques.tolist()] + [""]
    index = pa.array(np.where(codes < 0, len(text) - 1, codes).astype(np.int32))
    values = pa.DictionaryArray.from_arrays(index, pa.array(text, type=pa.large_string())).cast(pa.large_string())
    dtype = pd.Series([""]).astype(str).dtype
    if getattr(dtype, "storage", None) != "pyarrow":  # pragma: no cover - pandas without Arrow strings
        return pd.Series(np.asarray(text, dtype=object)[codes], index=column.index).astype(str)
    return pd.Series(pd.array(values, dtype=dtype), index=column.index)


def _read_parquet(path: Path) -> pd.DataFrame:
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    try:
        _refuse_duplicated(path, pq.read_schema(path).names)
        table = pq.read_table(path)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=str(path),
                         allowed="an Apache Parquet file") from exc
    for index, (name, column) in enumerate(zip(table.column_names, table.columns, strict=True)):
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            table = table.set_column(index, name, _binary_as_text(path, name, column))
    try:
        frame = table.to_pandas()
    except Exception as exc:  # e.g. an extension type pandas cannot hold
        raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=str(path),
                         allowed="a Parquet file of text or number columns") from exc
    frame = _all_text(frame)
    scale = (table.schema.metadata or {}).get(SCALE_KEY.encode())
    if scale is not None:
        try:
            frame.attrs[SCALE_KEY] = json.loads(scale)
        except ValueError:  # metadata someone else wrote: not ours to judge
            pass
    return frame


def file_scale(frame: pd.DataFrame, column: str) -> tuple[list[str], list[float] | None] | None:
    """The levels (worst first) and credit that the file ``frame`` was read from declares for ``column``
    (Parquet written by ``stableval convert``); ``None`` when it declares none.

    >>> frame = pd.DataFrame({"label": ["good"]})
    >>> frame.attrs[SCALE_KEY] = {"column": "label", "levels": ["bad", "good"], "credit": [0, 1]}
    >>> file_scale(frame, "label"), file_scale(frame, "grade")
    ((['bad', 'good'], [0.0, 1.0]), None)
    """
    scale = frame.attrs.get(SCALE_KEY)
    if not isinstance(scale, dict) or scale.get("column") != column or not isinstance(scale.get("levels"), list):
        return None
    credit = scale.get("credit")
    return [str(v) for v in scale["levels"]], [float(v) for v in credit] if isinstance(credit, list) else None


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
    ``scale`` (``{"column": "label", "levels": [...], "credit": [...]}``) is kept in a Parquet file's metadata, so
    reading it back needs no ``levels``; text formats cannot carry it.

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
            frame.to_json(path, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
        return path
    if format is None:
        raise ValueError("writing to a stream needs format= (csv, tsv, jsonl or parquet)")
    fmt = _format_name(format)
    if fmt == "parquet":
        _parquet(frame, target, scale)
    else:
        target.write(_text(frame, fmt).encode("utf-8"))
    return None
