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
    "categories_as_text",
    "dataset_files",
    "dataset_part",
    "file_scale",
    "is_dataset_path",
    "iter_jsonl",
    "line_offset",
    "output_format",
    "parquet_columns",
    "parquet_damage",
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


def _read_text_arrow(path: Path, sep: str) -> pd.DataFrame | None:
    """A CSV/TSV file through pyarrow's multi-threaded reader as categories, where it reads exactly what the pandas
    reader does: every field text, no missing values. None (the caller uses pandas, which also words every error)
    for a file starting with a byte-order mark or a blank line, a header with fewer than two, empty or repeated
    names, and any file pyarrow does not parse (ragged rows, bad UTF-8, ...)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.csv as pa_csv  # type: ignore[import-untyped, unused-ignore]

    with path.open("rb") as handle:
        start = handle.read(3)
    if start.startswith((b"\xef\xbb\xbf", b"\n", b"\r")):
        return None
    try:
        header = pd.read_csv(path, sep=sep, dtype=str, header=None, nrows=1, keep_default_na=False,
                             na_filter=False, encoding="utf-8")
    except Exception:  # the pandas reader words it
        return None
    names = [str(name) for name in header.iloc[0].tolist()] if len(header) else []
    if len(names) < 2 or "" in names or len(set(names)) != len(names):
        return None
    try:
        table = pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pa_csv.ParseOptions(delimiter=sep, quote_char='"', double_quote=True, escape_char=False,
                                              newlines_in_values=True, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types={name: pa.string() for name in names},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                  null_values=[], check_utf8=True))
    except (pa.ArrowException, ValueError):
        return None

    def as_text(part: Any) -> pd.DataFrame:
        text: pd.DataFrame = part.to_pandas()
        return text.astype(str) if len(text.columns) else text

    frame = _categories_of(table, as_text)
    if frame is not None:
        frame.attrs[_LINE_OFFSET] = 1
    return frame


def _more_fields_than_header(path: Path, sep: str, fmt: str, n_names: int) -> InputError:
    """The error for a file whose first data line has more fields than its header (pandas would silently use
    the first column as the row index and shift every value one column to the left)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        lines = [line.rstrip("\r\n") for line, _ in zip(handle, range(2), strict=False)]
    fields = lines[1].split(sep) if len(lines) > 1 else []
    trailing = " (a separator at the end of the line? remove it)" if fields and fields[-1] == "" else ""
    return InputError(f"line 2 has {len(fields)} fields but the header names {n_names}{trailing}", file=str(path),
                      value=lines[1] if len(lines) > 1 and len(lines[1]) <= 80 else None,
                      allowed=f"{fmt.upper()} with a header line and the same number of fields on every line")


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
    if not isinstance(frame.index, pd.RangeIndex):  # pandas took the first column as an index: fields shifted
        raise _more_fields_than_header(path, sep, fmt, len(frame.columns))
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

    frame = _categories_of(table, as_text) if categorical and table.num_columns else None
    if frame is None:
        frame = as_text(table)
        frame = _text_categories(frame) if categorical else frame
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


def _read_jsonl(path: Path, categorical: bool = False) -> pd.DataFrame:
    data = path.read_bytes()
    problem = _utf8_problem(data)
    if problem is not None:
        raise _not_utf8(path, problem, "UTF-8 JSON Lines text")
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
            if _LINE_OFFSET in fast.attrs:
                fast.attrs[_LINE_OFFSET] = first_line - 1
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
    frame = _all_text(frame)
    if not blank:
        frame.attrs[_LINE_OFFSET] = first_line - 1
    return frame


def _all_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text; missing values become ''.

    Integer and boolean columns (ids, labels) are factorised in their own type first and only their distinct
    values turned into text: the same strings as converting every value, at the cost of one hash pass. The rows
    keep their order whatever the frame's index (a Parquet file may carry a pandas index).
    """
    out = {}
    frame = frame.reset_index(drop=True)
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
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    values = np.asarray(uniques)
    if values.dtype.kind in "iu":  # decimal digits, as str() writes them, converted in C
        import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

        text = [*pa.array(values).cast(pa.string()).to_pylist(), ""]
    else:
        text = [str(value) for value in uniques.tolist()] + [""]
    return _codes_text(np.where(codes < 0, len(text) - 1, codes), text, column.index)


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


# ====================================================================================== columns as categories
# A column read "as categories" is a pandas Categorical whose categories are exactly the distinct texts present:
# value by value it equals the text the plain reader gives, but each distinct value is turned into text once and
# the rows hold integer codes (the fast path of issue 14: no text round-trip per row).
_DENSE_SPAN = 1 << 22  # integer ids spanning at most max(this, 2 rows) values are coded by direct lookup


def _integer_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(codes 0..m-1, the distinct values in code order) of an integer array by direct lookup; None where the
    values span too wide a range for a lookup table.

    >>> codes, distinct = _integer_codes(np.array([100, -100, 100, 9], dtype=np.int8))
    >>> codes.tolist(), distinct.tolist()
    ([2, 0, 2, 1], [-100, 9, 100])
    """
    if values.size == 0:
        return np.zeros(0, np.int32), values[:0]
    low, high = values.min(), values.max()
    span = int(high) - int(low) + 1
    if span > max(_DENSE_SPAN, 2 * values.size):
        return None
    unsigned = np.dtype(f"u{values.dtype.itemsize}")
    low_bits = np.asarray(low, dtype=values.dtype).view(unsigned)  # wrapping arithmetic: exact within the span
    offsets = values if int(low) == 0 and values.dtype.itemsize == 8 else \
        (values.view(unsigned) - low_bits).astype(np.intp)
    present = np.zeros(span, dtype=bool)
    present[offsets] = True
    code_of = np.cumsum(present, dtype=np.int32) - 1
    distinct = (np.flatnonzero(present).astype(unsigned) + low_bits).view(values.dtype)
    return code_of[offsets], distinct


def integer_categories(column: pd.Series) -> pd.Categorical | None:
    """An integer column (no missing values) as categories of the texts ``str(value)``, coded by direct lookup
    (no text made per row); None for any other column or where the values span too wide a range.

    >>> integer_categories(pd.Series([30, 7, 30])).tolist(), integer_categories(pd.Series(["7"]))
    (['30', '7', '30'], None)
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or not pd.api.types.is_integer_dtype(dtype) or column.hasnans:
        return None
    found = _integer_codes(column.to_numpy(dtype=np.dtype(str(dtype).lower())))
    if found is None:
        return None
    codes, distinct = found
    return _categorical(codes.astype(np.int32, copy=False), np.asarray([str(v) for v in distinct.tolist()],
                                                                       dtype=object))


def _column_codes(column: Any) -> tuple[np.ndarray, Any]:
    """(codes, the distinct values as an Arrow array of the column's type in code order) of an Arrow column coded
    in its own type; a null is a value of its own."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]

    if pa.types.is_integer(column.type) and column.null_count == 0:
        dense = _integer_codes(column.to_numpy())
        if dense is not None:
            return dense[0], pa.array(dense[1], type=column.type)
    stored = pa.types.is_dictionary(column.type)
    encoded = column if stored else pc.dictionary_encode(column)
    encoded = pa.table({"c": encoded}).unify_dictionaries().column(0)
    dictionary = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], encoded.type.value_type)
    size, nulls = len(dictionary), encoded.null_count > 0
    indices = pa.chunked_array([chunk.indices for chunk in encoded.chunks], type=encoded.type.index_type)
    codes = (indices.fill_null(size) if nulls else indices).to_numpy().astype(np.int32, copy=False)
    if not stored:
        return codes, pa.concat_arrays([dictionary, pa.nulls(1, dictionary.type)]) if nulls else dictionary
    used = np.bincount(codes, minlength=size + 1)[:size] > 0  # a stored dictionary may hold unused values
    if not used.all():
        code_of = np.append(np.cumsum(used, dtype=np.int32) - 1, np.int32(used.sum()))
        codes, dictionary = code_of[codes], dictionary.filter(pa.array(used))
    index = list(range(len(dictionary))) + ([None] if nulls else [])
    return codes, pa.DictionaryArray.from_arrays(pa.array(index, type=encoded.type.index_type), dictionary)


def _categories_of(table: Any, as_text: Any) -> pd.DataFrame | None:
    """Every column of an Arrow table as categories whose text ``as_text`` (Arrow table → text frame) gives, applied
    to the column's distinct values; None when the text reader's columns are not the table's (the caller falls
    back to converting every row)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    names = [str(name) for name in as_text(table.slice(0, 0)).columns]
    if len(set(table.column_names)) != table.num_columns or not set(names) <= set(table.column_names):
        return None
    out = {}
    for name in names:
        try:
            codes, values = _column_codes(table.column(name))
        except (pa.ArrowException, TypeError, ValueError):  # e.g. a list or struct column: its text, row by row
            codes, uniques = pd.factorize(as_text(table.select([name]))[name])
            out[name] = _categorical(codes.astype(np.int32), np.asarray(uniques, dtype=object))
            continue
        field = table.schema.field(name)
        schema = pa.schema([field.with_type(values.type)], metadata=table.schema.metadata)
        text = as_text(pa.Table.from_arrays([values], schema=schema))[name]
        out[name] = _categorical(codes, np.asarray(text.astype(object), dtype=object))
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows), copy=False)


def _categorical(codes: np.ndarray, text: np.ndarray) -> pd.Categorical:
    """Rows ``codes`` of the texts ``text``, texts that are equal merged into one category."""
    merged, categories = pd.factorize(text)
    if len(categories) < len(text):
        codes = merged.astype(np.int32)[codes]
    return pd.Categorical.from_codes(codes, categories=pd.Index(np.asarray(categories, dtype=object), dtype=str),
                                     validate=False)


def _text_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """A text frame as categories (one hash pass per column)."""
    out = {}
    for name in frame.columns:
        codes, uniques = pd.factorize(frame[name])
        out[name] = pd.Categorical.from_codes(codes.astype(np.int32), categories=pd.Index(uniques, dtype=str),
                                              validate=False)
    result = pd.DataFrame(out, index=pd.RangeIndex(len(frame)))
    result.attrs.update(frame.attrs)
    return result


def categories_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame read with ``categorical=True`` as :func:`read_table_file` gives it by default (every column text).

    >>> frame = pd.DataFrame({"item": pd.Categorical(["q2", "q1", "q2"])})
    >>> categories_as_text(frame)["item"].tolist()
    ['q2', 'q1', 'q2']
    """
    out = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype) and not (column.cat.codes.to_numpy() < 0).any():
            out[name] = _codes_text(column.cat.codes.to_numpy(), [str(v) for v in column.cat.categories], column.index)
        else:
            out[name] = column.astype(str)
    result = pd.DataFrame(out, index=frame.index)
    result.attrs.update(frame.attrs)
    return result


def _codes_text(codes: np.ndarray, text: list[str], index: pd.Index) -> pd.Series:
    """Text Series (the dtype ``astype(str)`` gives) of rows ``codes`` into ``text``, cast in C through Arrow."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    dtype = pd.Series([""]).astype(str).dtype
    if getattr(dtype, "storage", None) != "pyarrow":  # pragma: no cover - pandas without Arrow strings
        return pd.Series(np.asarray(text, dtype=object)[codes], index=index).astype(str)
    values = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(text, type=pa.large_string()))
    return pd.Series(pd.array(values.cast(pa.large_string()), dtype=dtype), index=index)


def _read_parquet(path: Path, categorical: bool = False, columns: Sequence[str] | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    try:
        schema = pq.read_schema(path)
        _refuse_duplicated(path, schema.names)
        wanted = _wanted(schema.names, columns)
        table = pq.read_table(path, columns=wanted,
                              read_dictionary=_text_columns(schema, wanted) if categorical else None)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise parquet_damage(path, exc) from exc
    return _parquet_frame(path, table, categorical)


def _text_columns(schema: Any, wanted: Sequence[str] | None) -> list[str]:
    """The string columns of a Parquet schema among ``wanted``: read as dictionaries, so that each distinct text
    is decoded once (Parquet usually stores them as a dictionary already)."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    return [field.name for field in schema if (wanted is None or field.name in wanted)
            and (pa.types.is_string(field.type) or pa.types.is_large_string(field.type))]


def _wanted(names: Sequence[str], columns: Sequence[str] | None) -> list[str] | None:
    """The names to read: those of ``names`` in ``columns`` (every one when ``columns`` is None)."""
    return None if columns is None else [name for name in names if name in set(columns)]


# ====================================================================================== Parquet datasets
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
                                     + _ALLOWED_FORMATS)
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


def _read_parquet_dataset(path: Path, format: str | None, categorical: bool, columns: Sequence[str] | None
                          ) -> pd.DataFrame:
    """A folder or glob of Parquet files as one frame; each bad file is named."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.dataset as pa_dataset  # type: ignore[import-untyped, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    if format is not None and _canonical(format) != "parquet":
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
        _refuse_duplicated(part, schema.names)
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
    unified = pa.unify_schemas(schemas)
    wanted = _wanted(unified.names, columns)
    text = _text_columns(unified, wanted) if categorical else []  # read as dictionaries, as for one file
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
    frame = _parquet_frame(path, table, categorical)
    frame.attrs[_PARTS_KEY] = [(str(part), count) for part, count in zip(files, rows, strict=True)]
    return frame


def parquet_columns(path: str | os.PathLike[str], *, format: str | None = None) -> list[str] | None:
    """The column names of a Parquet file or dataset, from the footers only; None for other formats and for
    anything that cannot be read (reading it then says why).

    >>> import tempfile, pathlib
    >>> path = write_frame(pd.DataFrame({"item": ["q1"], "label": ["2"]}), pathlib.Path(tempfile.mkdtemp()) / "t.pq")
    >>> parquet_columns(path), parquet_columns(path.with_suffix(".csv"))
    (['item', 'label'], None)
    """
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

    path = Path(path)
    try:
        if is_dataset_path(path):
            files = dataset_files(path)
        elif (_canonical(format) if format is not None else FORMATS.get(path.suffix.lower())) == "parquet":
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


def _parquet_frame(path: Path, table: Any, categorical: bool) -> pd.DataFrame:
    """The frame of an Arrow table read from Parquet: text (or categories of text), with its declared scale."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]

    for index, (name, column) in enumerate(zip(table.column_names, table.columns, strict=True)):
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            table = table.set_column(index, name, _binary_as_text(path, name, column))

    def as_text(part: Any) -> pd.DataFrame:
        try:
            return _all_text(part.to_pandas())
        except Exception as exc:  # e.g. an extension type pandas cannot hold
            raise InputError(f"cannot read as Parquet: {' '.join(str(exc).split())}", file=str(path),
                             allowed="a Parquet file of text or number columns") from exc

    frame = _categories_of(table, as_text) if categorical else None
    if frame is None:
        frame = as_text(table)
        frame = _text_categories(frame) if categorical else frame
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
        frame = _read_parquet_dataset(path, format, categorical, columns)
        if len(frame) == 0:
            raise InputError("dataset has no data rows", file=str(path), allowed="one row per judgment")
        return frame
    fmt = _format_of(path, format)
    if not path.exists():
        raise InputError("file not found", file=str(path), allowed=f"an existing file: {_ALLOWED_FORMATS}")
    if path.is_dir():
        raise InputError("is a directory, not a file", file=str(path), allowed=_ALLOWED_FORMATS)
    if path.stat().st_size == 0:
        raise InputError("file is empty (0 bytes)", file=str(path),
                         allowed="a header line naming the columns, then one line per judgment")
    if fmt in ("csv", "tsv"):
        sep = _sniff_separator(path) if fmt == "csv" else "\t"
        fast = _read_text_arrow(path, sep) if categorical else None
        frame = fast if fast is not None else _read_text_table(path, sep, fmt)
    elif fmt == "jsonl":
        frame = _read_jsonl(path, categorical)
    else:
        frame = _read_parquet(path, categorical, columns)
    if categorical and not all(isinstance(dtype, pd.CategoricalDtype) for dtype in frame.dtypes):
        frame = _text_categories(frame)
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
