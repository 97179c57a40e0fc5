"""CSV and TSV files: Arrow's multi-threaded reader where it reads exactly what pandas does, pandas otherwise
(it also words every error).

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "votes.csv"
>>> _ = path.write_text("item;label\\n007;2\\n")
>>> read_text(path, "csv").to_dict("records")
[{'item': '007', 'label': '2'}]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from stableval.data.files.categories import categories_of
from stableval.data.files.formats import not_utf8, utf8_problem
from stableval.data.files.rows import LINE_OFFSET, refuse_duplicated
from stableval.errors import InputError

__all__ = ["read_text"]


def read_text(path: Path, fmt: str, categorical: bool = False) -> pd.DataFrame:
    """A CSV (``fmt="csv"``: ``,``, or ``;`` where the header has more of them) or TSV file, every column text;
    with ``categorical`` as categories where Arrow's reader applies (else the caller codes the text)."""
    sep = _sniff_separator(path) if fmt == "csv" else "\t"
    fast = _read_text_arrow(path, sep) if categorical else None
    frame = fast if fast is not None else _read_text_table(path, sep, fmt)
    frame.attrs[LINE_OFFSET] = _first_row_line(path, len(frame))
    return frame


def _first_row_line(path: Path, rows: int) -> int | None:
    """The file line of the header (so data row ``r`` is on line ``r`` + this), where every line below it holds one
    data row: blank lines above the header and at the end are counted. None where lines and rows do not match
    (blank lines between rows, a quoted value over several lines): errors then name rows only, never a wrong line.

    A byte count at memory speed (C); the readers skip such lines silently, so it cannot be known otherwise.
    """
    newlines = 0
    leading: int | None = None
    tail = b""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            if leading is None:
                text = chunk.lstrip(b"\r\n")
                if text:
                    leading = chunk[:len(chunk) - len(text)].count(b"\n")
            newlines += chunk.count(b"\n")
            tail = (tail + chunk)[-4096:]
    if leading is None:  # nothing but blank lines
        return None
    body = tail.rstrip(b"\r\n")
    trailing = tail[len(body):].count(b"\n")        # blank lines at the end (and the last line's own newline)
    lines = newlines - trailing + 1                  # lines up to the last non-blank one
    return leading + 1 if lines == leading + 1 + rows else None


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

    return categories_of(table, as_text)


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
        problem = utf8_problem(path.read_bytes())
        if problem is None:  # pragma: no cover - pandas and Python agree on UTF-8
            problem = (1, exc.start, exc.reason)
        raise not_utf8(path, problem, f"UTF-8 {fmt.upper()} text") from exc
    except (pd.errors.ParserError, ValueError) as exc:
        detail = " ".join(str(exc).split())
        raise InputError(f"cannot parse as {fmt.upper()} (separator {sep!r}): {detail}", file=str(path),
                         allowed=f"{fmt.upper()} with a header line and the same number of fields on "
                                 "every line") from exc
    if not isinstance(frame.index, pd.RangeIndex):  # pandas took the first column as an index: fields shifted
        raise _more_fields_than_header(path, sep, fmt, len(frame.columns))
    if header is not None:
        refuse_duplicated(path, header.iloc[0].tolist())
    elif len(frame.columns) == 1:
        name = str(frame.columns[0])
        other = [sep for sep in _OTHER_SEPARATORS if sep in name]
        if other:
            raise InputError(f"unrecognised separator {other[0]!r}: the header is one column", file=str(path),
                             value=name if len(name) <= 80 else name[:77] + "...",
                             allowed="comma- or semicolon-separated .csv, or tab-separated .tsv")
    return frame
