"""The admin results page of the task types other than pairwise: a per-type summary of the confirmed answers (gold
questions and flagged submissions left out, as in the exports), built from the same answers as
:mod:`stableval.portal.task_export`. Counts are descriptive; the analyses are the commands the export feeds
(``stableval score``, ``medqa``, ``ddx``, ``nrp agree``).

* ``single`` — the level distribution per criterion and agent (count and share of each level of the track's scale,
  and "unable to judge").
* ``mcq`` — the verdict counts on the key; the blind-answer accuracy against the key (share of blind answers that
  are exactly the key); per question, the raters, the blind answers equal to the key, and the verdicts.
* ``ddx`` — the top conditions: per condition, how often raters put it first (in the first group) and anywhere,
  and in how many cases; per case, the conditions put first most often.
* ``rank-documents`` — the mean rank per item kind (answer, document) and per answer model: mean rank (1 = best),
  mean normalised rank ((rank - 1) / (items - 1): 0 best, 1 worst, comparable across question sizes) and the share
  ranked first.

Results are cached per (track, number of submissions, last submission id).

>>> _share(1, 4), _share(0, 0)
('1 (25%)', '0')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stableval.portal.db import Database
from stableval.portal.result_cache import ResultCache
from stableval.portal.task_forms import MCQ_VERDICTS

__all__ = ["TaskSummary", "clear_cache", "task_summary"]

_CACHE_SIZE = 16


@dataclass(frozen=True)
class TaskSummary:
    """What the results page shows for a task-type track: ``tables`` maps a section id to ``{"title", "caption",
    "header", "rows"}`` (text cells), ``figures`` holds headline numbers, ``notes`` what was left out."""

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


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else str(count)


def _table(title: str, caption: str, header: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {"title": title, "caption": caption, "header": header, "rows": rows}


_cache: ResultCache[TaskSummary] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached summaries (tests; the cache also invalidates itself on every new submission)."""
    _cache.clear()


def task_summary(db: Database, slug: str, *, cache: bool = True) -> TaskSummary:
    """The per-type summary of a task-type track (raises :class:`~stableval.errors.InputError` for an unknown
    track or a pairwise one)."""
    from stableval.portal.live_diagnostics import _signature

    count, last = _signature(db, slug)
    key = (db.url, slug, count, last)
    return _cache.get(key, lambda: _compute(db, slug), enabled=cache)


def _compute(db: Database, slug: str) -> TaskSummary:
    from stableval.errors import InputError
    from stableval.portal.task_export import confirmed_answers, left_out_notes, task_of

    if task_of(db, slug) == "pairwise":
        raise InputError(f"track {slug!r} is a pairwise track", column="track", value=slug,
                         allowed="a single, mcq, ddx or rank-documents track (pairwise: stableval.portal.results)")
    track, frame, flagged, gold = confirmed_answers(db, slug)
    base = TaskSummary(slug, track.title, track.task_type, len(frame), int(frame["question_id"].nunique()),
                       int(frame["rater_id"].nunique()), notes=tuple(left_out_notes(flagged, gold)))
    if frame.empty:
        return TaskSummary(**{**base.__dict__, "message": "No confirmed answers yet: the summary appears after the "
                                                          "first submissions."})
    builder = {"single": _single, "mcq": _mcq, "ddx": _ddx, "rank-documents": _rank}[track.task_type]
    tables, figures = builder(track, frame)
    return TaskSummary(**{**base.__dict__, "tables": tables, "figures": figures})


def _single(track: Any, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
    keys = [c["key"] for c in track.criteria]
    labels = {c["key"]: c["label"] for c in track.criteria}
    levels = [*list(track.scale or []), "na"]
    given = np.asarray([[(a or {}).get("levels", {}).get(k) for k in keys] for a in frame["answer"]], dtype=object)
    models = frame["model"].astype(str).to_numpy()
    agents = sorted(set(models))
    code = pd.Categorical(given.reshape(-1), categories=levels).codes.reshape(given.shape)
    agent_code = np.searchsorted(np.asarray(agents), models)
    rows = []
    for c, key in enumerate(keys):  # one bincount per criterion: (agent, level) counts
        valid = code[:, c] >= 0
        counts = np.bincount(agent_code[valid] * len(levels) + code[valid, c],
                             minlength=len(agents) * len(levels)).reshape(len(agents), len(levels))
        for a, agent in enumerate(agents):
            total = int(counts[a].sum())
            rows.append([labels[key], agent, total, *[_share(int(n), total) for n in counts[a]]])
    header = ["Criterion", "Agent", "Ratings", *list(track.scale or []), "Unable to judge"]
    return {"levels": _table("Level distribution per criterion and agent", "Count (share) of each level of the "
                             "track's scale, worst first, per criterion and agent", header, rows)}, {}


def _mcq(track: Any, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
    answers = frame["answer"].tolist()
    verdicts = np.asarray([a["verdict"] for a in answers], dtype=object)
    right = np.asarray([list(a.get("blind") or []) == [a["key"]] for a in answers], dtype=bool)
    names = list(MCQ_VERDICTS)
    code = pd.Categorical(verdicts, categories=names).codes
    counts = np.bincount(code[code >= 0], minlength=len(names))
    total = len(answers)
    verdict_rows = [[MCQ_VERDICTS[name], _share(int(n), total)] for name, n in zip(names, counts, strict=True)]
    question, items = pd.factorize(frame["item"])
    per_answer = np.bincount(question, minlength=len(items))
    per_right = np.bincount(question, weights=right, minlength=len(items)).astype(np.int64)
    per_verdict = np.zeros((len(items), len(names)), dtype=np.int64)
    np.add.at(per_verdict, (question[code >= 0], code[code >= 0]), 1)
    order = np.argsort(per_right / np.maximum(per_answer, 1), kind="stable")  # most disputed keys first
    question_rows = [[str(items[q]), int(per_answer[q]), _share(int(per_right[q]), int(per_answer[q])),
                      *[int(n) for n in per_verdict[q]]] for q in order]
    tables = {"verdicts": _table("Verdicts on the key", "How raters judged the key after seeing it (all answers)",
                                 ["Verdict", "Answers"], verdict_rows),
              "questions": _table("Per question", "Blind answers equal to the key, and the verdicts; questions "
                                  "whose key raters most often disagreed with first",
                                  ["Question", "Raters", "Blind answer = key", *[MCQ_VERDICTS[n] for n in names]],
                                  question_rows)}
    return tables, {"Blind-answer accuracy against the key": _share(int(right.sum()), total)}


def _ddx(track: Any, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
    conditions = list((track.task_options or {}).get("conditions", []))
    case, items = pd.factorize(frame["item"])
    first = np.zeros((len(frame), len(conditions)), dtype=np.int64)
    anywhere = np.zeros_like(first)
    for row, answer in enumerate(frame["answer"]):  # JSON answers: a few conditions each
        groups = answer.get("groups") or []
        for g, group in enumerate(groups):
            anywhere[row, group] = 1
            if g == 0:
                first[row, group] = 1
    per_case = np.zeros((len(items), len(conditions)), dtype=np.int64)
    np.add.at(per_case, case, first)
    listed = np.zeros_like(per_case)
    np.add.at(listed, case, anywhere)
    cases_with = (listed > 0).sum(axis=0)
    totals, everywhere = first.sum(axis=0), anywhere.sum(axis=0)
    order = np.lexsort((-everywhere, -totals))
    condition_rows = [[conditions[c], int(totals[c]), int(everywhere[c]), int(cases_with[c])]
                      for c in order if everywhere[c]]
    raters = np.bincount(case, minlength=len(items))
    case_rows = []
    for index, name in enumerate(items):
        ranked = np.argsort(-per_case[index], kind="stable")
        top = [f"{conditions[c]} ({per_case[index, c]})" for c in ranked[:3] if per_case[index, c]]
        case_rows.append([str(name), int(raters[index]), ", ".join(top) or "—"])
    return {"conditions": _table("Top conditions", "How often each condition was ranked first (in the first, "
                                 "equally likely group), listed anywhere, and in how many cases; most often first "
                                 "first", ["Condition", "Ranked first", "Listed", "Cases"], condition_rows),
            "cases": _table("Per case", "The conditions raters put first most often (number of raters)",
                            ["Case", "Raters", "Ranked first"], case_rows)}, {}


def _rank(track: Any, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
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
                     f"{chosen['normalised'].mean():.2f}", _share(int((chosen["rank"] == 1).sum()), len(chosen))])
    return {"kinds": _table("Mean rank per item kind", "Rank 1 = best; normalised rank (rank - 1) / (items - 1): "
                            "0 = best, 1 = worst; answers also per model",
                            ["Items", "Ranked", "Mean rank", "Mean normalised rank", "Ranked first"], rows)}, {}
