"""Labels and credit: level names, label codes ``0..K-1`` and one credit number per level.

Labels are level names (``levels=["bad", "ok", "good"]``, worst first) or integer codes ``0..K-1``; the credit
of each level defaults to evenly spaced values from 0 to 1.

>>> check_levels("bad, ok, good", source="x.csv")
('bad', 'ok', 'good')
>>> parse_credit("0,0.25,1", ("bad", "ok", "good"), source="x.csv").tolist()
[0.0, 0.25, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.columns import category_codes, is_coded
from stableval.data.files import line_offset, row_error, rows_text
from stableval.data.table import default_credit
from stableval.errors import InputError

__all__ = ["MAX_INTEGER_LEVELS", "WARNING_PREFIX", "check_levels", "credit_text", "encode_labels", "parse_credit",
           "parse_list", "unused_levels_warning"]

#: Integer labels above this are refused (a scale with more levels is almost surely a wrong column).
MAX_INTEGER_LEVELS = 1000

#: The levels to suggest where a file's labels need them named (a placeholder in messages, see stableval.errors).
_NAME_LEVELS = {"levels": "a,b,c"}


def credit_text(values: Sequence[float] | np.ndarray) -> str:
    """Credits as every output shows them: three significant digits, no trailing zeros.

    >>> credit_text([0, 1 / 3, 2 / 3, 1.0]), credit_text([0.25])
    ('0, 0.333, 0.667, 1', '0.25')
    """
    return ", ".join(f"{float(value):.3g}" for value in values)


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


def check_levels(levels: Sequence[str] | str, *, source: str) -> tuple[str, ...]:
    """Level names, worst first, from a sequence or ``"a,b,c"``: at least two, non-empty and distinct.

    >>> check_levels(["low", "high"], source="x.csv")
    ('low', 'high')
    """
    names = parse_list(levels, what="levels") if isinstance(levels, str) else [str(v).strip() for v in levels]
    if any(not name for name in names):
        raise InputError("empty level name", file=source, value=list(names),
                         allowed="non-empty level names, worst first, e.g. {levels}", options=_NAME_LEVELS)
    if len(names) < 2:
        raise InputError("need at least 2 levels", file=source, value=list(names),
                         allowed="two or more level names, worst first, e.g. {levels}", options=_NAME_LEVELS)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"level {name!r} is named twice", file=source, value=list(names),
                             allowed="distinct level names, worst first, e.g. {levels}", options=_NAME_LEVELS)
        seen.add(name)
    return tuple(names)


def encode_labels(
    frame: pd.DataFrame, name: str, levels: tuple[str, ...] | None, *, source: str
) -> tuple[np.ndarray, tuple[str, ...], list[str]]:
    """Label codes 0..K-1, the level names, and notes; bad labels raise with row, column, value, allowed.

    Without ``levels`` the labels must be integers ``0..MAX_INTEGER_LEVELS - 1`` and the levels are
    ``"0"..str(max)``.

    >>> import pandas as pd
    >>> codes, levels, notes = encode_labels(pd.DataFrame({"label": ["2", "0", "1"]}), "label", None, source="x.csv")
    >>> codes.tolist(), levels, notes
    ([2, 0, 1], ('0', '1', '2'), ['integer labels 0..2: levels 0..2'])
    """
    offset = line_offset(frame)
    column = frame[name]
    if is_coded(column):  # categorical: each distinct text is stripped and checked once
        codes, unique_text = category_codes(column, strip=True)
    else:
        codes, uniques = pd.factorize(column.astype(str).str.strip(), use_na_sentinel=True)
        unique_text = np.asarray(uniques, dtype=object)
    notes: list[str] = []
    empty_unique = np.array([u == "" for u in unique_text], dtype=bool)
    if levels is not None:
        allowed = "one of: " + ", ".join(levels)
        lookup = {level: code for code, level in enumerate(levels)}
        mapped = np.array([lookup.get(u, -1) for u in unique_text], dtype=np.int64)
    else:
        allowed = "integer level codes >= 0, or name the levels worst first with {levels}"
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
                        has_value=True, allowed=allowed, options=_NAME_LEVELS if levels is None else None)
    label = mapped[codes]
    if levels is None:
        top = int(label.max())
        if top < 1:
            raise InputError("need at least 2 levels: every label is 0", file=source, column=name,
                             value="0", allowed="integer codes 0..K-1 with K >= 2, or name them with {levels}",
                             options=_NAME_LEVELS)
        levels = tuple(str(v) for v in range(top + 1))
        low = int(label.min())
        notes.append(f"integer labels {low}..{top}: levels 0..{top}"
                     + (f" (levels below {low} never occur but still take part of the default credit scale; "
                        "set the levels or the credit to change that)" if low > 0 else ""))
        gap = unused_levels_warning(label, low, top, offset)
        if gap is not None:
            notes.append(gap)
    return label, levels, notes


#: Notes that start with this are warnings: the CLI repeats them on stderr.
WARNING_PREFIX = "WARNING: "


def unused_levels_warning(label: np.ndarray, low: int, top: int, offset: int | None) -> str | None:
    """A warning when inferred integer levels between the lowest and highest label never occur (e.g. one stray
    ``7`` on a 0..2 scale makes K = 8 and rescales every credit): the unused levels, the rows above the first
    gap, and the fix (naming the levels); ``None`` when every level between them occurs.

    >>> print(unused_levels_warning(np.array([0, 1, 2, 7, 2]), 0, 7, 1))  # doctest: +NORMALIZE_WHITESPACE
    WARNING: integer labels 0..7 but levels 3, 4, 5, 6 never occur, so K = 8 and the default credit of every
    level is rescaled (level 2 gets 0.286, not 1). Labels above 2: row 4 (line 5). If the scale is 0..2, fix those
    rows (setting the levels to 0,1,2 makes them an error naming each); if 0..7 is meant, set the levels to
    0,1,2,3,4,5,6,7 to say so.
    >>> print(unused_levels_warning(np.array([0, 2, 2]), 0, 2, None))  # doctest: +NORMALIZE_WHITESPACE
    WARNING: integer labels 0..2 but level 1 never occurs, so K = 3; if 0..2 is meant, set the levels to 0,1,2 to
    say so.
    """
    counts = np.bincount(label, minlength=top + 1)
    unused = [level for level in range(low + 1, top) if counts[level] == 0]
    if not unused:
        return None
    first_gap = unused[0]
    below = first_gap - 1
    rows = (np.flatnonzero(label > first_gap)[:5] + 1).tolist()
    more = int((label > first_gap).sum()) - len(rows)
    shown = rows_text(rows, offset) + (f" and {more:,} more" if more > 0 else "")
    listed = ", ".join(map(str, unused[:10])) + (", ..." if len(unused) > 10 else "")
    text = (f"{WARNING_PREFIX}integer labels {low}..{top} but "
            + (f"level {listed} never occurs" if len(unused) == 1 else f"levels {listed} never occur")
            + f", so K = {top + 1}")
    if below >= 1:
        text += (f" and the default credit of every level is rescaled (level {below} gets "
                 f"{credit_text([below / top])}, not 1)."
                 f" Labels above {below}: {shown}. If the scale is 0..{below}, fix those rows "
                 f"(setting the levels to {','.join(map(str, range(below + 1)))} makes them an error naming each);")
    else:
        text += ";"
    return text + f" if 0..{top} is meant, set the levels to {','.join(map(str, range(top + 1)))} to say so."


def parse_credit(credit: Sequence[float] | str | None, levels: Sequence[str], *, source: str) -> np.ndarray:
    """One finite number per level, from a sequence or ``"0,0.5,1"``; ``None`` gives the default credit.

    >>> parse_credit(None, ("bad", "ok", "good"), source="x.csv").tolist()
    [0.0, 0.5, 1.0]
    """
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
                         allowed=f"{k} comma-separated numbers, e.g. {{credit}}",
                         options={"credit": ",".join(f"{v:g}" for v in default_credit(k))})
    return np.asarray(values, dtype=float)
