"""Read and validate annotation files (CSV, TSV, JSONL, Parquet) into an :class:`AnnotationTable`.

Every column is read as text, so ids such as ``"007"`` survive; labels are parsed afterwards, either as level
names (``levels=["bad", "ok", "good"]``, worst first) or as integer codes ``0..K-1``. Every problem is an
:class:`~stableval.errors.InputError` naming the file, the 1-based data row (the header is not counted; in CSV
and TSV files the line is ``row + 1``), the column, the offending value and what is allowed. Validation is
vectorised: a million rows take about a second.

>>> import pandas as pd
>>> frame = pd.DataFrame({"task": ["q1", "q1", "q2"], "system": ["A", "A", "B"],
...                       "worker": ["w1", "w2", "w1"], "rating": ["good", "bad", "good"]})
>>> table = annotations_from_frame(frame, levels=["bad", "good"])
>>> table.n_judgments, list(table.agents), table.levels
(3, ['A', 'B'], ('bad', 'good'))
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.table import AnnotationTable, default_credit
from stableval.errors import InputError

__all__ = [
    "DUPLICATE_POLICIES",
    "FORMATS",
    "MAX_INTEGER_LEVELS",
    "ROLE_ALIASES",
    "annotations_from_frame",
    "parse_list",
    "read_annotations",
    "read_table_file",
]

#: Header names accepted for each role, in order of preference (matched case-insensitively). An explicit
#: ``columns={"item": "question"}`` mapping always wins. ``response`` is deliberately *not* a label alias: in
#: stableval a response is an agent's answer, and a ``response`` column usually holds its text.
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "item": ("item", "item_id", "task", "task_id", "question_id", "question", "prompt_id"),
    "agent": ("agent", "agent_id", "system", "system_id", "model", "model_id"),
    "rater": ("rater", "rater_id", "worker", "worker_id", "annotator", "annotator_id", "judge", "judge_id"),
    "label": ("label", "rating", "score", "grade", "judgment", "judgement"),
}

#: Command-line flag that names each role's column (the CLI spelling used in messages).
ROLE_FLAGS: dict[str, str] = {
    "item": "--item-col",
    "agent": "--agent-col",
    "rater": "--rater-col",
    "label": "--label-col",
    "agent_a": "--agent-a-col",
    "agent_b": "--agent-b-col",
    "winner": "--winner-col",
    "criterion": "--criterion-col",
}

#: What ``duplicates=`` accepts: the same (item, agent, rater) judged more than once.
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "last", "keep")

#: File suffix → format name.
FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

#: Integer labels above this are refused (a scale with more levels is almost surely a wrong column).
MAX_INTEGER_LEVELS = 1000

_ALLOWED_FORMATS = "csv (.csv), tsv (.tsv, .tab), jsonl (.jsonl, .ndjson), parquet (.parquet, .pq)"
# frame.attrs key: the file line of data row r is r + offset (absent where lines mean nothing, e.g. Parquet)
_LINE_OFFSET = "stableval.line_offset"


# ====================================================================================== small helpers
def parse_list(text: str, *, what: str = "list") -> list[str]:
    """Split a comma-separated flag value, stripping blanks and dropping empty entries.

    >>> parse_list(" bad, ok ,good,")
    ['bad', 'ok', 'good']
    """
    parts = [part.strip() for part in str(text).split(",")]
    parts = [part for part in parts if part]
    if not parts:
        raise InputError(f"empty {what}", value=text, allowed="comma-separated values, e.g. 'a,b,c'")
    return parts


def line_offset(frame: pd.DataFrame) -> int | None:
    offset = frame.attrs.get(_LINE_OFFSET)
    return int(offset) if offset is not None else None


def _rows_text(rows: Sequence[int], offset: int | None) -> str:
    """'rows 3 and 7 (lines 4 and 8)' — 1-based data rows, with file lines where they mean something."""
    def join(values: Sequence[int]) -> str:
        text = [str(v) for v in values]
        return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]

    noun = "row" if len(rows) == 1 else "rows"
    out = f"{noun} {join(rows)}"
    if offset is not None:
        out += f" ({'line' if len(rows) == 1 else 'lines'} {join([r + offset for r in rows])})"
    return out


def row_error(problem: str, *, source: str, row: int, offset: int | None, column: str | None = None,
               value: Any = None, allowed: str | None = None, has_value: bool | None = None) -> InputError:
    """An InputError at a 1-based data row; text formats also get the file line: 'row 5 (line 6)'."""
    error = InputError(problem, file=source, row=row, column=column, value=value, allowed=allowed,
                       has_value=has_value)
    if offset is not None:
        head = f"{source}, row {row}"
        message = str(error)
        if message.startswith(head):
            error.args = (f"{head} (line {row + offset})" + message[len(head):],)
    return error


def _combine(*codes: np.ndarray) -> np.ndarray:
    """One int64 code per distinct tuple of non-negative integer codes (no overflow: compress as we go)."""
    key = np.asarray(codes[0], dtype=np.int64)
    for more in codes[1:]:
        more = np.asarray(more, dtype=np.int64)
        width = int(more.max()) + 1 if more.size else 1
        key = pd.factorize(key, sort=False)[0].astype(np.int64) * width + more
    return key


# ====================================================================================== reading files
def _format_of(path: Path, format: str | None) -> str:
    if format is not None:
        name = format.lower().lstrip(".")
        name = FORMATS.get("." + name, name)
        if name not in set(FORMATS.values()):
            raise InputError("unknown format", file=str(path), value=format, allowed=_ALLOWED_FORMATS)
        return name
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError("cannot tell the file format from its suffix", file=str(path),
                         value=path.suffix or "",
                         allowed=f"{_ALLOWED_FORMATS}; or pass format= (CLI: --input-format)")
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


# ====================================================================================== columns
def resolve_columns(
    frame: pd.DataFrame,
    roles: Mapping[str, tuple[str, ...]],
    columns: Mapping[str, str] | None,
    *,
    source: str,
    optional: Sequence[str] = (),
) -> dict[str, str | None]:
    """Role → column: an explicit mapping first, then the aliases (case-insensitive, exact case preferred).

    Required roles that are not found raise an InputError naming the columns present and the CLI flag.
    """
    present = [str(c) for c in frame.columns]
    lowered: dict[str, list[str]] = {}
    for name in present:
        lowered.setdefault(name.strip().lower(), []).append(name)
    explicit = dict(columns or {})
    unknown = sorted(set(explicit) - set(roles))
    if unknown:
        raise InputError("unknown role in the column mapping", file=source, value=unknown[0],
                         allowed="roles: " + ", ".join(roles))
    found: dict[str, str | None] = {}
    for role, aliases in roles.items():
        if explicit.get(role) is not None:
            wanted = str(explicit[role])
            if wanted in present:
                found[role] = wanted
            elif len(lowered.get(wanted.strip().lower(), [])) == 1:
                found[role] = lowered[wanted.strip().lower()][0]
            else:
                raise InputError(f"the {role} column named in the mapping is not in the file", file=source,
                                 column=wanted, allowed="columns present: " + ", ".join(present))
            continue
        found[role] = None
        for alias in aliases:
            if alias in present:
                found[role] = alias
                break
            if lowered.get(alias):
                found[role] = lowered[alias][0]
                break
        if found[role] is None and role not in optional:
            flag = ROLE_FLAGS.get(role, f"--{role}-col")
            allowed = f"name it with columns={{{role!r}: NAME}} (CLI: {flag} NAME)"
            if role == "agent":
                allowed += ("; or, if one system was rated, default_agent=NAME (CLI: --default-agent NAME) "
                            "gives every row that agent")
            raise InputError(
                f"no {role} column (looked for: {', '.join(aliases)}); columns present: {', '.join(present)}",
                file=source, column=role,
                allowed=allowed + "; role flags: "
                + ", ".join(ROLE_FLAGS[r] for r in roles if r in ROLE_FLAGS))
    used: dict[str, str] = {}
    for role, column in found.items():
        if column is None:
            continue
        if column in used:
            raise InputError(f"one column is used for two roles ({used[column]} and {role})", file=source,
                             column=column, allowed="a different column for each role")
        used[column] = role
    return found


def id_column(frame: pd.DataFrame, name: str, *, source: str, role: str) -> pd.Series:
    """The stripped text of an id column (str Series, index 0..n-1); empty ids raise (row, column, value)."""
    column = frame[name]
    text = column.astype(str).str.strip().reset_index(drop=True)
    empty = text.isna().to_numpy() | (text == "").to_numpy(dtype=bool, na_value=True)
    if empty.any():
        pos = int(np.flatnonzero(empty)[0])
        raw = column.iloc[pos]
        raise row_error(f"empty {role} id ({int(empty.sum()):,} row(s) in all)", source=source, row=pos + 1,
                         offset=line_offset(frame), column=name,
                         value=None if pd.isna(raw) else str(raw), has_value=True,
                         allowed=f"a non-empty {role} id on every row")
    return text


# ====================================================================================== labels & credit
def _check_levels(levels: Sequence[str] | str, *, source: str) -> tuple[str, ...]:
    names = parse_list(levels, what="levels") if isinstance(levels, str) else [str(v).strip() for v in levels]
    if any(not name for name in names):
        raise InputError("empty level name", file=source, value=list(names),
                         allowed="non-empty level names, worst first (CLI: --levels a,b,c)")
    if len(names) < 2:
        raise InputError("need at least 2 levels", file=source, value=list(names),
                         allowed="two or more level names, worst first (CLI: --levels a,b,c)")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"level {name!r} is named twice", file=source, value=list(names),
                             allowed="distinct level names, worst first (CLI: --levels a,b,c)")
        seen.add(name)
    return tuple(names)


def _encode_labels(
    frame: pd.DataFrame, name: str, levels: tuple[str, ...] | None, *, source: str
) -> tuple[np.ndarray, tuple[str, ...], list[str]]:
    """Label codes 0..K-1, the level names, and notes; bad labels raise with row, column, value, allowed."""
    offset = line_offset(frame)
    column = frame[name]
    text = column.astype(str).str.strip()
    codes, uniques = pd.factorize(text, use_na_sentinel=True)
    unique_text = np.asarray(uniques, dtype=object)
    notes: list[str] = []
    empty_unique = np.array([u == "" for u in unique_text], dtype=bool)
    if levels is not None:
        allowed = "one of: " + ", ".join(levels)
        lookup = {level: code for code, level in enumerate(levels)}
        mapped = np.array([lookup.get(u, -1) for u in unique_text], dtype=np.int64)
    else:
        allowed = ("integer level codes >= 0, or name the levels worst first with levels=[...] "
                   "(CLI: --levels a,b,c)")
        numbers = pd.to_numeric(pd.Series(unique_text, dtype=object), errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(numbers) & (numbers >= 0) & (numbers == np.floor(numbers))
            ok &= numbers <= MAX_INTEGER_LEVELS - 1
        mapped = np.where(ok, np.nan_to_num(numbers), -1).astype(np.int64)
    bad_unique = (mapped < 0) | empty_unique
    bad_rows = codes < 0
    if bad_unique.any():
        bad_rows |= np.isin(codes, np.flatnonzero(bad_unique))
    if bad_rows.any():
        pos = int(np.flatnonzero(bad_rows)[0])
        raw = column.iloc[pos]
        value = None if pd.isna(raw) else str(raw)
        count = f"{int(bad_rows.sum()):,} row(s) in all"
        if value is None or value.strip() == "":
            problem = f"empty label ({count})"
        elif levels is not None:
            problem = f"label is not one of the levels ({count})"
        else:
            number = pd.to_numeric(pd.Series([value.strip()], dtype=object), errors="coerce").iloc[0]
            number = float(number)
            if np.isfinite(number) and number > MAX_INTEGER_LEVELS - 1 and number == np.floor(number):
                problem = f"integer label above {MAX_INTEGER_LEVELS - 1} ({count})"
            else:
                problem = f"label is not an integer level code and no levels were given ({count})"
        raise row_error(problem, source=source, row=pos + 1, offset=offset, column=name, value=value,
                         has_value=True, allowed=allowed)
    label = mapped[codes]
    if levels is None:
        top = int(label.max())
        if top < 1:
            raise InputError("need at least 2 levels: every label is 0", file=source, column=name,
                             value="0", allowed="integer codes 0..K-1 with K >= 2, or levels=[...] "
                                                "(CLI: --levels a,b,c)")
        levels = tuple(str(v) for v in range(top + 1))
        low = int(label.min())
        notes.append(f"integer labels {low}..{top}: levels 0..{top}"
                     + (f" (levels below {low} never occur but still take part of the default credit scale; "
                        "pass --levels or --credit to change that)" if low > 0 else ""))
    return label, levels, notes


def _parse_credit(credit: Sequence[float] | str | None, levels: Sequence[str], *, source: str) -> np.ndarray:
    k = len(levels)
    if credit is None:
        return default_credit(k)
    entries: list[Any] = parse_list(credit, what="credit") if isinstance(credit, str) else list(credit)
    values = []
    for entry in entries:
        try:
            number = float(entry)
        except (TypeError, ValueError):
            raise InputError("credit entry is not a number", file=source, value=entry,
                             allowed=f"{k} comma-separated numbers, e.g. "
                                     f"{','.join(f'{v:g}' for v in default_credit(k))}") from None
        if not np.isfinite(number):
            raise InputError("credit entry is not a finite number", file=source, value=entry,
                             allowed=f"{k} finite numbers")
        values.append(number)
    if len(values) != k:
        raise InputError(f"credit needs one number per level: {k} levels ({', '.join(levels)}), "
                         f"{len(values)} numbers given", file=source, value=entries,
                         allowed=f"{k} comma-separated numbers (CLI: --credit "
                                 f"{','.join(f'{v:g}' for v in default_credit(k))})")
    return np.asarray(values, dtype=float)


# ====================================================================================== duplicates
def _check_policy(duplicates: str) -> None:
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates={duplicates!r} is not a policy; allowed: "
                         + ", ".join(repr(p) for p in DUPLICATE_POLICIES))


def _apply_duplicates(
    key: np.ndarray,
    duplicates: str,
    *,
    source: str,
    offset: int | None,
    describe: Any,
    what: str,
) -> tuple[np.ndarray | None, list[str]]:
    """Rows to keep (None = all) and notes, for rows sharing ``key``.

    ``describe(pos)`` names the ids of row ``pos`` for the message; ``what`` names the key, e.g.
    '(item, agent, rater)'.
    """
    series = pd.Series(key)
    repeat = series.duplicated(keep="first").to_numpy()
    n_repeat = int(repeat.sum())
    if n_repeat == 0:
        return None, []
    if duplicates == "error":
        examples = []
        repeated_keys = pd.unique(key[repeat])[:3]
        for value in repeated_keys:
            same = np.flatnonzero(key == value)
            pos = int(same[0])
            rows = [int(p) + 1 for p in same[:4]]
            examples.append(f"{_rows_text(rows, offset)} ({describe(pos)})")
        first = int(np.flatnonzero(repeat)[0])
        raise InputError(
            f"{n_repeat:,} row(s) repeat a {what} judged on an earlier row: " + "; ".join(examples),
            file=source, row=first + 1,
            allowed="duplicates='first'|'last'|'keep' (CLI: --duplicates first|last|keep) to keep the first, "
                    "the last, or every one of them as an independent judgment")
    if duplicates == "keep":
        return None, [f"kept {n_repeat:,} repeated judgment(s) of the same {what} as independent judgments "
                      "(policy 'keep')"]
    keep = ~series.duplicated(keep="first" if duplicates == "first" else "last").to_numpy()
    return keep, [f"dropped {n_repeat:,} duplicate judgment(s) (policy {duplicates!r})"]


# ====================================================================================== the public readers
def annotations_from_frame(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    credit: Sequence[float] | str | None = None,
    duplicates: str = "error",
    source: str = "<DataFrame>",
    default_agent: str | None = None,
) -> AnnotationTable:
    """Validate a long frame (one row per judgment) and encode it as an :class:`AnnotationTable`.

    Args:
        frame: columns for item, agent, rater and label (names resolved by ``columns`` then ``ROLE_ALIASES``).
        columns: explicit role → column name, e.g. ``{"item": "patient", "rater": "observer"}``.
        levels: ordered level names, worst first; labels must equal one of them. Without it labels must be
            integers >= 0 and the levels are ``"0"..str(max)``.
        credit: one number per level (sequence or ``"0,0.5,1"``); default evenly spaced 0..1.
        duplicates: the same (item, agent, rater) on several rows: ``"error"`` (default), ``"first"``,
            ``"last"`` (keep one, note how many were dropped) or ``"keep"`` (independent repeated judgments).
        source: the name used in messages (a file name).
        default_agent: the agent of every row when the frame has no agent column (one system rated).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "A"], "rater": ["r1", "r1"],
    ...                       "label": ["2", "0"]})
    >>> table = annotations_from_frame(frame, duplicates="last")
    >>> table.levels, table.label.tolist(), table.notes[-1]
    (('0', '1', '2'), [0], "dropped 1 duplicate judgment(s) (policy 'last')")
    """
    _check_policy(duplicates)
    if len(frame) == 0:
        raise InputError("no rows", file=source, allowed="one row per judgment")
    found = resolve_columns(frame, ROLE_ALIASES, columns, source=source,
                             optional=("agent",) if default_agent is not None else ())
    offset = line_offset(frame)
    level_names = _check_levels(levels, source=source) if levels is not None else None
    if level_names is not None and credit is not None:
        _parse_credit(credit, level_names, source=source)  # fail fast, before scanning the rows
    item_col, rater_col, label_col = (str(found[r]) for r in ("item", "rater", "label"))
    item = id_column(frame, item_col, source=source, role="item")
    notes: list[str] = []
    if found["agent"] is None:
        agent_name = str(default_agent).strip()
        if not agent_name:
            raise InputError("default_agent is empty", file=source, value=default_agent,
                             allowed="a non-empty agent name")
        agent = pd.Series(agent_name, index=item.index, dtype=item.dtype)
        notes.append(f"no agent column: every judgment is of agent {agent_name!r}")
    else:
        agent = id_column(frame, str(found["agent"]), source=source, role="agent")
    rater = id_column(frame, rater_col, source=source, role="rater")
    label, level_names, label_notes = _encode_labels(frame, label_col, level_names, source=source)
    notes += label_notes
    credit_values = _parse_credit(credit, level_names, source=source)

    item_code = pd.factorize(item)[0]
    agent_code = pd.factorize(agent)[0]
    rater_code = pd.factorize(rater)[0]
    key = _combine(item_code, agent_code, rater_code)

    def describe(pos: int) -> str:
        return f"item {item.iloc[pos]!r}, agent {agent.iloc[pos]!r}, rater {rater.iloc[pos]!r}"

    keep, duplicate_notes = _apply_duplicates(key, duplicates, source=source, offset=offset,
                                              describe=describe, what="(item, agent, rater)")
    notes += duplicate_notes
    clean = pd.DataFrame({"item": item, "agent": agent, "rater": rater, "label": label})
    if keep is not None:
        clean = clean.loc[keep]
    return AnnotationTable.from_frame(clean, levels=level_names, credit=credit_values, source=source,
                                      notes=notes)


def read_annotations(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    credit: Sequence[float] | str | None = None,
    duplicates: str = "error",
    format: str | None = None,
    default_agent: str | None = None,
) -> AnnotationTable:
    """Read an annotation file (:func:`read_table_file`) and validate it (:func:`annotations_from_frame`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.tsv"
    >>> _ = path.write_text("item\\tmodel\\tannotator\\trating\\nq1\\tA\\tr1\\tgood\\nq1\\tA\\tr2\\tbad\\n")
    >>> table = read_annotations(path, levels="bad,good")
    >>> table.source.endswith("ratings.tsv"), table.n_judgments, table.label.tolist()
    (True, 2, [1, 0])
    """
    _check_policy(duplicates)
    frame = read_table_file(path, format=format)
    return annotations_from_frame(frame, columns=columns, levels=levels, credit=credit, duplicates=duplicates,
                                  source=str(path), default_agent=default_agent)
