"""``pairwise`` (the default): compare two models' answers per criterion (A better, B better, tie, neither), then
rate each answer 1-5, consistently with the choice (:mod:`stableval.portal.tasks.rules`).

* **Question file**: ``id, prompt, model_a, answer_a, model_b, answer_b`` [``reference, specialty, subspecialty,
  gold``], checked column by column for the whole file at once; the answers may be agent transcripts.
* **Draft**: ``{"pairwise": {criterion: "a"|"b"|"tie"|"neither"}, "reasons": {criterion: text}, "ratings_a":
  {criterion: "1".."5"|"na"}, "ratings_b": {...}}`` beside the shared flag and clocks; the claim writes the draft
  with step 1 shown, and a completed step 1 marks step 2 shown (so the question pages only read).
* **Stored answer**: one :class:`~stableval.portal.store.models.Judgment` per criterion (choice about the answers
  as shown, reason, both ratings) and the time on each step; A/B follow the assignment's counterbalancing.
* **Gold**: ``a``, ``b``, ``tie`` or ``neither`` about the file's models; one gold judgment per criterion,
  counterbalancing undone.
* **Export**: the annotation or pairwise table (:mod:`stableval.portal.tasks.judgments`): ``stableval score``.
* **Results**: agreement and leaderboards per criterion (:mod:`stableval.portal.tasks.pairwise_results`).
* **Ratings**: the 1-5 ratings for live diagnostics; the step-1 choices for adaptive assignment.

>>> TASK.step_url(7, "rating"), TASK.first_step
('/a/7/rating', 'pairwise')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import insert
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Judgment, Question, Submission, Track
from stableval.portal.tasks.base import MAX_REASON, Export, GoldRows, Ratings, TaskType
from stableval.portal.tasks.judgments import (
    EXPORT_KINDS,
    GOLD_CHOICES,
    RATING_LEVELS,
    choice_table,
    export_judgments,
    gold_judgments,
)
from stableval.portal.tasks.records import MAX_TEXT, question_records
from stableval.portal.tasks.rules import (
    CHOICE_LABELS,
    CHOICES,
    RATINGS,
    Violation,
    check_pairwise,
    check_ratings,
    live_rules,
    rule_hint,
)
from stableval.portal.tasks.transcripts import transcript_problem

if TYPE_CHECKING:
    from stableval.data.table import AnnotationTable

__all__ = ["CHOICE_OPTIONS", "QUESTION_COLUMNS", "RATING_OPTIONS", "TASK", "PairwiseTask"]

#: Question file columns: required first, then optional (matched case-insensitively).
QUESTION_COLUMNS: dict[str, bool] = {"id": True, "prompt": True, "model_a": True, "answer_a": True,
                                     "model_b": True, "answer_b": True, "reference": False, "specialty": False,
                                     "subspecialty": False, "gold": False}
#: The radio options of step 1 and step 2 (value, label), for :func:`stableval.portal.tasks.render.radio_options`.
CHOICE_OPTIONS = tuple(CHOICE_LABELS.items())
RATING_OPTIONS = tuple((r, "Unable to judge" if r == "na" else r) for r in RATINGS)


def _too_long(draft: dict[str, Any], criteria: list[dict[str, str]]) -> list[Violation]:
    """Reasons longer than :data:`~stableval.portal.tasks.base.MAX_REASON` are refused with a message (never cut
    silently)."""
    out = [Violation(c["key"], f"why-{c['key']}", f"{c['label']}: the reason has "
                     f"{len(draft['reasons'][c['key']]):,} characters; shorten it to at most {MAX_REASON:,}.")
           for c in criteria if len(draft["reasons"].get(c["key"], "")) > MAX_REASON]
    if draft["flag"] and len(draft["flag_reason"]) > MAX_REASON:
        out.append(Violation("flag", "flag_reason", f"The reason for the flag has {len(draft['flag_reason']):,} "
                                                    f"characters; shorten it to at most {MAX_REASON:,}."))
    return out


def _rating(value: str) -> int | None:
    return None if value == "na" else int(value)


def _cell_text(value: Any) -> str:
    """A cell as text: empty for a missing one, a whole number read as a float without ``.0`` (as every task type
    reads cells).

    >>> [_cell_text(v) for v in (None, float("nan"), 3.0, 2.5, "x")]
    ['', '', '3', '2.5', 'x']
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0]) + 1


@dataclass(frozen=True)
class PairwiseTask(TaskType):
    """Compare two answers per criterion, then rate each."""

    def example_question(self, number: int) -> dict[str, Any]:
        return {"id": f"q{number}", "prompt": f"Question {number}?", "model_a": "model-x",
                "answer_a": f"Answer **{number}** of x.", "model_b": "model-y", "answer_b": f"Answer {number} of y."}

    def example_gold(self, number: int) -> Any:
        return ("a", "b", "tie")[number % 3]

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        keys = [c["key"] for c in track.criteria]
        if step == "pairwise":
            return {f"pw-{key}": "ab"[question.id % 2] for key in keys}
        return {**{f"ra-{key}": "4" for key in keys}, **{f"rb-{key}": "4" for key in keys}}

    # ------------------------------------------------------------------------------------------ question files
    def read_questions(self, path: Path, source: str, track: Track,
                       read_table: Callable[[Path, str], pd.DataFrame],
                       normalise: Callable[[Any], str]) -> list[dict[str, Any]]:
        """The whole file at once, column by column (each message counts the rows in all). The records are read
        as every type reads them (:func:`~stableval.portal.tasks.records.question_records`: JSON Lines as JSON, a
        column named twice or a control character refused); a cell must be text or a number."""
        records = list(question_records(path, source, read_table))
        if not records:
            raise InputError("no rows", file=source, allowed="one row per question")
        columns = list(dict.fromkeys(key for _, record in records for key in record))
        missing = [name for name, required in QUESTION_COLUMNS.items() if required and name not in columns]
        if missing:
            raise InputError(f"missing column(s): {', '.join(missing)}", file=source, value=columns,
                             allowed="columns " + ", ".join(QUESTION_COLUMNS) + " (the last four optional)")
        for row, record in records:
            nested = next((name for name in QUESTION_COLUMNS if isinstance(record.get(name), dict | list)), None)
            if nested is not None:
                raise InputError("not text", file=source, row=row, column=nested,
                                 value=json.dumps(record[nested])[:40], allowed="text (or a number)")
        table = pd.DataFrame([record for _, record in records], columns=columns)
        frame = pd.DataFrame({name: (table[name].map(_cell_text) if name in columns else "")
                              for name in QUESTION_COLUMNS}, index=table.index).reset_index(drop=True)
        for name, required in QUESTION_COLUMNS.items():
            if required:
                frame[name] = frame[name].str.strip() if name in ("id", "model_a", "model_b") else frame[name]
                empty = (frame[name].str.strip() == "").to_numpy()
                if empty.any():
                    raise InputError(f"empty value ({int(empty.sum())} row(s) in all)", file=source,
                                     row=_first(empty), column=name, value="", allowed="non-empty text")
        same = (frame["model_a"] == frame["model_b"]).to_numpy()
        if same.any():
            row = _first(same)
            raise InputError("model_a and model_b are the same", file=source, row=row, column="model_b",
                             value=frame["model_b"].iloc[row - 1], allowed="two different models")
        too_long = [(name, width) for name, width in (("id", 200), ("model_a", 200), ("model_b", 200),
                                                      ("specialty", 100), ("subspecialty", 100))
                    if (frame[name].str.len() > width).any()]
        if too_long:
            name, width = too_long[0]
            row = _first((frame[name].str.len() > width).to_numpy())
            raise InputError("value too long", file=source, row=row, column=name,
                             value=frame[name].iloc[row - 1][:40], allowed=f"at most {width} characters")
        for name in ("prompt", "answer_a", "answer_b", "reference"):
            huge = (frame[name].str.len() > MAX_TEXT).to_numpy()
            if huge.any():
                row = _first(huge)
                raise InputError(f"text too long ({len(frame[name].iloc[row - 1]):,} characters; "
                                 f"{int(huge.sum())} row(s) in all)", file=source, row=row, column=name,
                                 value=frame[name].iloc[row - 1][:40] + "…",
                                 allowed=f"at most {MAX_TEXT:,} characters (shorten or split the text)")
        for name in ("answer_a", "answer_b"):  # agent transcripts (JSON lists of messages) must be well formed
            maybe = frame[name].str.lstrip().str.startswith("[").to_numpy()
            for at in np.flatnonzero(maybe):
                problem = transcript_problem(frame[name].iloc[at])
                if problem:
                    raise InputError(problem, file=source, row=int(at) + 1, column=name,
                                     value=frame[name].iloc[at][:40], allowed="Markdown text, or a JSON list of "
                                     "messages {role, content, reasoning?, tool_calls?} (see docs/portal.md)")
        repeated = frame["id"].duplicated(keep="first").to_numpy()
        if repeated.any():
            row = _first(repeated)
            raise InputError("id repeats an earlier row", file=source, row=row, column="id",
                             value=frame["id"].iloc[row - 1], allowed="one row per question id")
        frame["gold"] = frame["gold"].str.strip().str.lower()
        bad_gold = (~frame["gold"].isin(("", *GOLD_CHOICES))).to_numpy()
        if bad_gold.any():
            row = _first(bad_gold)
            raise InputError("unknown gold answer", file=source, row=row, column="gold",
                             value=frame["gold"].iloc[row - 1],
                             allowed="empty (not a gold question), a, b, tie or neither (about model_a / model_b)")
        frame["specialty"] = frame["specialty"].map(normalise)
        frame["subspecialty"] = frame["subspecialty"].map(normalise)
        rows = frame.rename(columns={"id": "external_id"}).to_dict("records")
        return [{str(k): v for k, v in r.items()} for r in rows]

    # ------------------------------------------------------------------------------------------ gold questions
    def gold_text(self, track: Track, question: Question) -> str:
        return str(question.gold)

    def gold_rows(self, session: Session, track: Track, rater_ids: list[int] | None) -> GoldRows:
        return gold_judgments(session, track, rater_ids)

    def gold_judgments(self, gold: Any, criteria: list[str]) -> int:
        return len(criteria)  # one per criterion

    # ------------------------------------------------------------------------------------------ the rater's form
    def claim_draft(self, now_iso: str) -> dict[str, Any] | None:
        """The claim marks step 1 shown (time on task starts one redirect before the page, which then only
        reads)."""
        return {"opened": {"pairwise": now_iso}}

    def merge_form(self, draft: dict[str, Any], form: Any, track: Track, question: Question, step: str,
                   action: str) -> dict[str, Any]:
        draft = {**draft}
        keys = [c["key"] for c in track.criteria]
        if step == "pairwise":
            draft["pairwise"] = {**draft["pairwise"], **{k: form.get(f"pw-{k}") for k in keys
                                                          if form.get(f"pw-{k}") in CHOICES}}
            draft["reasons"] = {**draft["reasons"], **{k: str(form.get(f"why-{k}")) for k in keys
                                                        if form.get(f"why-{k}") is not None}}
            draft["flag"] = form.get("flag") == "on"
            if form.get("flag_reason") is not None:
                draft["flag_reason"] = str(form.get("flag_reason"))
        elif step == "rating":
            for side in ("a", "b"):
                field = f"ratings_{side}"
                draft[field] = {**draft[field], **{k: form.get(f"r{side}-{k}") for k in keys
                                                    if form.get(f"r{side}-{k}") in RATINGS}}
        return draft

    def after_next(self, draft: dict[str, Any], step: str, now: datetime) -> None:
        """Step 2 is shown next: its page then only reads (its time on task starts here)."""
        if step == "pairwise" and not draft["flag"] and "rating" not in draft["opened"]:
            draft["opened"] = {**draft["opened"], "rating": now.isoformat()}

    def problems(self, draft: dict[str, Any], track: Track, question: Question, step: str) -> list[Violation]:
        criteria = list(track.criteria)
        if step == "pairwise":
            too_long = _too_long(draft, criteria)
            if too_long:
                return too_long
            if draft["flag"]:
                if not draft["flag_reason"].strip():
                    return [Violation("flag", "flag_reason", "Say why the question does not make sense or is not "
                                                             "relevant.")]
                return []
            return check_pairwise(criteria, draft["pairwise"])
        problems = _too_long(draft, criteria) or check_pairwise(criteria, draft["pairwise"])
        if problems:
            return problems
        return check_ratings(criteria, track.rules, draft["pairwise"], draft["ratings_a"], draft["ratings_b"])

    def open_step(self, draft: dict[str, Any], track: Track, question: Question, before: str | None
                  ) -> str | None:
        """Step 1 until it is complete; step 2 only when not flagged (a flagged question skips it)."""
        if before == "pairwise":
            return None
        if self.problems(draft, track, question, "pairwise") or (before == "rating" and draft["flag"]):
            return "pairwise"
        if before is None and not draft["flag"] and self.problems(draft, track, question, "rating"):
            return "rating"
        return None

    def submit_problems(self, draft: dict[str, Any], track: Track, question: Question) -> list[Violation]:
        problems = self.problems(draft, track, question, "pairwise")
        if not draft["flag"] and not problems:
            problems = self.problems(draft, track, question, "rating")
        return problems

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Answers as shown (A/B follow the counterbalancing recorded on the assignment), the rule hints and the
        rules the rating page applies as the rater clicks (:func:`~stableval.portal.tasks.rules.live_rules`)."""
        shown = {"answer_a": question.answer_b, "answer_b": question.answer_a} if assignment.swapped else \
            {"answer_a": question.answer_a, "answer_b": question.answer_b}
        return {"assignment": assignment, "question": question, "track": track, "draft": draft,
                "criteria": track.criteria, "choices": CHOICE_LABELS, "ratings": RATINGS,
                "choice_options": CHOICE_OPTIONS, "rating_options": RATING_OPTIONS, "task_type": self,
                "hints": {c["key"]: rule_hint(draft["pairwise"].get(c["key"]), track.rules) for c in track.criteria},
                "live": {c["key"]: live_rules(draft["pairwise"].get(c["key"]), track.rules) for c in track.criteria},
                **shown}

    def store_answer(self, session: Session, submission: Submission, draft: dict[str, Any], track: Track,
                     question: Question) -> None:
        """The time on each step, and one judgment per criterion (one statement)."""
        times = draft["time_ms"]
        submission.time_pairwise_ms = int(times.get("pairwise", 0))
        submission.time_rating_ms = int(times.get("rating", 0))
        session.flush()
        if not draft["flag"]:
            session.execute(insert(Judgment.metadata.tables["judgments"]), [dict(
                submission_id=submission.id, criterion=c["key"], choice=draft["pairwise"][c["key"]],
                reason=draft["reasons"].get(c["key"], ""),
                rating_a=_rating(draft["ratings_a"][c["key"]]), rating_b=_rating(draft["ratings_b"][c["key"]]),
            ) for c in track.criteria])

    # ------------------------------------------------------------------------------------------ analyses
    def export(self, db: Database, track: Track, *, kind: str | None = None, criterion: str | None = None,
               rater: str | None = None) -> Export:
        return export_judgments(db, kind or EXPORT_KINDS[0], track=track.slug, criterion=criterion, rater=rater)

    def analysis_command(self, result: Export, path: str) -> str:
        return f"stableval score {path} --levels {','.join(RATING_LEVELS)}"

    def results(self, db: Database, slug: str, criterion: str | None = None) -> tuple[str, dict[str, Any]]:
        from stableval.portal.tasks.pairwise_results import display_tables, track_results

        res = track_results(db, slug, criterion or None)
        return self.templates["results"], {"res": res, "tables": display_tables(res)}

    def ratings(self, db: Database, track: Track) -> Ratings:
        """The 1-5 ratings (the annotation export; responses are (question, model · criterion))."""
        frame = export_judgments(db, "annotations", track=track.slug).frame
        if not frame.empty:
            frame = frame.assign(agent=frame["agent"].astype(str) + " · " + frame["criterion"].astype(str))
        return Ratings(frame, RATING_LEVELS)

    def adaptive_table(self, db: Database, track: Track) -> tuple[AnnotationTable, np.ndarray, np.ndarray]:
        """The step-1 choices about the file's models (levels a, b, tie, neither)."""
        return choice_table(db, track.id)


TASK = PairwiseTask(
    name="pairwise", title="Compare two answers, then rate each", label="pairwise", steps=("pairwise", "rating"),
    templates={"pairwise": "pairwise.html", "rating": "rating.html", "confirm": "confirm.html",
               "results": "results.html"},
    columns=tuple(name for name, required in QUESTION_COLUMNS.items() if required),
    question_file="CSV, TSV, JSONL or Parquet with columns id, prompt, model_a, answer_a, model_b, answer_b (and "
                  "optionally reference, specialty, subspecialty, and gold: the known answer a, b, tie or neither "
                  "of a quality-control question)",
    gold_rule="A gold judgment is one criterion's choice (a, b, tie, neither; counterbalancing undone).",
    analysis="stableval score --levels 1,2,3,4,5", adaptive=True, categorical=True, per_criterion=True,
    export_kinds=EXPORT_KINDS, step_path="", ratings_help="1–5 ratings",
    draft_fields={"pairwise": {}, "ratings_a": {}, "ratings_b": {}},
    results_title="agreement and leaderboards per criterion")
