"""Exports of the task types other than pairwise, each in the format of the analysis command that reads it.

* ``single`` → the annotation table ``item, agent, rater, label, criterion, rater_group, track`` (labels are the
  track's level names): ``stableval score FILE --levels <scale>`` (one criterion per file: ``--criterion``).
* ``mcq`` → the columns of Relabeled MedQA's ``medqa_relabelling.csv`` (``qid, worker_id, answer_idx,
  blind_answerable, blind_answers, info_missing, important_info_missing, seen_change, seen_answerable,
  seen_answers``; see :mod:`stableval.datasets.medqa`) plus ``verdict, reason, options_shown, track``:
  ``stableval medqa FILE``. The rater's final answers (what the loader derives) are: the key for "the key is
  correct", the ticked option(s) for "another option" / "several options", the blind answers for "information is
  missing" (which also sets ``important_info_missing``).
* ``ddx`` → ``dermatology_selectors.json`` (per case, each rater's partial ranking as ordered groups of condition
  indices; see :mod:`stableval.datasets.ddx`), with the condition names and the case ids beside it:
  ``stableval ddx FILE --conditions FILE.conditions.txt``.
* ``rank-documents`` → ``qid, item, rank`` (1 = best) with ``rater``, ``annotator`` (the same: ``nrp agree``
  reads that column), ``position_shown`` (1-based place in the randomised order first shown), ``kind``, ``track``:
  ``stableval nrp agree FILE RANKINGS`` on one rater's export (``rater=``; CLI ``--rater``).

Flagged ("does not make sense") submissions and those of gold (quality-control) questions are left out and counted
in the notes, as are "unable to judge" levels.

>>> medqa_row({"key": "A", "blind": ["B"], "missing": "no", "verdict": "another", "seen": ["B"],
...            "reason": "x", "options_shown": ["A", "B", "C", "D"]})["seen_change"]
'FALSE'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select

from stableval.errors import InputError
from stableval.portal.db import Database
from stableval.portal.export import Export
from stableval.portal.models import Question, Rater, Submission, Track

__all__ = ["TaskExport", "analysis_command", "cases_path", "conditions_path", "confirmed_answers", "ddx_json",
           "export_table", "export_task", "left_out_notes", "medqa_row", "task_of"]


@dataclass(frozen=True)
class TaskExport:
    """A task-type export: the table (every type), the ``stableval ddx`` selectors JSON and condition names (ddx
    only), what was left out, and the analysis command that reads it."""

    task: str
    frame: pd.DataFrame
    notes: tuple[str, ...] = field(default=())
    selectors: list[list[list[list[int]]]] | None = None
    conditions: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    scale: tuple[str, ...] = ()


def task_of(db: Database, slug: str) -> str:
    """The task type of track ``slug`` (an :class:`InputError` listing the tracks when there is none)."""
    with db.reading() as session:
        task = session.scalar(select(Track.task_type).where(Track.slug == slug))
        if task is None:
            slugs = session.scalars(select(Track.slug)).all()
            raise InputError("no such track", column="track", value=slug, allowed=", ".join(slugs) or "none yet")
    return str(task)


def confirmed_answers(db: Database, slug: str) -> tuple[Track, pd.DataFrame, int, int]:
    """The track, its confirmed unflagged submissions of regular questions (in submission order), and how many
    flagged submissions and submissions of gold (quality-control) questions were left out."""
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        assert track is not None
        gold = int(session.scalar(select(func.count(Submission.id)).join(Question).where(
            Question.track_id == track.id, Question.gold != "")) or 0)
        rows = session.execute(
            select(Question.external_id, Question.id, Question.model_a, Question.payload, Submission.rater_id,
                   Rater.specialty, Submission.payload, Submission.flagged)
            .join(Submission, Submission.question_id == Question.id).join(Rater, Submission.rater_id == Rater.id)
            .where(Question.track_id == track.id, Question.gold == "").order_by(Submission.id)).all()
    frame = pd.DataFrame([tuple(r) for r in rows], columns=["item", "question_id", "model", "question", "rater_id",
                                                           "rater_group", "answer", "flagged"])
    flagged = int(frame["flagged"].sum()) if len(frame) else 0
    frame = frame.loc[~frame["flagged"].astype(bool)].reset_index(drop=True)
    frame["rater"] = "rater-" + frame["rater_id"].astype(str)
    return track, frame, flagged, gold


def left_out_notes(flagged: int, gold: int) -> list[str]:
    """The export notes on what was left out: flagged submissions and those of gold questions.

    >>> left_out_notes(0, 2)
    ['2 submission(s) of gold (quality-control) questions left out']
    """
    notes = [f"{flagged} submission(s) flagged 'does not make sense' have no answers (left out)"] if flagged else []
    if gold:
        notes.append(f"{gold} submission(s) of gold (quality-control) questions left out")
    return notes


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


def _single(track: Track, frame: pd.DataFrame, notes: list[str]) -> TaskExport:
    keys = [c["key"] for c in track.criteria]
    levels = [[(a or {}).get("levels", {}).get(k) for k in keys] for a in frame["answer"]]
    flat = np.asarray(levels, dtype=object).reshape(-1) if len(frame) else np.asarray([], dtype=object)
    out = pd.DataFrame({"item": np.repeat(frame["item"].to_numpy(dtype=object), len(keys)),
                        "agent": np.repeat(frame["model"].to_numpy(dtype=object), len(keys)),
                        "rater": np.repeat(frame["rater"].to_numpy(dtype=object), len(keys)),
                        "label": flat, "criterion": np.tile(np.asarray(keys, dtype=object), len(frame)),
                        "rater_group": np.repeat(frame["rater_group"].to_numpy(dtype=object), len(keys)),
                        "track": track.slug})
    unable = (out["label"] == "na").to_numpy()
    if unable.any():
        notes.append(f"{int(unable.sum())} 'unable to judge' level(s) left out")
    return TaskExport("single", out.loc[~unable].reset_index(drop=True), tuple(notes),
                      scale=tuple(track.scale or ()))


def _mcq(track: Track, frame: pd.DataFrame, notes: list[str]) -> TaskExport:
    rows = [medqa_row(a) for a in frame["answer"]]
    out = pd.DataFrame({"qid": frame["item"], "worker_id": frame["rater"],
                        "answer_idx": [a["key"] for a in frame["answer"]]})
    columns = ["blind_answerable", "blind_answers", "info_missing", "important_info_missing", "seen_change",
               "seen_answerable", "seen_answers", "verdict", "reason", "options_shown"]
    for column in columns:
        out[column] = [r[column] for r in rows]
    out["track"] = track.slug
    return TaskExport("mcq", out, tuple(notes))


def _ddx(track: Track, frame: pd.DataFrame, notes: list[str]) -> TaskExport:
    conditions = tuple((track.task_options or {}).get("conditions", []))
    by_case: dict[str, list[tuple[str, list[list[int]]]]] = {}
    for item, rater, answer in zip(frame["item"], frame["rater"], frame["answer"], strict=True):
        by_case.setdefault(str(item), []).append((str(rater), answer["groups"]))
    order = sorted(by_case, key=_natural)
    selectors = [[groups for _, groups in by_case[case]] for case in order]
    table = pd.DataFrame([{"case": case, "rater": rater, "group": g, "condition": conditions[c]}
                          for case in order for rater, groups in by_case[case]
                          for g, group in enumerate(groups, start=1) for c in group],
                         columns=["case", "rater", "group", "condition"])
    return TaskExport("ddx", table, tuple(notes), selectors=selectors, conditions=conditions, cases=tuple(order))


def _natural(item: str) -> tuple[int, float, str]:
    try:
        return (0, float(item), "")
    except ValueError:
        return (1, 0.0, item)


def _rank_documents(track: Track, frame: pd.DataFrame, notes: list[str]) -> TaskExport:
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
    return TaskExport("rank-documents", out, tuple(notes))


_EXPORTS = {"single": _single, "mcq": _mcq, "ddx": _ddx, "rank-documents": _rank_documents}


def export_task(db: Database, slug: str, *, criterion: str | None = None, rater: str | None = None) -> TaskExport:
    """Export the confirmed answers of a task-type track (see the module docstring for each format); ``rater``
    (``rater-7``) keeps one rater's answers (``stableval nrp agree`` reads one rater's rankings at a time)."""
    task = task_of(db, slug)
    if task not in _EXPORTS:
        raise InputError(f"track {slug!r} is a pairwise track", column="track", value=slug,
                         allowed="stableval portal export --kind annotations|pairwise")
    track, frame, flagged, gold = confirmed_answers(db, slug)
    if rater is not None:
        if rater not in set(frame["rater"]):
            raise InputError("no answers by this rater in the track", column="rater", value=rater,
                             allowed=", ".join(sorted(set(frame["rater"]))) or "none yet")
        frame = frame.loc[frame["rater"] == rater].reset_index(drop=True)
    notes = left_out_notes(flagged, gold)
    result = _EXPORTS[task](track, frame, notes)
    if criterion is not None:
        keys = [c["key"] for c in track.criteria]
        if task != "single" or criterion not in keys:
            raise InputError("no such criterion in the track", column="criterion", value=criterion,
                             allowed=", ".join(keys) if task == "single" else "no --criterion for this task type")
        result = TaskExport(task, result.frame.loc[result.frame["criterion"] == criterion].reset_index(drop=True),
                            result.notes, scale=result.scale)
    return result


def analysis_command(result: TaskExport, path: str) -> str:
    """The command that analyses the export written to ``path``."""
    if result.task == "single":
        several = result.frame["criterion"].nunique() > 1 if len(result.frame) else False
        hint = "  (one criterion per file: export with --criterion KEY)" if several else ""
        return f"stableval score {path} --levels {','.join(result.scale)}{hint}"
    if result.task == "mcq":
        return f"stableval medqa {path}"
    if result.task == "ddx":
        return f"stableval ddx {path} --conditions {conditions_path(path)}"
    several = result.frame["rater"].nunique() > 1 if len(result.frame) else False
    hint = "  (one rater per file: export with --rater rater-N)" if several else ""
    return f"stableval nrp agree {path} RANKINGS{hint}"


def conditions_path(path: str) -> str:
    """Where the condition names of a ddx export to ``path`` go (one per line)."""
    return str(path).removesuffix(".json") + ".conditions.txt"


def cases_path(path: str) -> str:
    """Where the case ids of a ddx export to ``path`` go (one per line, in the order of the selectors)."""
    return str(path).removesuffix(".json") + ".cases.txt"


def ddx_json(result: TaskExport) -> str:
    """The selectors of a ddx export as JSON text."""
    return json.dumps(result.selectors)


def export_table(db: Database, kind: str, *, track: str, criterion: str | None = None) -> Export | TaskExport:
    """The table a track's download gives: :func:`stableval.portal.export.export` (``kind``: annotations or
    pairwise) for a pairwise track, :func:`export_task` for the other task types (``kind`` unused; for ddx the long
    table ``case, rater, group, condition``, the selectors JSON coming from ``stableval portal export``)."""
    from stableval.portal.export import export

    if task_of(db, track) == "pairwise":
        return export(db, kind, track=track, criterion=criterion)
    return export_task(db, track, criterion=criterion)
