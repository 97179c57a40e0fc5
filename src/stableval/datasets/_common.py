"""Helpers shared by the dataset loaders: finding the file, checking columns, yes/no columns, the ``Dataset`` record.

Row errors and id columns come from :mod:`stableval.data.files` (``row_error``) and
:mod:`stableval.data.columns` (``id_column``), as for every other reader.

>>> import pandas as pd
>>> require_columns(pd.DataFrame(columns=["a", "b"]), ("a",), source="x.csv")
>>> parse_flags(pd.DataFrame({"nsfw": ["Y", "0", ""]}), "nsfw", source="x.csv").tolist()
[True, False, False]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.files import line_offset, row_error
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

#: Text read as a set flag / skip (case-insensitive) ...
FLAG_TRUE: frozenset[str] = frozenset({"yes", "y", "true", "t", "1"})
#: ... and as not set (an empty cell is not set).
FLAG_FALSE: frozenset[str] = frozenset({"no", "n", "false", "f", "0", ""})
#: What a flag or skip cell may hold, for messages.
FLAG_ALLOWED = "yes/no, true/false, y/n, 1/0 (case-insensitive) or empty"
#: The reason of a flagged row that gives none.
UNSPECIFIED = "unspecified"
#: Gold labels: (item, agent) → level name.
GoldMap = Mapping[tuple[str, str], str]


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded public dataset.

    Attributes:
        name: the registry name (``"convabuse"``, ``"qags"``, ...).
        table: the judgments as an :class:`~stableval.data.table.AnnotationTable`.
        gold: known true level name per response ``(item, agent)``, or ``None`` when the dataset has no gold.
        description: one paragraph: what the data are, where they come from, their license, the conversion.
    """

    name: str
    table: AnnotationTable
    gold: GoldMap | None
    description: str


def resolve_file(path: str | os.PathLike[str], candidates: Sequence[str], *, what: str) -> Path:
    """``path`` itself when it is a file; else the first of ``candidates`` (relative paths) inside the folder.

    A missing path, or a folder holding none of the candidates, raises :class:`InputError` naming it.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=str(path),
                         allowed=f"an existing {what} file, or its dataset folder (holding "
                                 f"{' or '.join(candidates)})")
    if path.is_file():
        if path.stat().st_size == 0:
            raise InputError("file is empty (0 bytes)", file=str(path), allowed=f"the {what} file")
        return path
    for candidate in candidates:
        found = path / candidate
        if found.is_file():
            return found
    raise InputError(f"folder holds no {what} file", file=str(path),
                     allowed=f"a folder holding {' or '.join(candidates)}, or the file itself")


def require_columns(frame: pd.DataFrame, names: Sequence[str], *, source: str) -> None:
    """Raise :class:`InputError` naming the first of ``names`` the frame lacks and the columns it has."""
    present = [str(c) for c in frame.columns]
    for name in names:
        if name not in present:
            raise InputError(f"missing column {name!r}", file=source, column=name,
                             allowed="columns " + ", ".join(names) + "; present: " + ", ".join(present))


def parse_flags(frame: pd.DataFrame, column: str, *, source: str) -> np.ndarray:
    """(rows,) bool of a yes/no column (:data:`FLAG_TRUE` / :data:`FLAG_FALSE`); anything else raises, naming the
    first bad row."""
    text = frame[column].astype(str).str.strip().str.lower().to_numpy(dtype=object)
    truth = np.isin(text, list(FLAG_TRUE))
    bad = ~truth & ~np.isin(text, list(FLAG_FALSE))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"not a yes/no value ({int(bad.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=line_offset(frame), column=column, value=str(frame[column].iloc[pos]),
                        allowed=FLAG_ALLOWED)
    return truth


def flag_reasons(reasons: pd.Series, flag: np.ndarray, *, source: str, column: str,
                 offset: int | None = None) -> np.ndarray:
    """(M,) the stripped reason of each flagged row (``unspecified`` where empty), ``""`` on the others; a reason on
    a row that is not flagged is an error naming the row.

    >>> flag_reasons(pd.Series(["PII", "", None]), np.array([True, True, False]), source="x", column="r").tolist()
    ['PII', 'unspecified', '']
    """
    text = reasons.astype("string").fillna("").str.strip().reset_index(drop=True)
    stray = (text != "").to_numpy() & ~flag
    if stray.any():
        pos = int(np.flatnonzero(stray)[0])
        raise row_error(f"a flag reason on a row that is not flagged ({int(stray.sum()):,} row(s) in all)",
                        source=source, row=pos + 1, offset=offset, column=column, value=text.iloc[pos],
                        allowed="a reason only where the flag is set, or set the flag too")
    return np.where(flag, text.where(text != "", UNSPECIFIED).to_numpy(dtype=object), "")
