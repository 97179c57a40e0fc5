"""Task types of a track and their question files: what a rater is asked, and what an import must hold.

A track has one task type (``--task`` at creation; default ``pairwise``, the A-vs-B comparison then 1-5 ratings of
:mod:`stableval.portal.flow`):

* ``single`` — one answer per page, one level per criterion from the track's own ordered scale
  (``--scale incorrect,partial,correct``; default 1-5). File columns: ``id, prompt, model, answer`` [``reference,
  specialty, subspecialty``].
* ``mcq`` — multiple choice answered blind, then judged against the key (the Relabeled MedQA protocol of Saab et
  al. 2024, arXiv:2404.18416, App. C.2). Columns: ``id, prompt, A, B[, C, D], answer_idx`` (or JSONL with
  ``options`` as ``{"A": text, ...}``).
* ``ddx`` — an ordered differential diagnosis with "equally likely" groups (the Dermatology DDx protocol of Stutz
  et al. 2023, arXiv:2307.02191) picked from the track's condition list (``--conditions FILE``, at most
  ``--max-conditions`` per answer). Columns: ``id, prompt`` [``reference, specialty, subspecialty``].
* ``rank-documents`` — order a generated answer among k judged documents (the NRP expert study). JSONL, one
  question a line: ``{"id", "prompt", "items": [{"id", "text", "kind": "answer"|"document", "model"?, "grade"?}],
  "specialty"?}`` with 2-20 items of unique ids.

Every type takes an optional ``gold`` column: the known answer of a gold (attention-check) question, read per task
type by :mod:`stableval.portal.task_gold`.

Answers (``answer``, pairwise ``answer_a``/``answer_b``) may be agent transcripts (:mod:`stableval.portal.transcripts`),
validated here. Every problem is an :class:`~stableval.errors.InputError` naming the file, row, column, value and
what is allowed; an import is all or nothing.

>>> TASKS["mcq"].steps, TASKS["single"].first_step
(('blind', 'seen'), 'single')
>>> parse_scale("incorrect, partial ,correct")
['incorrect', 'partial', 'correct']
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import select

from stableval.datasets.medqa import LETTERS  # the option letters stableval medqa reads
from stableval.errors import InputError
from stableval.portal.db import Database
from stableval.portal.models import Question, Track, utcnow
from stableval.portal.task_gold import GOLD_MARK, parse_task_gold
from stableval.portal.transcripts import transcript_problem

__all__ = ["DEFAULT_SCALE", "LETTERS", "MAX_CONDITIONS", "MAX_ITEMS", "TASKS", "TaskType", "import_task_questions",
           "parse_conditions", "parse_scale", "read_conditions", "task_options", "task_type_of"]

#: Levels of a single-answer track without ``--scale`` (worst first).
DEFAULT_SCALE = ("1", "2", "3", "4", "5")
#: Most items (answers and documents) of a rank-documents question.
MAX_ITEMS = 20
#: Largest "up to N conditions" of a ddx track.
MAX_CONDITIONS = 20
_MAX_TEXT = 100_000


@dataclass(frozen=True)
class TaskType:
    """A task type: its name, what raters are told, and the steps of its form (the confirm page follows)."""

    name: str
    title: str
    steps: tuple[str, ...]

    @property
    def first_step(self) -> str:
        return self.steps[0]


TASKS: dict[str, TaskType] = {t.name: t for t in (
    TaskType("pairwise", "Compare two answers, then rate each", ("pairwise", "rating")),
    TaskType("single", "Rate one answer", ("single",)),
    TaskType("mcq", "Answer the question, then judge the key", ("blind", "seen")),
    TaskType("ddx", "Rank the differential diagnosis", ("ddx",)),
    TaskType("rank-documents", "Rank the answer among documents", ("rank",)),
)}


def task_type_of(name: str) -> TaskType:
    """The task type called ``name`` (an :class:`InputError` listing the names otherwise)."""
    if name not in TASKS:
        raise InputError("unknown task type", column="task", value=name, allowed=", ".join(TASKS))
    return TASKS[name]


def parse_scale(scale: str | Sequence[str] | None) -> list[str]:
    """Ordered levels, worst first, from ``"a,b,c"`` or a list: 2-10 distinct non-empty names of at most 40
    characters (default :data:`DEFAULT_SCALE`)."""
    if scale is None or (isinstance(scale, str) and not scale.strip()):
        return list(DEFAULT_SCALE)
    levels = [" ".join(str(v).split()) for v in (scale.split(",") if isinstance(scale, str) else scale)]
    if any(not v for v in levels) or not 2 <= len(levels) <= 10 or len(set(levels)) != len(levels) or \
            any(len(v) > 40 or v == "na" for v in levels):
        raise InputError("bad scale", column="scale", value=",".join(levels),
                         allowed="2 to 10 distinct comma-separated level names, worst first, at most 40 characters "
                                 "each ('na' is reserved for 'unable to judge'), e.g. incorrect,partial,correct")
    return levels


def read_conditions(path: str | Path) -> list[str]:
    """Condition names, one per line (blank lines at the end ignored): distinct, non-empty, at most 200
    characters; the order is kept (it is the condition index of the ``stableval ddx`` export)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found", file=source, allowed="a text file with one condition per line") from None
    except UnicodeDecodeError as error:
        raise InputError(f"file is not UTF-8 text ({error.reason})", file=source) from None
    return parse_conditions(text, source)


def parse_conditions(text: str, source: str) -> list[str]:
    """The checks of :func:`read_conditions` on text already read (the admin form's text box or upload);
    ``source`` names it in messages.

    >>> parse_conditions("Eczema\\nPsoriasis\\n\\n", "list")
    ['Eczema', 'Psoriasis']
    """
    lines = text.removeprefix("\ufeff").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    names = [" ".join(line.split()) for line in lines]
    seen: dict[str, int] = {}
    for row, name in enumerate(names, start=1):
        if not name or len(name) > 200:
            raise InputError("empty or too long condition name", file=source, row=row, value=name[:40],
                             allowed="one condition name (1-200 characters) per line")
        if name.casefold() in seen:
            raise InputError(f"condition repeats line {seen[name.casefold()]}", file=source, row=row, value=name,
                             allowed="each condition once (compared case-insensitively)")
        seen[name.casefold()] = row
    if len(names) < 2:
        raise InputError("too few conditions", file=source, value=len(names), allowed="at least 2 conditions")
    return names


def task_options(task: str, *, scale: str | Sequence[str] | None = None, conditions: Sequence[str] | None = None,
                 max_conditions: int = 5) -> tuple[list[str] | None, dict[str, Any] | None]:
    """The ``(scale, task_options)`` a track of this task type stores; refuses options that do not apply."""
    task_type_of(task)
    if scale is not None and task != "single":
        raise InputError("a scale applies to single-answer tracks only", column="scale", value=scale,
                         allowed="no scale, or --task single")
    if conditions is not None and task != "ddx":
        raise InputError("a condition list applies to ddx tracks only", column="conditions",
                         value=f"{len(conditions)} conditions", allowed="no conditions, or --task ddx")
    if task == "single":
        return parse_scale(scale), None
    if task == "ddx":
        if not conditions:
            raise InputError("a ddx track needs its condition list", column="conditions",
                             allowed="--conditions FILE (one condition per line)")
        if not 1 <= int(max_conditions) <= MAX_CONDITIONS:
            raise InputError("max_conditions out of range", column="max_conditions", value=max_conditions,
                             allowed=f"1 to {MAX_CONDITIONS}")
        return None, {"conditions": list(conditions), "max_conditions": int(max_conditions)}
    return None, None


# ------------------------------------------------------------------------------------------------ reading files
def _records(path: Path, source: str, read_table: Callable[[Path, str], pd.DataFrame]
             ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row, record) per question: JSON Lines parsed as nested JSON, other tables through ``read_table``."""
    from stableval.data.files import iter_jsonl

    if path.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            for row, value in iter_jsonl(path, allowed="one JSON object per question"):
                if not isinstance(value, dict):
                    raise InputError("not a JSON object", file=source, row=row, value=type(value).__name__,
                                     allowed="one JSON object per question")
                yield row, {str(k).strip().lower(): v for k, v in value.items()}
        except InputError as error:
            if error.file == source:
                raise
            raise InputError(error.problem.replace(str(path), source), file=source, row=error.row,
                             column=error.column, value=error.value, allowed=error.allowed,
                             has_value=error.has_value) from None
        return
    frame = read_table(path, source)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    for row, record in enumerate(frame.to_dict("records"), start=1):
        yield row, {str(k): ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                    for k, v in record.items()}


def _text(record: dict[str, Any], column: str, row: int, source: str, *, required: bool, width: int = _MAX_TEXT,
          allowed: str = "non-empty text") -> str:
    value = record.get(column, "")
    if value is None:
        value = ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, dict | list):
        raise InputError("not text", file=source, row=row, column=column, value=json.dumps(value)[:40],
                         allowed=allowed)
    text = str(value)
    if required and not text.strip():
        raise InputError("empty value", file=source, row=row, column=column, value="", allowed=allowed)
    if len(text) > width:
        raise InputError(f"text too long ({len(text):,} characters)", file=source, row=row, column=column,
                         value=text[:40] + "…", allowed=f"at most {width:,} characters")
    return text


def _common(record: dict[str, Any], row: int, source: str, normalise_group: Callable[[Any], str]
            ) -> dict[str, Any]:
    """The columns every task has: id, prompt, reference, specialty, subspecialty."""
    return {"external_id": _text(record, "id", row, source, required=True, width=200).strip(),
            "prompt": _text(record, "prompt", row, source, required=True),
            "reference": _text(record, "reference", row, source, required=False),
            "specialty": normalise_group(_text(record, "specialty", row, source, required=False, width=100)),
            "subspecialty": normalise_group(_text(record, "subspecialty", row, source, required=False, width=100)),
            "model_a": "", "answer_a": "", "model_b": "", "answer_b": "", "payload": None}


def _answer(record: dict[str, Any], column: str, row: int, source: str) -> str:
    text = _text(record, column, row, source, required=True)
    problem = transcript_problem(text)
    if problem:
        raise InputError(problem, file=source, row=row, column=column, value=text[:40],
                         allowed="Markdown text, or a JSON list of messages {role, content, reasoning?, "
                                 "tool_calls?} (see docs/portal.md, 'Transcripts')")
    return text


def _single(record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]) -> dict[str, Any]:
    out = _common(record, row, source, normalise)
    out["model_a"] = _text(record, "model", row, source, required=True, width=200).strip()
    out["answer_a"] = _answer(record, "answer", row, source)
    return out


def _mcq(record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]) -> dict[str, Any]:
    out = _common(record, row, source, normalise)
    raw = record.get("options")
    if raw not in (None, ""):
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raw = None
        if not isinstance(raw, dict):
            raise InputError("options is not a JSON object", file=source, row=row, column="options",
                             value=str(record.get("options"))[:40], allowed='{"A": "text", "B": "text", ...}')
        options = {str(k).strip().upper(): v for k, v in raw.items()}
        column_of = {letter: "options" for letter in options}
    else:
        options = {letter: record[letter.lower()] for letter in LETTERS if str(record.get(letter.lower(), "")).strip()}
        column_of = {letter: letter for letter in options}
    letters = list(options)
    if letters != list(LETTERS[:len(letters)]) or len(letters) < 2:
        raise InputError("options must be A, B[, C, D] in order, with no gaps", file=source, row=row,
                         column="options" if "options" in record else "A", value=",".join(letters),
                         allowed="2 to 4 options lettered A, B, C, D (the letters stableval medqa reads)")
    texts = {}
    for letter in letters:
        value = options[letter]
        if not isinstance(value, str | int | float) or not str(value).strip() or len(str(value)) > 10_000:
            raise InputError(f"option {letter} is empty, not text or too long", file=source, row=row,
                             column=column_of[letter], value=str(value)[:40], allowed="text of 1-10,000 characters")
        texts[letter] = str(value)
    key = str(record.get("answer_idx", "")).strip().upper()
    if key not in letters:
        raise InputError("the key is not one of the options", file=source, row=row, column="answer_idx",
                         value=record.get("answer_idx", ""), allowed=", ".join(letters))
    out["payload"] = {"options": texts, "key": key}
    return out


def _ddx(record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]) -> dict[str, Any]:
    return _common(record, row, source, normalise)


def _rank_documents(record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]) -> dict[str, Any]:
    out = _common(record, row, source, normalise)
    items = record.get("items")
    if isinstance(items, str):
        try:
            items = json.loads(items)
        except ValueError:
            items = None
    if not isinstance(items, list) or not 2 <= len(items) <= MAX_ITEMS:
        raise InputError("items must be a list of 2 to 20 objects", file=source, row=row, column="items",
                         value=(f"{len(items)} items" if isinstance(items, list) else str(record.get("items"))[:40]),
                         allowed='[{"id": ..., "text": ..., "kind": "answer"|"document"}, ...] with 2-20 items')
    clean, seen = [], set()
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        if not isinstance(item, dict):
            raise InputError(f"{where} is not an object", file=source, row=row, column="items", value=str(item)[:40],
                             allowed='{"id", "text", "kind"[, "model", "grade"]}')
        item_id = str(item.get("id", "")).strip()
        if not item_id or len(item_id) > 200 or item_id in seen:
            raise InputError(f"{where}: id empty, too long or repeated", file=source, row=row, column="items",
                             value=item_id[:40], allowed="ids unique within the question, 1-200 characters")
        seen.add(item_id)
        text = item.get("text")
        if not isinstance(text, str) or not text.strip() or len(text) > _MAX_TEXT:
            raise InputError(f"{where} ({item_id}): text empty, not text or too long", file=source, row=row,
                             column="items", value=str(text)[:40], allowed=f"text of 1-{_MAX_TEXT:,} characters")
        problem = transcript_problem(text)
        if problem:
            raise InputError(f"{where} ({item_id}): {problem}", file=source, row=row, column="items",
                             value=text[:40], allowed="Markdown text or a valid transcript")
        kind = item.get("kind")
        if kind not in ("answer", "document"):
            raise InputError(f"{where} ({item_id}): unknown kind", file=source, row=row, column="items",
                             value=kind, allowed="answer or document")
        grade = item.get("grade")
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int | float)
                                  or not math.isfinite(grade)):
            raise InputError(f"{where} ({item_id}): grade is not a number", file=source, row=row, column="items",
                             value=grade, allowed="a number (the document's known relevance grade) or no grade")
        model = item.get("model")
        if model is not None and (not isinstance(model, str) or len(model) > 200):
            raise InputError(f"{where} ({item_id}): model is not text", file=source, row=row, column="items",
                             value=str(model)[:40], allowed="the answer's model name (text)")
        clean.append({"id": item_id, "text": text, "kind": kind, "model": model or "", "grade": grade})
    unknown = set(record) - {"id", "prompt", "items", "specialty", "subspecialty", "reference", "gold"}
    if unknown:
        raise InputError("unknown field(s)", file=source, row=row, value=sorted(unknown),
                         allowed="id, prompt, items, specialty (and optionally subspecialty, reference, gold)")
    out["payload"] = {"items": clean}
    return out


_READERS = {"single": _single, "mcq": _mcq, "ddx": _ddx, "rank-documents": _rank_documents}
_REQUIRED = {"single": ("id", "prompt", "model", "answer"), "mcq": ("id", "prompt", "answer_idx"),
             "ddx": ("id", "prompt"), "rank-documents": ("id", "prompt", "items")}


def import_task_questions(db: Database, slug: str, path: str | Path, *, source: str | None = None,
                          task: str | None = None, read_table: Callable[[Path, str], pd.DataFrame],
                          normalise: Callable[[Any], str]) -> int:
    """Import the questions of a task-type track, all or nothing; returns the count. Called by
    :func:`stableval.portal.manage.import_questions` (the entry point for every task type), which passes its table
    reader and specialty normalisation. ``task``, when given, must be the track's task type."""
    source = source or str(path)
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
    if track is None:
        raise InputError("no such track", value=slug, allowed="an existing track (create it first)")
    if task is not None and task != track.task_type:
        raise InputError(f"track {slug!r} is a {track.task_type} track", column="task", value=task,
                         allowed=track.task_type)
    reader = _READERS[track.task_type]
    rows: list[dict[str, Any]] = []
    ids: dict[str, int] = {}
    for row, record in _records(Path(path), source, read_table):
        missing = [c for c in _REQUIRED[track.task_type] if c not in record]
        if track.task_type == "mcq" and "options" not in record and "a" not in record:
            missing.append("options (or columns A, B, C, D)")
        if missing:
            raise InputError(f"missing column(s): {', '.join(missing)}", file=source, row=row, value=sorted(record),
                             allowed=f"a {track.task_type} question file (see docs/portal.md)")
        question = reader(record, row, source, normalise)
        gold = parse_task_gold(track.task_type, record.get("gold"), criteria=list(track.criteria),
                               scale=track.scale, conditions=(track.task_options or {}).get("conditions"),
                               payload=question["payload"], source=source, row=row)
        if gold is not None:  # a gold (attention-check) question: stableval.portal.task_gold
            question["payload"] = {**(question["payload"] or {}), "gold": gold}
            question["gold"] = GOLD_MARK
        if question["external_id"] in ids:
            raise InputError(f"id repeats row {ids[question['external_id']]}", file=source, row=row, column="id",
                             value=question["external_id"], allowed="one row per question id")
        ids[question["external_id"]] = row
        rows.append(question)
    if not rows:
        raise InputError("no rows", file=source, allowed="one row per question")
    with db.writing() as session:
        existing = set(session.scalars(select(Question.external_id).where(Question.track_id == track.id)))
        clash = [q for q in rows if q["external_id"] in existing]
        if clash:
            raise InputError(f"question id already in track {slug!r} ({len(clash)} row(s) in all)", file=source,
                             row=ids[clash[0]["external_id"]], column="id", value=clash[0]["external_id"],
                             allowed="new ids (retire or rename the old question)")
        now = utcnow()
        session.execute(Question.__table__.insert(), [  # type: ignore[attr-defined]
            {"gold": "", **q, "track_id": track.id, "retired": False, "created_at": now} for q in rows])
    return len(rows)
