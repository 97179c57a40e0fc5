"""Exports out of the portal: each track in its task type's format (the format its analysis command reads:
``stableval score``, ``medqa``, ``ddx``, ``nrp agree``; see each module of :mod:`stableval.portal.tasks`), or the
judgments of every track (:mod:`stableval.portal.tasks.judgments`), written as CSV, JSONL or Parquet. What is left
out ("unable to judge" ratings, flagged submissions, gold questions) is counted in ``notes``.

CSV output is safe to open in a spreadsheet: a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return (which Excel, LibreOffice and Sheets would run as a formula) is written with a leading ``'``
(OWASP's advice); ``label`` is never changed, so ``stableval score`` reads the file as before. JSONL and Parquet
carry the raw text.

>>> defuse_formulas(pd.DataFrame({"item": ["q1", "=HYPERLINK(1)", "-2"], "label": ["4", "5", "1"]}))["item"].tolist()
['q1', "'=HYPERLINK(1)", "'-2"]
"""

from __future__ import annotations

import io
import os
from typing import IO

import pandas as pd

from stableval.data.files import write_frame
from stableval.errors import InputError
from stableval.portal.store.answers import track_or_fail
from stableval.portal.store.db import Database
from stableval.portal.tasks.base import Export, TaskExport
from stableval.portal.tasks.judgments import export_judgments
from stableval.portal.tasks.registry import TASKS

__all__ = ["EXPORT_FORMATS", "EXPORT_KINDS", "FORMULA_START", "Export", "TaskExport", "analysis_command",
           "defuse_formulas", "export", "export_table", "export_task", "to_bytes", "write"]

#: The tables a download may choose (``--kind``): those of every task type that has several.
EXPORT_KINDS = tuple(dict.fromkeys(kind for task in TASKS.values() for kind in task.export_kinds))
EXPORT_FORMATS = ("csv", "jsonl", "parquet")
#: First characters that make a spreadsheet treat a CSV cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def export(db: Database, kind: str | None = None, *, track: str | None = None, criterion: str | None = None,
           rater: str | None = None) -> Export:
    """The export of one track in its task type's format (``kind``: one of the type's tables, if it has several;
    ``criterion``, ``rater``: only those), or, without ``track``, every track's judgments as ``kind``
    (annotations, the default, or pairwise). Gold questions and flagged submissions are left out and counted in the
    notes."""
    if track is None:
        return export_judgments(db, kind or EXPORT_KINDS[0], criterion=criterion, rater=rater)
    with db.reading() as session:
        found = track_or_fail(session, track)
    task = TASKS[found.task_type]
    return task.export(db, found, kind=kind if task.export_kinds else None, criterion=criterion, rater=rater)


def export_task(db: Database, slug: str, *, criterion: str | None = None, rater: str | None = None) -> Export:
    """The export of track ``slug`` in its task type's own format (see the type's module); ``rater`` (``rater-7``)
    keeps one rater's answers (``stableval nrp agree`` reads one rater's rankings at a time). A track whose type
    has several tables (pairwise) is refused: :func:`export` takes the table's ``kind``."""
    with db.reading() as session:
        task = TASKS[track_or_fail(session, slug).task_type]
    if task.export_kinds:
        raise InputError(f"track {slug!r} is a {task.name} track", column="track", value=slug,
                         allowed=f"stableval portal export --kind {'|'.join(task.export_kinds)}")
    return export(db, track=slug, criterion=criterion, rater=rater)


def export_table(db: Database, kind: str | None, *, track: str, criterion: str | None = None) -> Export:
    """The table a track's download gives: its type's export (``kind`` for a type with several tables; for ddx the
    long table ``case, rater, group, condition``, the selectors JSON coming from ``stableval portal export``)."""
    return export(db, kind, track=track, criterion=criterion)


def analysis_command(result: Export, path: str) -> str:
    """The command that analyses the export written to ``path`` (its task type's)."""
    return TASKS[result.task].analysis_command(result, path)


def to_bytes(frame: pd.DataFrame, format: str) -> bytes:
    """The frame as CSV, JSONL or Parquet bytes."""
    buffer = io.BytesIO()
    write(frame, buffer, format)
    return buffer.getvalue()


def write(frame: pd.DataFrame, target: str | os.PathLike[str] | IO[bytes], format: str) -> None:
    """Write the frame to a path or a binary stream as one of :data:`EXPORT_FORMATS` (the shared frame writer,
    :func:`stableval.data.files.write_frame`)."""
    if format not in EXPORT_FORMATS:
        raise InputError("unknown export format", value=format, allowed=", ".join(EXPORT_FORMATS))
    write_frame(defuse_formulas(frame) if format == "csv" else frame, target, format=format)


def defuse_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (every column but ``label``) that a spreadsheet would run as a formula start with
    ``'`` (vectorised; other cells unchanged)."""
    out = frame.copy()
    for column in out.columns:
        if column == "label" or not (pd.api.types.is_object_dtype(out[column])
                                     or pd.api.types.is_string_dtype(out[column])):
            continue
        text = out[column].astype(str)
        risky = text.str.startswith(FORMULA_START).to_numpy() & out[column].notna().to_numpy()
        if risky.any():
            out.loc[risky, column] = "'" + text[risky]
    return out
