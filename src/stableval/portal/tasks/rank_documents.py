"""``rank-documents``: order a generated answer among k judged documents (the NRP expert study).

* **Question file**: JSON Lines, one question a line: ``{"id", "prompt", "items": [{"id", "text", "kind":
  "answer"|"document", "model"?, "grade"?}], "specialty"?}`` with 2 to :data:`MAX_ITEMS` items of unique ids; texts
  may be agent transcripts.
* **Draft**: ``{"order": [item ids, best first], "shown": [item ids as first shown]}``; the order first shown is
  randomised per rater and question (:func:`shown_order`). An item moves with its up/down buttons
  (``up:t<k>``, ``down:t<k>``) or its place number (``rank-t<k>``): the page names an item by ``k``, its place in
  the order first shown, never by its id (ids such as ``q7-ans`` would tell the generated answer apart).
* **Gold**: the known order, item ids best first (comma-separated or a JSON list; a prefix is enough). The first id
  is the planted best item; one judgment: correct when the rater ranks it first. (Top-1 rather than a Kendall-tau
  threshold: an attention check should have one unambiguous answer, and the order of the other items is often a
  matter of judgment.)
* **Export**: ``qid, item, rank`` (1 = best) with ``rater``, ``annotator`` (the same: ``nrp agree`` reads that
  column), ``position_shown`` (1-based place in the randomised order first shown), ``kind``, ``track``:
  ``stableval nrp agree FILE RANKINGS`` on one rater's export (``rater=``; CLI ``--rater``).
* **Results**: the mean rank per item kind (answer, document) and per answer model: mean rank (1 = best), mean
  normalised rank ((rank - 1) / (items - 1): 0 best, 1 worst, comparable across question sizes) and the share
  ranked first.
* **Rankings**: each answer is a complete ranking of the question's items for the rater-aware ranking model (live
  rater diagnostics and adaptive assignment: :mod:`stableval.portal.work.ranking_model`).

>>> shown_order(3, 5, ["d1", "d2", "ans"]) == shown_order(3, 5, ["d1", "d2", "ans"])
True
>>> sorted(shown_order(3, 5, ["d1", "d2", "ans"]))
['ans', 'd1', 'd2']
>>> TASK.score_gold(["d2", "d0"], {"order": ["d2", "d1", "d0"]}, [])
(1, 1)
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.tasks.base import Export, TaskType
from stableval.portal.tasks.ordering import RankingRecords
from stableval.portal.tasks.records import MAX_TEXT, common_columns
from stableval.portal.tasks.rules import Violation
from stableval.portal.tasks.summary import share, summary_table
from stableval.portal.tasks.transcripts import transcript_problem

__all__ = ["MAX_ITEMS", "TASK", "RankDocumentsTask", "shown_order"]

#: Most items (answers and documents) of a rank-documents question.
MAX_ITEMS = 20


def shown_order(rater_id: int, question_id: int, item_ids: list[str]) -> list[str]:
    """The randomised order in which this rater is shown the items (a fixed hash of rater and question, so a
    reload shows the same order); recorded with the submission."""
    seed = int.from_bytes(hashlib.sha256(f"order:{rater_id}:{question_id}".encode()).digest()[:8], "big")
    permutation = np.random.default_rng(seed).permutation(len(item_ids))
    return [item_ids[i] for i in permutation]


def _items(question: Question) -> list[str]:
    return [item["id"] for item in (question.payload or {}).get("items", [])]


def _keys(task: dict[str, Any], items: list[str]) -> dict[str, str]:
    """Item id -> what the page calls it: ``t<k>``, ``k`` its place in the order first shown (random per rater).

    >>> _keys({"shown": ["d1", "ans"]}, ["ans", "d1"])
    {'d1': 't0', 'ans': 't1'}
    """
    shown = [i for i in task.get("shown") or [] if i in items]
    return {item: f"t{place}" for place, item in enumerate(shown if sorted(shown) == sorted(items) else items)}


@dataclass(frozen=True)
class RankDocumentsTask(TaskType):
    """Order an answer among documents."""

    def example_question(self, number: int) -> dict[str, Any]:
        return {"id": f"nrp{number}", "prompt": f"Query {number}: treatment of X?",
                "items": [{"id": "ans", "text": "Generated **answer**", "kind": "answer", "model": "model-x"},
                          *({"id": f"d{j}", "text": f"Document {j}", "kind": "document", "grade": 2 - j}
                            for j in range(3))]}

    def example_gold(self, number: int) -> Any:
        return [f"d{number % 3}", "ans"]

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        return {}  # the order first shown is a complete answer

    def read_question(self, record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]
                      ) -> dict[str, Any]:
        out = common_columns(record, row, source, normalise)
        items = record.get("items")
        if isinstance(items, str):
            try:
                items = json.loads(items)
            except ValueError:
                items = None
        if not isinstance(items, list) or not 2 <= len(items) <= MAX_ITEMS:
            raise InputError("items must be a list of 2 to 20 objects", file=source, row=row, column="items",
                             value=(f"{len(items)} items" if isinstance(items, list)
                                    else str(record.get("items"))[:40]),
                             allowed='[{"id": ..., "text": ..., "kind": "answer"|"document"}, ...] with 2-20 items')
        clean, seen = [], set()
        for number, item in enumerate(items, start=1):
            where = f"items[{number}]"
            if not isinstance(item, dict):
                raise InputError(f"{where} is not an object", file=source, row=row, column="items",
                                 value=str(item)[:40], allowed='{"id", "text", "kind"[, "model", "grade"]}')
            item_id = str(item.get("id", "")).strip()
            if not item_id or len(item_id) > 200 or item_id in seen:
                raise InputError(f"{where}: id empty, too long or repeated", file=source, row=row, column="items",
                                 value=item_id[:40], allowed="ids unique within the question, 1-200 characters")
            seen.add(item_id)
            text = item.get("text")
            if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
                raise InputError(f"{where} ({item_id}): text empty, not text or too long", file=source, row=row,
                                 column="items", value=str(text)[:40], allowed=f"text of 1-{MAX_TEXT:,} characters")
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
                raise InputError(f"{where} ({item_id}): grade is not a number", file=source, row=row,
                                 column="items", value=grade,
                                 allowed="a number (the document's known relevance grade) or no grade")
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

    def read_gold(self, value: Any, track: Track, payload: dict[str, Any], refuse: Callable[..., InputError]
                  ) -> list[str]:
        items = [item["id"] for item in payload.get("items", [])]
        order = value if isinstance(value, list) else [v.strip() for v in str(value).split(",")]
        order = [str(v).strip() for v in order]
        if not order or any(v not in items for v in order) or len(set(order)) != len(order):
            raise refuse("the gold order must list item ids of this question, best first, each once",
                         f"item ids, best first, comma-separated or a JSON list (ids here: {', '.join(items)}); "
                         "the first is the planted best item")
        return order

    def score_gold(self, gold: Any, answer: dict[str, Any], criteria: list[str]) -> tuple[int, int]:
        order = answer.get("order") or []
        return 1, int(bool(order) and bool(gold) and order[0] == gold[0])

    def describe_gold(self, gold: Any, track: Track) -> str:
        return " > ".join(str(v) for v in gold)

    def needs_prepare(self, draft: dict[str, Any], step: str) -> bool:
        return super().needs_prepare(draft, step) or not (draft.get("task") or {}).get("shown")

    def prepare(self, draft: dict[str, Any], rater_id: int, question: Question, step: str) -> bool:
        """The first view gives the question its randomised order."""
        if (draft.get("task") or {}).get("shown"):
            return False
        shown = shown_order(rater_id, question.id, _items(question))
        draft["task"] = {**(draft.get("task") or {}), "shown": shown, "order": list(shown)}
        return True

    def merge_step(self, task: dict[str, Any], draft: dict[str, Any], form: Any, track: Track, question: Question,
                   step: str, action: str) -> dict[str, Any]:
        items = _items(question)
        keys = _keys(task, items)
        order = [i for i in task.get("order") or [] if i in items]
        if sorted(order) != sorted(items):
            order = list(task.get("shown") or items)
        typed = [str(form.get(f"rank-{keys[i]}") or "").strip() for i in order]
        task.pop("rank_error", None)
        if any(typed):
            numbers = [int(t) if t.isascii() and t.isdigit() and len(t) < 4 else -1 for t in typed]
            if sorted(numbers) == list(range(1, len(order) + 1)):
                order = [item for _, item in sorted(zip(numbers, order, strict=True))]
            elif typed != [str(n) for n in range(1, len(order) + 1)]:
                task["rank_error"] = ", ".join(t or "(empty)" for t in typed)
        verb, _, key = action.partition(":")
        item = next((i for i, k in keys.items() if k == key), "")
        if verb in ("up", "down") and item in order and "rank_error" not in task:
            at = order.index(item)
            to = at - 1 if verb == "up" else at + 1
            if 0 <= to < len(order):
                order[at], order[to] = order[to], order[at]
        task["order"] = order
        return task

    def step_problems(self, task: dict[str, Any], draft: dict[str, Any], track: Track, question: Question,
                      step: str) -> list[Violation]:
        if task.get("rank_error"):
            return [Violation("rank", "rank-0", f"The rank numbers ({task['rank_error']}) must be 1 to "
                                                f"{len(_items(question))}, each used once.")]
        if sorted(task.get("order") or []) != sorted(_items(question)):
            return [Violation("rank", "rank-0", "Put every item in order.")]
        return []

    def stay_problems(self, draft: dict[str, Any], track: Track, question: Question, step: str) -> list[Violation]:
        """Place numbers that could not be applied are shown at once (a move or a save)."""
        return self.problems(draft, track, question, step) if (draft.get("task") or {}).get("rank_error") else []

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Mapping[str, str] | None = None) -> dict[str, Any]:
        query = query or {}
        items = {item["id"]: item for item in (question.payload or {}).get("items", [])}
        task = draft.get("task") or {}
        keys = _keys(task, list(items))
        return {**super().context(assignment, question, track, draft, step, query),
                "items": [{**items[i], "key": keys[i]} for i in task.get("order") or [] if i in items],
                "moved": (query.get("moved", ""), query.get("way", ""))}

    def answer(self, task: dict[str, Any], track: Track, question: Question) -> dict[str, Any]:
        return {"order": list(task["order"]), "shown": list(task.get("shown") or [])}

    def export_rows(self, track: Track, frame: pd.DataFrame, notes: list[str]) -> Export:
        records = []
        for item, rater, question, answer in zip(frame["item"], frame["rater"], frame["question"], frame["answer"],
                                                 strict=True):
            kinds = {i["id"]: i["kind"] for i in (question or {}).get("items", [])}
            shown = {doc: place for place, doc in enumerate(answer.get("shown") or answer["order"], start=1)}
            records += [{"qid": item, "item": doc, "rank": rank, "rater": rater, "annotator": rater,
                         "position_shown": shown.get(doc, 0), "kind": kinds.get(doc, "")}
                        for rank, doc in enumerate(answer["order"], start=1)]
        out = pd.DataFrame(records, columns=["qid", "item", "rank", "rater", "annotator", "position_shown", "kind"])
        out["track"] = track.slug
        return Export(out, tuple(notes), self.name)

    def analysis_command(self, result: Export, path: str) -> str:
        several = result.frame["rater"].nunique() > 1 if len(result.frame) else False
        hint = "  (one rater per file: export with --rater rater-N)" if several else ""
        return f"stableval nrp agree {path} RANKINGS{hint}"

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
        """The mean rank per item kind (answer, document) and per answer model: mean rank, mean normalised rank
        and the share ranked first."""
        records = []
        for question, answer in zip(frame["question"], frame["answer"], strict=True):
            items = {i["id"]: i for i in (question or {}).get("items", [])}
            order = list((answer or {}).get("order") or [])
            size = max(len(order) - 1, 1)
            records += [(items[i]["kind"], items[i].get("model") or "", rank, (rank - 1) / size)
                        for rank, i in enumerate(order, start=1) if i in items]
        ranks = pd.DataFrame(records, columns=["kind", "model", "rank", "normalised"])
        rows = []
        groups = [(kind, "", ranks["kind"] == kind) for kind in ("answer", "document")]
        groups += [("answer", model, (ranks["kind"] == "answer") & (ranks["model"] == model))
                   for model in sorted(set(ranks.loc[ranks["kind"] == "answer", "model"])) if model]
        for kind, model, mask in groups:
            chosen = ranks.loc[mask.to_numpy()]
            if chosen.empty:
                continue
            rows.append([kind + (f" ({model})" if model else ""), len(chosen), f"{chosen['rank'].mean():.2f}",
                         f"{chosen['normalised'].mean():.2f}", share(int((chosen["rank"] == 1).sum()), len(chosen))])
        return {"kinds": summary_table("Mean rank per item kind", "Rank 1 = best; normalised rank (rank - 1) / "
                                       "(items - 1): 0 = best, 1 = worst; answers also per model",
                                       ["Items", "Ranked", "Mean rank", "Mean normalised rank", "Ranked first"],
                                       rows)}, {}

    def rankings(self, track: Track, frame: pd.DataFrame) -> RankingRecords:
        """Each answer's order of the question's items, best first (one item per group)."""
        records = [(str(rater), int(question), [[item] for item in (answer or {}).get("order") or []])
                   for rater, question, answer in zip(frame["rater"], frame["question_id"], frame["answer"],
                                                      strict=True)
                   if (answer or {}).get("order")]
        return records, None


TASK = RankDocumentsTask(
    name="rank-documents", title="Rank the answer among documents", label="rank-documents", steps=("rank",),
    templates={"rank": "task_rank_documents.html", "confirm": "task_confirm.html",
               "answer": "task_rank_documents_answer.html", "results": "task_results.html"},
    columns=("id", "prompt", "items"),
    question_file="JSONL with id, prompt, items [{\"id\", \"text\", \"kind\"}] (and optionally specialty, "
                  "subspecialty, reference, and gold: the known order of a quality-control question, item ids best "
                  "first)",
    gold_rule="A gold judgment is the answer's first item: correct when it is the planted best item (the first of "
              "the gold order).",
    analysis="stableval nrp agree", ordering=True, adaptive=True, autosave=False)
