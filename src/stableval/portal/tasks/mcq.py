"""``mcq``: multiple choice answered blind, then judged against the key (the Relabeled MedQA protocol of Saab et al.
2024, arXiv:2404.18416, App. C.2).

* **Question file**: ``id, prompt, A, B[, C, D], answer_idx`` (or JSON Lines with ``options`` as ``{"A": text,
  ...}``): 2 to 4 options lettered A-D in order (the letters ``stableval medqa`` reads), the key in ``answer_idx``.
* **Steps**: ``blind`` (the options without the key: the option(s) the rater thinks correct, or none; whether
  information is missing) then ``seen`` (the key shown: correct, another option, several options, information
  missing; a reason). Step 1's *Next* (complete, not flagged) makes the blind answer final (``blind_final``):
  no page shows the key before (not step 2, nor its error page, nor the confirm page; a flagged question goes back
  to step 1), and no post changes the blind answer after, flagged or not.
* **Draft**: ``{"blind": [letters], "blind_none": bool, "missing": "no"|"minor"|"important", "blind_final": bool,
  "verdict": "correct"|"another"|"several"|"missing", "seen": [letters], "reason": text}``.
* **Gold**: the correct option letter; one judgment, on the **blind** answer: correct when the rater ticked
  exactly that option.
* **Export**: the columns of Relabeled MedQA's ``medqa_relabelling.csv`` (``qid, worker_id, answer_idx,
  blind_answerable, blind_answers, info_missing, important_info_missing, seen_change, seen_answerable,
  seen_answers``; see :mod:`stableval.datasets.medqa`) plus ``verdict, reason, options_shown, track``:
  ``stableval medqa FILE``. The rater's final answers (what the loader derives) are the key for "the key is
  correct", the ticked option(s) for "another option" / "several options", the blind answers for "information is
  missing" (which also sets ``important_info_missing``).
* **Results**: the verdict counts on the key; the blind-answer accuracy against the key; per question, the raters,
  the blind answers equal to the key, and the verdicts.
* **Ratings**: one rating per question, the blind answer as a nominal label: the option letter when one option
  was ticked, ``several`` for more than one, ``none`` for "no option answers the question" (:data:`MCQ_LEVELS`).

>>> TASK.score_gold("B", {"blind": ["B"]}, ["accuracy"]), TASK.score_gold("B", {"blind": ["A", "B"]}, [])
((1, 1), (1, 0))
>>> blind_labels([["B"], ["A", "C"], []])
['B', 'several', 'none']
>>> medqa_row({"key": "A", "blind": ["B"], "missing": "no", "verdict": "another", "seen": ["B"],
...            "reason": "x", "options_shown": ["A", "B", "C", "D"]})["seen_change"]
'FALSE'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stableval.datasets.medqa import LETTERS  # the option letters stableval medqa reads
from stableval.errors import InputError
from stableval.portal.store.answers import confirmed_answers
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.tasks.base import MAX_REASON, RATING_COLUMNS, Export, Ratings, TaskType
from stableval.portal.tasks.records import common_columns
from stableval.portal.tasks.rules import Violation
from stableval.portal.tasks.summary import share, summary_table

__all__ = ["LETTERS", "MCQ_LEVELS", "MCQ_MISSING", "MCQ_VERDICTS", "TASK", "McqTask", "blind_labels", "medqa_row"]

#: The rater's verdict on the key, after seeing it.
MCQ_VERDICTS = {"correct": "The key is correct", "another": "Another option is correct (not the key)",
                "several": "Several options are correct", "missing": "Information is missing to answer"}
#: Whether information is missing from the question (asked blind).
MCQ_MISSING = {"no": "No", "minor": "Yes, but not important to answer", "important": "Yes, and it is needed to "
               "answer"}
#: Levels of an mcq blind answer (nominal).
MCQ_LEVELS = (*LETTERS, "several", "none")


def blind_labels(blind: list[list[str]] | pd.Series) -> list[str]:
    """The nominal label of each blind answer (see the module docstring)."""
    return [answer[0] if len(answer) == 1 else "several" if answer else "none" for answer in blind]


def medqa_row(answer: dict[str, Any]) -> dict[str, str]:
    """One rating of an ``mcq`` submission in the columns of ``medqa_relabelling.csv``."""
    blind = list(answer["blind"])
    verdict, key = answer["verdict"], answer["key"]
    final = {"correct": [key], "another": answer["seen"], "several": answer["seen"], "missing": blind}[verdict]
    changed = verdict != "missing" and sorted(final) != sorted(blind)
    letters = answer["options_shown"]
    final = [v for v in letters if v in final]
    return {"blind_answerable": "TRUE" if blind else "FALSE", "blind_answers": repr(blind) if blind else "",
            "info_missing": "TRUE" if answer["missing"] != "no" or verdict == "missing" else "FALSE",
            "important_info_missing": "TRUE" if answer["missing"] == "important" or verdict == "missing" else "FALSE",
            "seen_change": "TRUE" if changed else "FALSE",
            "seen_answerable": ("TRUE" if final else "FALSE") if changed else "",
            "seen_answers": repr(final) if changed and final else "",
            "verdict": verdict, "reason": str(answer.get("reason") or ""), "options_shown": ",".join(letters)}


def _letters(question: Question) -> list[str]:
    return list((question.payload or {}).get("options", {}))


def _blind_locked(draft: dict[str, Any]) -> bool:
    """The blind answer is final: step 1's *Next* (unflagged, complete) led to the key. (A draft saved before
    that mark existed is final once the key step was opened.)"""
    return bool((draft.get("task") or {}).get("blind_final")) or "seen" in draft["opened"] or \
        "seen" in draft["time_ms"]


def _blind_problems(task: dict[str, Any]) -> list[Violation]:
    """What the blind answer lacks (the flag aside)."""
    out = []
    if task.get("blind_none") and task.get("blind"):
        out.append(Violation("blind", "blind-A", "You ticked options and also “no option answers the question”; "
                                                 "untick one."))
    elif not task.get("blind") and not task.get("blind_none"):
        out.append(Violation("blind", "blind-A", "Choose the option(s) you think are correct, or tick “no option "
                                                 "answers the question”."))
    if task.get("missing") not in MCQ_MISSING:
        out.append(Violation("missing", "missing", "Say whether information is missing from the question."))
    return out


def _key_shown(draft: dict[str, Any]) -> bool:
    """Whether the key may be shown: the blind answer is final and complete (the only state in which step 2,
    its error page or an unflagged confirm page is ever rendered)."""
    return _blind_locked(draft) and not _blind_problems(draft.get("task") or {})


@dataclass(frozen=True)
class McqTask(TaskType):
    """Answer a multiple-choice question blind, then judge the key."""

    def example_question(self, number: int) -> dict[str, Any]:
        return {"id": str(number + 1), "prompt": f"Case {number}: best next step?",
                "options": {"A": "Aspirin", "B": "Beta blocker", "C": "CT scan"}, "answer_idx": "ABC"[number % 3]}

    def example_gold(self, number: int) -> Any:
        return "ABC"[(number + 1) % 3]  # not always the key: a gold answer may correct it

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        if step == "blind":
            return {"blind": "ABC"[question.id % 3], "missing": "no"}
        return {"verdict": "correct"}

    def missing_columns(self, record: Mapping[str, Any]) -> list[str]:
        missing = super().missing_columns(record)
        if "options" not in record and "a" not in record:
            missing.append("options (or columns A, B, C, D)")
        return missing

    def read_question(self, record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]
                      ) -> dict[str, Any]:
        out = common_columns(record, row, source, normalise)
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
            options = {letter: record[letter.lower()] for letter in LETTERS
                       if str(record.get(letter.lower(), "")).strip()}
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
                                 column=column_of[letter], value=str(value)[:40],
                                 allowed="text of 1-10,000 characters")
            texts[letter] = str(value)
        key = str(record.get("answer_idx", "")).strip().upper()
        if key not in letters:
            raise InputError("the key is not one of the options", file=source, row=row, column="answer_idx",
                             value=record.get("answer_idx", ""), allowed=", ".join(letters))
        out["payload"] = {"options": texts, "key": key}
        return out

    def read_gold(self, value: Any, track: Track, payload: dict[str, Any], refuse: Callable[..., InputError]) -> str:
        letters = list(payload.get("options", {}))
        letter = str(value).strip().upper() if isinstance(value, str | int) else ""
        if letter not in letters:
            raise refuse("the gold answer is not one of the question's options",
                         f"one option letter: {', '.join(letters)} (empty: not a gold question)")
        return letter

    def score_gold(self, gold: Any, answer: dict[str, Any], criteria: list[str]) -> tuple[int, int]:
        return 1, int(list(answer.get("blind") or []) == [gold])

    def redirect(self, draft: dict[str, Any], step: str) -> str | None:
        """Step 1 once its answer is final (whatever the flag), step 2 until then: the key is never shown (nor its
        error page) before the blind answer is final, and the blind answer never changes after."""
        if step == "blind" and _key_shown(draft):
            return "seen"
        return "blind" if step == "seen" and not _key_shown(draft) else None

    def accepts_autosave(self, draft: dict[str, Any], step: str) -> bool:
        return super().accepts_autosave(draft, step) and (
            not _blind_locked(draft) if step == "blind" else _key_shown(draft))

    def merge_step(self, task: dict[str, Any], draft: dict[str, Any], form: Any, track: Track, question: Question,
                   step: str, action: str) -> dict[str, Any]:
        letters = _letters(question)
        if step == "blind" and _blind_locked(draft):
            return task  # final: a late post (flagged or not) changes nothing
        if step == "blind":
            task["blind"] = [v for v in letters if v in form.getlist("blind")]
            task["blind_none"] = form.get("blind_none") == "on"
            if form.get("missing") in MCQ_MISSING:
                task["missing"] = form.get("missing")
        else:
            if form.get("verdict") in MCQ_VERDICTS:
                task["verdict"] = form.get("verdict")
            task["seen"] = [v for v in letters if v in form.getlist("seen")]
            if form.get("reason") is not None:
                task["reason"] = str(form.get("reason"))
        return task

    def step_problems(self, task: dict[str, Any], draft: dict[str, Any], track: Track, question: Question,
                      step: str) -> list[Violation]:
        out = _blind_problems(task)
        if out and _blind_locked(draft):  # only a draft saved before the blind answer was marked final
            return [Violation("blind", "blind-A", "The key was shown before your answer to step 1 was complete, so "
                                                  "this question can only be flagged: tick “does not make sense” "
                                                  "and say why.")]
        if step == "blind" or out:
            return out
        if not _blind_locked(draft):
            return [Violation("blind", "blind-A", "Answer step 1 and press “Next: see the key” first.")]
        verdict, seen, key = task.get("verdict"), task.get("seen") or [], (question.payload or {}).get("key")
        if verdict not in MCQ_VERDICTS:
            out.append(Violation("verdict", "verdict", "Say whether the key is correct."))
        elif verdict == "another" and (len(seen) != 1 or key in seen):
            out.append(Violation("seen", "seen-A", "Tick the one option that is correct instead of the key."))
        elif verdict == "several" and len(seen) < 2:
            out.append(Violation("seen", "seen-A", "Tick every option that is correct (at least two)."))
        elif verdict in ("correct", "missing") and seen:
            out.append(Violation("seen", "seen-A", "Untick the options: they are only for “another option” or "
                                                   "“several options”."))
        reason = str(task.get("reason") or "")
        if verdict in ("another", "several", "missing") and not reason.strip():
            out.append(Violation("reason", "reason", "Give a reason for your verdict."))
        if len(reason) > MAX_REASON:
            out.append(Violation("reason", "reason", f"The reason has {len(reason):,} characters; shorten it to at "
                                                     f"most {MAX_REASON:,}."))
        return out

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Any = None) -> dict[str, Any]:
        payload = question.payload or {}
        shown = step in ("seen", "confirm") and _key_shown(draft)
        return {**super().context(assignment, question, track, draft, step, query),
                "options": payload.get("options", {}), "verdicts": MCQ_VERDICTS, "missing_choices": MCQ_MISSING,
                "key": payload.get("key") if shown else None,
                "back_url": self.step_url(assignment.id, "seen" if _key_shown(draft) else "blind")}

    def after_next(self, draft: dict[str, Any], step: str, now: Any) -> None:
        """Step 1 completed unflagged: its answer is final, and step 2 shows the key."""
        if step == "blind" and not draft["flag"]:
            draft["task"] = {**(draft.get("task") or {}), "blind_final": True}

    def answer(self, task: dict[str, Any], track: Track, question: Question) -> dict[str, Any]:
        return {"options_shown": _letters(question), "key": (question.payload or {}).get("key"),
                "blind": list(task.get("blind") or []), "missing": task["missing"], "verdict": task["verdict"],
                "seen": list(task.get("seen") or []), "reason": str(task.get("reason") or "")}

    def export_rows(self, track: Track, frame: pd.DataFrame, notes: list[str]) -> Export:
        rows = [medqa_row(a) for a in frame["answer"]]
        out = pd.DataFrame({"qid": frame["item"], "worker_id": frame["rater"],
                            "answer_idx": [a["key"] for a in frame["answer"]]})
        columns = ["blind_answerable", "blind_answers", "info_missing", "important_info_missing", "seen_change",
                   "seen_answerable", "seen_answers", "verdict", "reason", "options_shown"]
        for column in columns:
            out[column] = [r[column] for r in rows]
        out["track"] = track.slug
        return Export(out, tuple(notes), self.name)

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
        """The verdict counts on the key; the blind-answer accuracy against the key (share of blind answers that
        are exactly the key); per question, the raters, the blind answers equal to the key, and the verdicts."""
        answers = frame["answer"].tolist()
        verdicts = np.asarray([a["verdict"] for a in answers], dtype=object)
        right = np.asarray([list(a.get("blind") or []) == [a["key"]] for a in answers], dtype=bool)
        names = list(MCQ_VERDICTS)
        code = pd.Categorical(verdicts, categories=names).codes
        counts = np.bincount(code[code >= 0], minlength=len(names))
        total = len(answers)
        verdict_rows = [[MCQ_VERDICTS[name], share(int(n), total)] for name, n in zip(names, counts, strict=True)]
        question, items = pd.factorize(frame["item"])
        per_answer = np.bincount(question, minlength=len(items))
        per_right = np.bincount(question, weights=right, minlength=len(items)).astype(np.int64)
        per_verdict = np.zeros((len(items), len(names)), dtype=np.int64)
        np.add.at(per_verdict, (question[code >= 0], code[code >= 0]), 1)
        order = np.argsort(per_right / np.maximum(per_answer, 1), kind="stable")  # most disputed keys first
        question_rows = [[str(items[q]), int(per_answer[q]), share(int(per_right[q]), int(per_answer[q])),
                          *[int(n) for n in per_verdict[q]]] for q in order]
        tables = {"verdicts": summary_table("Verdicts on the key", "How raters judged the key after seeing it (all "
                                            "answers)", ["Verdict", "Answers"], verdict_rows),
                  "questions": summary_table("Per question", "Blind answers equal to the key, and the verdicts; "
                                             "questions whose key raters most often disagreed with first",
                                             ["Question", "Raters", "Blind answer = key",
                                              *[MCQ_VERDICTS[n] for n in names]], question_rows)}
        return tables, {"Blind-answer accuracy against the key": share(int(right.sum()), total)}

    def ratings(self, db: Database, track: Track) -> Ratings:
        _, frame, _, _ = confirmed_answers(db, track.slug)
        out = frame[["question_id", "item", "model", "rater_id", "rater"]].copy()
        out["criterion"] = "blind"
        out["agent"] = "blind answer"
        out["label"] = blind_labels([list((a or {}).get("blind") or []) for a in frame["answer"].tolist()])
        return Ratings(out[RATING_COLUMNS].reset_index(drop=True), MCQ_LEVELS)


TASK = McqTask(
    name="mcq", title="Answer the question, then judge the key", label="multiple-choice", steps=("blind", "seen"),
    templates={"blind": "task_mcq.html", "seen": "task_mcq.html", "confirm": "task_confirm.html",
               "answer": "task_mcq_answer.html", "results": "task_results.html"},
    columns=("id", "prompt", "answer_idx"),
    question_file="JSONL with id, prompt, options {\"A\": …}, answer_idx, or a table with columns id, prompt, A, "
                  "B[, C, D], answer_idx (and optionally reference, specialty, subspecialty, and gold: the correct "
                  "option letter of a quality-control question)",
    gold_rule="A gold judgment is the blind answer (before the key is shown): correct when exactly the gold option "
              "was ticked.",
    analysis="stableval medqa", adaptive=True, categorical=True, nominal=True,
    ratings_help="blind answers (nominal labels A–D, several, none; leniency, strictness and over/under-rating need "
                 "ordered levels: —)")
