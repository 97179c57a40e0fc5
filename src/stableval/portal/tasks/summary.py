"""The results page of a track whose type summarises its answers: the type's tables of the confirmed answers (gold
questions and flagged submissions left out, as in the exports), built from the same answers as its export.
Counts are descriptive; the analyses are the commands the export feeds.

Summaries are cached per (database, track, number of submissions, last submission id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from stableval.portal.store.answers import confirmed_answers, left_out_notes, submission_signature
from stableval.portal.store.db import Database
from stableval.portal.store.models import Track
from stableval.portal.store.result_cache import ResultCache

__all__ = ["Summarised", "TaskSummary", "clear_cache", "share", "summary_table", "task_summary"]


class Summarised(Protocol):
    """What a summary needs of a task type (:class:`~stableval.portal.tasks.base.TaskType`)."""

    @property
    def analysis(self) -> str: ...

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]: ...


@dataclass(frozen=True)
class TaskSummary:
    """What the results page shows for a track whose type summarises its answers: ``tables`` maps a section id to
    ``{"title", "caption", "header", "rows"}`` (text cells), ``figures`` holds headline numbers, ``notes`` what
    was left out, ``analysis`` the command that analyses the export."""

    track: str
    title: str
    task: str
    answers: int = 0
    questions: int = 0
    raters: int = 0
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    message: str = ""
    analysis: str = ""


def share(count: int, total: int) -> str:
    """A count with its share of ``total``.

    >>> share(1, 4), share(0, 0)
    ('1 (25%)', '0')
    """
    return f"{count} ({count / total:.0%})" if total else str(count)


def summary_table(title: str, caption: str, header: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """One section of a :class:`TaskSummary`."""
    return {"title": title, "caption": caption, "header": header, "rows": rows}



_CACHE_SIZE = 16
_cache: ResultCache[TaskSummary] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached summaries (tests; the cache also invalidates itself on every new submission)."""
    _cache.clear()


def task_summary(db: Database, slug: str, task: Summarised, *, cache: bool = True) -> TaskSummary:
    """The summary of track ``slug`` by its task type (an :class:`~stableval.errors.InputError` for an unknown
    track)."""
    count, last = submission_signature(db, slug)
    return _cache.get((db.url, slug, count, last), lambda: _compute(db, slug, task), enabled=cache)


def _compute(db: Database, slug: str, task: Summarised) -> TaskSummary:
    track, frame, flagged, gold = confirmed_answers(db, slug)
    base = TaskSummary(slug, track.title, track.task_type, len(frame), int(frame["question_id"].nunique()),
                       int(frame["rater_id"].nunique()), notes=tuple(left_out_notes(flagged, gold)),
                       analysis=task.analysis)
    if frame.empty:
        return TaskSummary(**{**base.__dict__, "message": "No confirmed answers yet: the summary appears after the "
                                                          "first submissions."})
    tables, figures = task.summary(track, frame)
    return TaskSummary(**{**base.__dict__, "tables": tables, "figures": figures})
