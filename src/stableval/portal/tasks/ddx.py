"""``ddx``: an ordered differential diagnosis with "equally likely" groups (the Dermatology DDx protocol of Stutz
et al. 2023, arXiv:2307.02191), picked from the track's condition list.

* **Track**: ``--conditions FILE`` (one name per line; a line's number is the condition's index in the export) and
  ``--max-conditions`` (the rows of the form, at most :data:`MAX_CONDITIONS`).
* **Question file**: ``id, prompt`` [``reference, specialty, subspecialty, gold``].
* **Draft**: ``{"slots": [{"name": condition, "tie": bool}, ...]}`` (tie: as likely as the row above).
* **Gold**: the expected top condition, a name of the condition list; one judgment: correct when the condition is
  in the rater's first group.
* **Export**: ``dermatology_selectors.json`` (per case, each rater's partial ranking as ordered groups of condition
  indices; see :mod:`stableval.datasets.ddx`), with the condition names and the case ids beside it:
  ``stableval ddx FILE --conditions FILE.conditions.txt``. The admin's download gives the long table ``case,
  rater, group, condition``.
* **Results**: per condition, how often raters put it first (in the first group) and anywhere, and in how many
  cases; per case, the conditions put first most often.
* **Rankings**: each answer is a partial ranking of the condition list for the rater-aware ranking model (live rater
  diagnostics and adaptive assignment: :mod:`stableval.portal.work.ranking_model`).

>>> parse_conditions("Eczema\\nPsoriasis\\n\\n", "list")
['Eczema', 'Psoriasis']
>>> TASK.describe_gold(1, Track(task_options={"conditions": ["Eczema", "Psoriasis"]}))
'Psoriasis'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.portal.settings import MAX_CONDITIONS, TrackSettings
from stableval.portal.store.models import Assignment, Question, Track
from stableval.portal.tasks.base import Export, TaskType
from stableval.portal.tasks.ordering import RankingRecords
from stableval.portal.tasks.records import common_columns
from stableval.portal.tasks.rules import Violation
from stableval.portal.tasks.summary import summary_table

__all__ = ["MAX_CONDITIONS", "MAX_CONDITION_NAMES", "TASK", "DdxTask", "cases_path", "conditions_path", "ddx_groups",
           "ddx_json", "parse_conditions", "read_conditions"]



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


#: Most conditions of a ddx track's list (each page offers them all).
MAX_CONDITION_NAMES = 500


def parse_conditions(text: str, source: str) -> list[str]:
    """The checks of :func:`read_conditions` on text already read (the admin form's text box or upload);
    ``source`` names it in messages."""
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
    if len(names) > MAX_CONDITION_NAMES:  # every ddx page lists them all
        raise InputError("too many conditions", file=source, column="conditions", value=len(names),
                         allowed=f"at most {MAX_CONDITION_NAMES} conditions")
    return names


def _conditions(track: Track) -> list[str]:
    return list((track.task_options or {}).get("conditions", []))


def ddx_groups(task: dict[str, Any], conditions: list[str]) -> tuple[list[list[int]], list[Violation]]:
    """The rater's differential as ordered groups of condition indices (empty slots skipped; a ticked "equally
    likely" joins the condition above), and the problems: unknown or repeated conditions, nothing chosen."""
    index = {name.casefold(): i for i, name in enumerate(conditions)}
    groups: list[list[int]] = []
    problems, used = [], set()
    for number, slot in enumerate(task.get("slots") or []):
        name = slot.get("name", "")
        if not name:
            if slot.get("tie"):
                problems.append(Violation(f"condition-{number}", f"condition-{number}",
                                          f"Row {number + 1}: “equally likely” is ticked but no condition is chosen."))
            continue
        found = index.get(name.casefold())
        if found is None:
            problems.append(Violation(f"condition-{number}", f"condition-{number}",
                                      f"Row {number + 1}: “{name[:80]}” is not in the study’s condition list; "
                                      "choose one of the suggested names."))
            continue
        if found in used:
            problems.append(Violation(f"condition-{number}", f"condition-{number}",
                                      f"Row {number + 1}: {conditions[found]} is already listed above."))
            continue
        used.add(found)
        if slot.get("tie") and groups:
            groups[-1].append(found)
        else:
            groups.append([found])
    if not groups and not problems:
        problems.append(Violation("condition-0", "condition-0", "Choose at least one condition (the most likely "
                                                                "first)."))
    return groups, problems


def _natural(item: str) -> tuple[int, float, str]:
    try:
        return (0, float(item), "")
    except ValueError:
        return (1, 0.0, item)


def conditions_path(path: str) -> str:
    """Where the condition names of a ddx export to ``path`` go (one per line)."""
    return str(path).removesuffix(".json") + ".conditions.txt"


def cases_path(path: str) -> str:
    """Where the case ids of a ddx export to ``path`` go (one per line, in the order of the selectors)."""
    return str(path).removesuffix(".json") + ".cases.txt"


def ddx_json(result: Export) -> str:
    """The selectors of a ddx export as JSON text."""
    import json

    return json.dumps(result.selectors)


@dataclass(frozen=True)
class DdxTask(TaskType):
    """Rank a differential diagnosis from the track's condition list."""

    def example_question(self, number: int) -> dict[str, Any]:
        return {"id": f"case{number}", "prompt": f"Itchy rash on the arm, case {number}."}

    def example_gold(self, number: int) -> Any:
        conditions = list(self.example_settings["conditions"])
        return conditions[number % len(conditions)]

    def example_answer(self, track: Track, question: Question, step: str) -> dict[str, str]:
        conditions = _conditions(track)
        return {"condition-0": conditions[question.id % (len(conditions) - 1)], "condition-1": conditions[-1],
                "tie-1": "on"}

    def track_options(self, settings: TrackSettings) -> tuple[list[str] | None, dict[str, Any] | None]:
        """The condition list (names, or a file of them) and the most conditions per answer (its bounds are
        declared with the setting: :data:`stableval.portal.settings.SETTINGS`)."""
        conditions, max_conditions = settings.conditions, settings.max_conditions
        if isinstance(conditions, Path):
            conditions = read_conditions(conditions)
        elif conditions:  # names given from Python: the checks of a file
            conditions = parse_conditions("\n".join(str(name) for name in conditions), "conditions")
        if not conditions:
            raise InputError("a ddx track needs its condition list", column="conditions",
                             allowed="--conditions FILE (one condition per line)")
        return None, {"conditions": list(conditions), "max_conditions": int(max_conditions)}

    def read_setting(self, name: str, text: str, source: str) -> list[str]:
        """The condition list typed or uploaded (the checks of :func:`read_conditions`)."""
        return parse_conditions(text, source)

    def describe_track(self, track: Track) -> str:
        options = track.task_options or {}
        return (f"{len(options.get('conditions', []))} conditions, up to {options.get('max_conditions', 5)} per "
                "answer.")

    def read_question(self, record: dict[str, Any], row: int, source: str, normalise: Callable[[Any], str]
                      ) -> dict[str, Any]:
        return common_columns(record, row, source, normalise)

    def read_gold(self, value: Any, track: Track, payload: dict[str, Any], refuse: Callable[..., InputError]) -> int:
        names = _conditions(track)
        index = {name.casefold(): i for i, name in enumerate(names)}
        found = index.get(" ".join(str(value).split()).casefold()) if isinstance(value, str) else None
        if found is None:
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise refuse("the gold condition is not in the track's condition list",
                         f"one condition name of the track's list ({shown}); empty: not a gold question")
        return found

    def score_gold(self, gold: Any, answer: dict[str, Any], criteria: list[str]) -> tuple[int, int]:
        groups = answer.get("groups") or []
        return 1, int(bool(groups) and gold in groups[0])

    def describe_gold(self, gold: Any, track: Track) -> str:
        names = _conditions(track)
        return names[gold] if isinstance(gold, int) and 0 <= gold < len(names) else str(gold)

    def merge_step(self, task: dict[str, Any], draft: dict[str, Any], form: Any, track: Track, question: Question,
                   step: str, action: str) -> dict[str, Any]:
        limit = int((track.task_options or {}).get("max_conditions", 5))
        task["slots"] = [{"name": " ".join(str(form.get(f"condition-{i}") or "").split()),
                          "tie": i > 0 and form.get(f"tie-{i}") == "on"} for i in range(limit)]
        return task

    def step_problems(self, task: dict[str, Any], draft: dict[str, Any], track: Track, question: Question,
                      step: str) -> list[Violation]:
        return ddx_groups(task, _conditions(track))[1]

    def context(self, assignment: Assignment, question: Question, track: Track, draft: dict[str, Any], step: str,
                query: Any = None) -> dict[str, Any]:
        options = track.task_options or {}
        conditions = _conditions(track)
        limit = int(options.get("max_conditions", 5))
        task = draft.get("task") or {}
        slots = list(task.get("slots") or [])
        return {**super().context(assignment, question, track, draft, step, query), "conditions": conditions,
                "slots": slots + [{"name": "", "tie": False}] * (limit - len(slots)),
                "groups": [[conditions[c] for c in g] for g in ddx_groups(task, conditions)[0]]}

    def answer(self, task: dict[str, Any], track: Track, question: Question) -> dict[str, Any]:
        conditions = _conditions(track)
        groups, _ = ddx_groups(task, conditions)
        return {"groups": groups, "names": [[conditions[c] for c in g] for g in groups]}

    def export_rows(self, track: Track, frame: pd.DataFrame, notes: list[str]) -> Export:
        conditions = tuple(_conditions(track))
        by_case: dict[str, list[tuple[str, list[list[int]]]]] = {}
        for item, rater, answer in zip(frame["item"], frame["rater"], frame["answer"], strict=True):
            by_case.setdefault(str(item), []).append((str(rater), answer["groups"]))
        order = sorted(by_case, key=_natural)
        selectors = [[groups for _, groups in by_case[case]] for case in order]
        table = pd.DataFrame([{"case": case, "rater": rater, "group": g, "condition": conditions[c]}
                              for case in order for rater, groups in by_case[case]
                              for g, group in enumerate(groups, start=1) for c in group],
                             columns=["case", "rater", "group", "condition"])
        return Export(table, tuple(notes), self.name, selectors=selectors, conditions=conditions,
                      cases=tuple(order))

    def analysis_command(self, result: Export, path: str) -> str:
        return f"stableval ddx {path} --conditions {conditions_path(path)}"

    def summary(self, track: Track, frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, str]]:
        """The top conditions: per condition, how often raters put it first (in the first group) and anywhere,
        and in how many cases; per case, the conditions put first most often."""
        conditions = _conditions(track)
        case, items = pd.factorize(frame["item"])
        first = np.zeros((len(frame), len(conditions)), dtype=np.int64)
        anywhere = np.zeros_like(first)
        for row, answer in enumerate(frame["answer"]):  # JSON answers: a few conditions each
            for g, group in enumerate(answer.get("groups") or []):
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
        return {"conditions": summary_table("Top conditions", "How often each condition was ranked first (in the "
                                            "first, equally likely group), listed anywhere, and in how many cases; "
                                            "most often first first",
                                            ["Condition", "Ranked first", "Listed", "Cases"], condition_rows),
                "cases": summary_table("Per case", "The conditions raters put first most often (number of raters)",
                                       ["Case", "Raters", "Ranked first"], case_rows)}, {}

    def rankings(self, track: Track, frame: pd.DataFrame) -> RankingRecords:
        """Each answer's groups of conditions, most likely first; every condition of the track's list is an option
        (those nobody listed for a case share the model's pool)."""
        conditions = _conditions(track)
        records = [(str(rater), int(question), [[conditions[c] for c in group] for group in groups])
                   for rater, question, answer in zip(frame["rater"], frame["question_id"], frame["answer"],
                                                      strict=True)
                   if (groups := [g for g in (answer or {}).get("groups") or [] if g])]
        return records, conditions


TASK = DdxTask(
    name="ddx", title="Rank the differential diagnosis", label="ddx", steps=("ddx",),
    templates={"ddx": "task_ddx.html", "confirm": "task_confirm.html", "answer": "task_ddx_answer.html",
               "results": "task_results.html"},
    columns=("id", "prompt"),
    question_file="CSV, TSV, JSONL or Parquet with columns id, prompt (and optionally reference, specialty, "
                  "subspecialty, and gold: the expected top condition of a quality-control question)",
    gold_rule="A gold judgment is the answer's first group: correct when it holds the expected top condition.",
    analysis="stableval ddx", settings=("conditions", "max_conditions"), ordering=True, adaptive=True,
    example_settings={"conditions": ["Eczema", "Psoriasis", "Tinea corporis", "Urticaria"], "max_conditions": 3})
