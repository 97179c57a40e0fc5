"""The task-type protocol: what every kind of rater task declares (its capabilities, as fields) and does (its
question file, form, checks, stored answer, gold answers, export, results and ratings), so the rest of the portal
asks the track's type instead of branching on its name.

A task type is a :class:`TaskType` (sub)class instance, ``TASK = ...`` in its own module of this package, listed
once in :data:`stableval.portal.tasks.registry.TASK_MODULES`, with its page templates in ``portal/templates``.
The defaults here are those of a type whose answer is a JSON object stored with the submission
(``Submission.payload``) and whose question file is read one record at a time; the original pairwise type
overrides the parts that live in its own tables (judgments).

The draft (:mod:`stableval.portal.work.flow`) keeps a type's answer under ``draft["task"]``; the "does not make
sense" flag (``flag``, ``flag_reason``), the per-criterion reasons (``reasons``) and the step clocks (``opened``,
``time_ms``) are shared by every type.

>>> from stableval.portal.tasks.registry import TASKS
>>> TASKS["mcq"].steps, TASKS["single"].first_step, TASKS["ddx"].ordering
(('blind', 'seen'), 'single', True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.settings import TrackSettings
from stableval.portal.store.answers import confirmed_answers, left_out_notes
from stableval.portal.store.models import Question, Submission, Track
from stableval.portal.tasks.records import GOLD_MARK, blank, maybe_json, question_records
from stableval.portal.tasks.rules import Violation
from stableval.portal.tasks.summary import task_summary

if TYPE_CHECKING:
    from stableval.data.table import AnnotationTable
    from stableval.portal.store.db import Database
    from stableval.portal.store.models import Assignment
    from stableval.portal.tasks.ordering import RankingRecords

__all__ = ["MAX_REASON", "Export", "GoldRows", "Ratings", "TaskExport", "TaskType"]

#: Longest free-text reason kept (characters); longer text is refused with a message, never cut silently.
MAX_REASON = 5000
#: (rater id, submission id, gold judgments, correct ones) per gold submission or judgment, as arrays.
GoldRows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Export:
    """An exported table and what was left out of it; a task type's export also names its type, and may carry
    the ``stableval ddx`` selectors with their condition names and case ids, or the scale of its labels."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    task: str = ""
    selectors: list[list[list[list[int]]]] | None = None
    conditions: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    scale: tuple[str, ...] = ()


#: The export of a task-type track (the same record as :class:`Export`).
TaskExport = Export


@dataclass(frozen=True)
class Ratings:
    """A track's confirmed answers as categorical ratings (the input of the rater model: live diagnostics,
    adaptive assignment). ``frame``: one row per rating, columns ``question_id, item, model, agent, criterion,
    rater_id, rater, label`` (``label`` one of ``levels``)."""

    frame: pd.DataFrame
    levels: tuple[str, ...]


RATING_COLUMNS = ["question_id", "item", "model", "agent", "criterion", "rater_id", "rater", "label"]


def _flag_problems(draft: dict[str, Any]) -> list[Violation] | None:
    """The flag's problems (a too long reason; a flag without a reason), ``[]`` when flagged properly, None when
    not flagged (the step's own checks apply)."""
    if len(draft.get("flag_reason") or "") > MAX_REASON:
        return [Violation("flag", "flag_reason", f"The reason for the flag has {len(draft['flag_reason']):,} "
                                                 f"characters; shorten it to at most {MAX_REASON:,}.")]
    if draft.get("flag"):
        if not str(draft.get("flag_reason") or "").strip():
            return [Violation("flag", "flag_reason", "Say why the question does not make sense or is not relevant.")]
        return []
    return None


@dataclass(frozen=True)
class TaskType:
    """A task type: its capabilities (fields) and behaviour (methods; defaults for a type whose answer is stored
    as the submission's JSON payload).

    Attributes:
        name: what ``--task`` and the question files call it.
        title: what the admin's "New track" form says it asks of raters.
        label: how messages name its tracks ("a scale applies to single-answer tracks only").
        steps: the steps of its rater form, in order (the confirm page follows).
        templates: the page template of each step, and of ``confirm``, ``results`` and, optionally, ``answer`` (the
            answer as the confirm page shows it; default: each field of the draft's answer).
        columns: the columns every question file must have.
        question_file: what the admin's import form says the file holds.
        gold_rule: how a gold judgment is scored (the admin's quality-control section).
        analysis: the command that analyses its export (the results page names it).
        settings: the track settings only this type reads (refused on tracks of other types).
        adaptive: adaptive assignment applies (its answers are read by a rater model: categorical ratings, or
            rankings).
        categorical: its answers are categorical ratings (live rater diagnostics fit the rater model).
        nominal: those ratings are unordered labels (no leniency, strictness, over/under-rating).
        ordering: its answers are rankings (the rater-aware ranking model reads them, not the categorical one).
        per_criterion: the export has one table per criterion (``--criterion``).
        autosave: the page script saves the form on every change.
        export_kinds: the tables a download may choose (``--kind``); empty: the type's one format.
        step_path: the part of a step's address between ``/a/<id>/`` and the step.
        ratings_help: what the live diagnostics fit, in words (the admin's track page).
        draft_fields: draft fields of its own beside the shared ones, with their empty values.
        results_title: what its results page shows (the admin's link to it).
        example_settings: the type's own track settings of a working example (with :meth:`example_question`,
            :meth:`example_answer` and :meth:`example_gold`: the registry's and the fuzz tests run every type through
            the portal with them).
    """

    name: str
    title: str
    label: str
    steps: tuple[str, ...]
    templates: Mapping[str, str]
    columns: tuple[str, ...]
    question_file: str
    gold_rule: str
    analysis: str
    settings: tuple[str, ...] = ()
    adaptive: bool = False
    categorical: bool = False
    nominal: bool = False
    ordering: bool = False
    per_criterion: bool = False
    autosave: bool = True
    export_kinds: tuple[str, ...] = ()
    step_path: str = "task/"
    ratings_help: str = ""
    draft_fields: Mapping[str, Any] = field(default_factory=dict)
    results_title: str = "summary of the answers"
    example_settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def first_step(self) -> str:
        return self.steps[0]

    def step_url(self, assignment_id: int, step: str) -> str:
        """Address of a step (or ``confirm``) of an assignment of this type."""
        return f"/a/{assignment_id}/{self.step_path}{step}"

    # ------------------------------------------------------------------------------------------ track settings
    def track_options(self, settings: TrackSettings) -> tuple[list[str] | None, dict[str, Any] | None]:
        """The ``(scale, task_options)`` a track of this type stores, from the settings it reads."""
        return None, None

    def read_setting(self, name: str, text: str, source: str) -> Any:
        """A text-file setting of this type (its ``settings``) from text typed or uploaded; ``source`` names it in
        messages."""
        raise NotImplementedError(f"{self.name} reads no text-file setting {name!r}")

    def describe_track(self, track: Track) -> str:
        """The type's own settings of a track, in words (the admin's track page)."""
        return ""

    # ------------------------------------------------------------------------------------------ a working example
    def example_question(self, number: int) -> dict[str, Any]:
        """Question ``number`` of an example question file (one JSON Lines record)."""
        raise NotImplementedError

    def example_gold(self, number: int) -> Any:
        """The ``gold`` cell that makes example question ``number`` a gold question (a valid known answer)."""
        raise NotImplementedError

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        """Form fields that complete ``step`` of an example question (the answers vary with the question)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------ question files
    def missing_columns(self, record: Mapping[str, Any]) -> list[str]:
        """Required columns a question record lacks."""
        return [column for column in self.columns if column not in record]

    def read_question(self, record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]
                      ) -> dict[str, Any]:
        """One question record (lower-case keys) as the columns of :class:`~stableval.portal.store.models.Question`
        (``external_id, prompt, reference, specialty, subspecialty, model_a, answer_a, model_b, answer_b,
        payload``); an :class:`InputError` naming the row and column otherwise."""
        raise NotImplementedError

    def read_questions(self, path: Path, source: str, track: Track,
                       read_table: Callable[[Path, str], pd.DataFrame],
                       normalise: Callable[[Any], str]) -> list[dict[str, Any]]:
        """Every question of a file, checked (the first problem raised), as rows of the questions table."""
        rows: list[dict[str, Any]] = []
        ids: dict[str, int] = {}
        for row, record in question_records(path, source, read_table):
            missing = self.missing_columns(record)
            if missing:
                raise InputError(f"missing column(s): {', '.join(missing)}", file=source, row=row,
                                 value=sorted(record), allowed=f"a {self.name} question file (see docs/portal.md)")
            question = self.read_question(record, row, source, normalise)
            gold = self.parse_gold(record.get("gold"), track, question["payload"], source, row)
            if gold is not None:  # a gold (attention-check) question: its answer in the payload
                question["payload"] = {**(question["payload"] or {}), "gold": gold}
                question["gold"] = GOLD_MARK
            if question["external_id"] in ids:
                raise InputError(f"id repeats row {ids[question['external_id']]}", file=source, row=row,
                                 column="id", value=question["external_id"], allowed="one row per question id")
            ids[question["external_id"]] = row
            rows.append({"gold": "", **question})
        return rows

    # ------------------------------------------------------------------------------------------ gold questions
    def parse_gold(self, value: Any, track: Track, payload: dict[str, Any] | None, source: str, row: int) -> Any:
        """The known answer of a ``gold`` cell (None: not a gold question); an :class:`InputError` naming the file,
        row and ``gold`` column when it does not fit the question."""
        if blank(value):
            return None

        def refuse(problem: str, allowed: str, shown: Any = value) -> InputError:
            text = shown if isinstance(shown, str) else json.dumps(shown, default=str)
            return InputError(problem, file=source, row=row, column="gold", value=text[:80], allowed=allowed)

        if hasattr(value, "item") and not isinstance(value, str | dict | list):  # a numpy scalar from a table
            value = value.item()
        if isinstance(value, float) and value.is_integer():  # a level such as 3 read as a number
            value = int(value)
        return self.read_gold(maybe_json(value), track, payload or {}, refuse)

    def read_gold(self, value: Any, track: Track, payload: dict[str, Any], refuse: Callable[..., InputError]
                  ) -> Any:
        """The type's reading of a non-empty gold value (``refuse(problem, allowed)`` builds the error)."""
        raise refuse(f"no gold answers for {self.name} tracks", "no gold column")

    def score_gold(self, gold: Any, answer: dict[str, Any], criteria: list[str]) -> tuple[int, int]:
        """(gold judgments, correct ones) of one confirmed answer (``Submission.payload``) to a gold question."""
        raise ValueError(f"no gold answers for {self.name!r}")

    def gold_judgments(self, gold: Any, criteria: list[str]) -> int:
        """The gold judgments one answer to this gold question gives (a flagged gold question counts as that many,
        all wrong)."""
        return self.score_gold(gold, {}, criteria)[0]

    def describe_gold(self, gold: Any, track: Track) -> str:
        """The known answer as the admin's question table shows it."""
        return str(gold)

    def gold_text(self, track: Track, question: Question) -> str:
        """The known answer of a question ("" for a regular one)."""
        if not question.gold:
            return ""
        gold = (question.payload or {}).get("gold")
        return "" if gold is None else self.describe_gold(gold, track)

    def gold_rows(self, session: Session, track: Track, rater_ids: list[int] | None) -> GoldRows:
        """(rater, submission, judged, correct) per gold submission of the track (only the question's gold answer
        is read, not its texts)."""
        query = (select(Submission.rater_id, Submission.id, Submission.payload, Question.payload["gold"])
                 .join(Question, Submission.question_id == Question.id)
                 .where(Question.track_id == track.id, Question.gold != "", Submission.flagged.is_(False)))
        if rater_ids is not None:
            query = query.where(Submission.rater_id.in_(rater_ids))
        rows = session.execute(query).all()
        keys = [c["key"] for c in track.criteria]
        scores = np.array([self.score_gold(r[3], r[2] or {}, keys) for r in rows], dtype=np.int64).reshape(-1, 2)
        return (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
                scores[:, 0], scores[:, 1])

    # ------------------------------------------------------------------------------------------ the rater's form
    def claim_draft(self, now_iso: str) -> dict[str, Any] | None:
        """The draft written with a new claim (None: the first page writes it)."""
        return None

    def needs_prepare(self, draft: dict[str, Any], step: str) -> bool:
        """Whether showing ``step`` changes the draft (its clock starts)."""
        return step not in draft["opened"]

    def prepare(self, draft: dict[str, Any], rater_id: int, question: Question, step: str) -> bool:
        """Changes a first view makes to the draft (the caller marks the step opened); True when it changed."""
        return False

    def redirect(self, draft: dict[str, Any], step: str) -> str | None:
        """A step to show instead of ``step`` (None: show it)."""
        return None

    def accepts_autosave(self, draft: dict[str, Any], step: str) -> bool:
        """Whether the page script may save ``step``'s form now."""
        return self.autosave and step in self.steps

    def merge_form(self, draft: dict[str, Any], form: Any, track: Track, question: Question, step: str,
                   action: str) -> dict[str, Any]:
        """Copy the step's fields from a submitted form into the draft (values outside what the question allows
        are dropped, never stored). ``action`` is the button pressed."""
        draft = {**draft}
        task = self.merge_step(dict(draft.get("task") or {}), draft, form, track, question, step, action)
        if form.get("flag_reason") is not None:  # the step's form has the flag fieldset
            draft["flag"] = form.get("flag") == "on"
            draft["flag_reason"] = str(form.get("flag_reason"))
        draft["task"] = task
        return draft

    def merge_step(self, task: dict[str, Any], draft: dict[str, Any], form: Any, track: Track, question: Question,
                   step: str, action: str) -> dict[str, Any]:
        """The type's part of :meth:`merge_form`: the new ``draft["task"]`` (``draft`` may take shared fields)."""
        return task

    def after_next(self, draft: dict[str, Any], step: str, now: Any) -> None:
        """Changes a completed step makes to the draft (besides its clock)."""

    def problems(self, draft: dict[str, Any], track: Track, question: Question, step: str) -> list[Violation]:
        """What stops the rater leaving ``step`` (empty list = fine); a flagged question needs only its reason."""
        flagged = _flag_problems(draft)
        if flagged is not None:
            return flagged
        return self.step_problems(draft.get("task") or {}, draft, track, question, step)

    def step_problems(self, task: dict[str, Any], draft: dict[str, Any], track: Track, question: Question,
                      step: str) -> list[Violation]:
        """The type's checks of an unflagged step."""
        return []

    def stay_problems(self, draft: dict[str, Any], track: Track, question: Question, step: str) -> list[Violation]:
        """Problems shown when the rater stays on the step (a save or a move) rather than going on."""
        return []

    def open_step(self, draft: dict[str, Any], track: Track, question: Question, before: str | None
                  ) -> str | None:
        """The first step before ``before`` (None: every step, as for the confirm page) that is not complete: its
        page comes first. A flagged draft needs no step before the one asked for."""
        if before is not None and draft.get("flag"):
            return None
        for step in self.steps:
            if step == before:
                return None
            if self.problems(draft, track, question, step):
                return step
        return None

    def submit_problems(self, draft: dict[str, Any], track: Track, question: Question) -> list[Violation]:
        """What stops a submission: the first incomplete step's problems."""
        return next((found for step in self.steps if (found := self.problems(draft, track, question, step))), [])

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Mapping[str, str] | None = None) -> dict[str, Any]:
        """What the step's template (or ``confirm``) needs."""
        steps = self.steps
        return {"assignment": assignment, "question": question, "track": track, "draft": draft,
                "task": draft.get("task") or {}, "step": step, "criteria": track.criteria, "task_type": self,
                "step_number": steps.index(step) + 1 if step in steps else len(steps), "steps": len(steps),
                "last_step": steps[-1], "back_url": self.step_url(assignment.id, steps[-1])}

    def answer(self, task: dict[str, Any], track: Track, question: Question) -> dict[str, Any]:
        """The answer a confirmed submission stores (what the export reads), from a complete ``draft["task"]``:
        only what the task asks, as validated."""
        raise NotImplementedError

    def store_answer(self, session: Session, submission: Submission, draft: dict[str, Any], track: Track,
                     question: Question) -> None:
        """Record the answer with the new submission (inside the submit's transaction)."""
        if not draft["flag"]:
            submission.payload = {**self.answer(draft.get("task") or {}, track, question),
                                  "time_ms": dict(draft.get("time_ms") or {})}

    # ------------------------------------------------------------------------------------------ analyses
    def export(self, db: Database, track: Track, *, kind: str | None = None, criterion: str | None = None,
               rater: str | None = None) -> Export:
        """The track's confirmed answers in the format its analysis command reads (gold questions and flagged
        submissions left out, counted in the notes); ``rater`` (``rater-7``) keeps one rater's answers."""
        _, frame, flagged, gold = confirmed_answers(db, track.slug)
        if rater is not None:
            if rater not in set(frame["rater"]):
                raise InputError("no answers by this rater in the track", column="rater", value=rater,
                                 allowed=", ".join(sorted(set(frame["rater"]))) or "none yet")
            frame = frame.loc[frame["rater"] == rater].reset_index(drop=True)
        result = self.export_rows(track, frame, left_out_notes(flagged, gold))
        if criterion is not None:
            keys = [c["key"] for c in track.criteria]
            if not self.per_criterion or criterion not in keys:
                raise InputError("no such criterion in the track", column="criterion", value=criterion,
                                 allowed=", ".join(keys) if self.per_criterion else
                                 "no --criterion for this task type")
            chosen = result.frame.loc[result.frame["criterion"] == criterion].reset_index(drop=True)
            result = Export(chosen, result.notes, result.task, scale=result.scale)
        return result

    def export_rows(self, track: Track, frame: pd.DataFrame, notes: list[str]) -> Export:
        """The export of these confirmed answers (:func:`~stableval.portal.store.answers.confirmed_answers`)."""
        raise NotImplementedError

    def analysis_command(self, result: Export, path: str) -> str:
        """The command that analyses the export written to ``path``."""
        return f"{self.analysis} {path}"

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
        """The results page's tables and headline figures of these confirmed answers."""
        return {}, {}

    def results(self, db: Database, slug: str, criterion: str | None = None) -> tuple[str, dict[str, Any]]:
        """The results page of a track: its template and context (cached until the next submission)."""
        return self.templates["results"], {"summary": task_summary(db, slug, self)}

    def ratings(self, db: Database, track: Track) -> Ratings | None:
        """The track's confirmed answers as categorical ratings (gold questions, flagged submissions and
        "unable to judge" left out); None when the answers are not ratings."""
        return None

    def adaptive_table(self, db: Database, track: Track) -> tuple[AnnotationTable, np.ndarray, np.ndarray]:
        """(annotation table of the adaptive model, question id per table item, rater id per table rater): items
        are question ids, agents criteria, raters rater ids. Only the levels used so far are levels of the table
        (an unused level is a latent class free to explain any disagreement, so a split question would look
        certain)."""
        from stableval.data.table import AnnotationTable

        found = self.ratings(db, track)
        frame = found.frame if found is not None else pd.DataFrame(columns=RATING_COLUMNS)
        levels = found.levels if found is not None else ("",)
        used = [level for level in levels if level in set(frame["label"])]
        levels = tuple(used) if len(used) >= 2 else levels
        code = pd.Categorical(frame["label"], categories=list(levels)).codes
        frame = pd.DataFrame({"item": frame["question_id"].astype(np.int64), "agent": frame["criterion"],
                              "rater": frame["rater_id"].astype(np.int64), "label": code})
        table = AnnotationTable.from_frame(frame, levels=levels, source=f"adaptive {track.slug} ratings")
        return (table, np.asarray(table.items, dtype=object).astype(np.int64),
                np.asarray(table.raters, dtype=object).astype(np.int64))

    def rankings(self, track: Track, frame: pd.DataFrame) -> RankingRecords:
        """The confirmed answers (one row each) as partial rankings for the rater-aware ranking model (``ordering``
        types): ``(rater, question id, groups best first)`` per answer, and every option there is (None: the
        options named)."""
        raise NotImplementedError(f"{self.name} answers are not rankings")
