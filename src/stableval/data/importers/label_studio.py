"""Label Studio: a project's JSON export (Export → JSON) → ratings or pairwise votes.

The export is a list of tasks; each has ``id``, ``data`` (the task's input fields) and ``annotations``, each
annotation ``completed_by`` (the annotator's user id, or an object with ``id``/``email``), ``was_cancelled``
(skipped) and ``result``: one entry per control answered, ``{"from_name", "type", "value"}``. One control (the
*question*; ``columns.label`` names it when several are answered) is read:

* ``rating`` (``value.rating``), ``number`` (``value.number``), ``choices`` (``value.choices``, one choice) →
  ratings of the task's agent (``data.agent``/``data.model``/..., ``columns.agent``, or ``default_agent``). Ratings
  and numbers are a numeric scale (a rating's levels run from 1 to the highest given); choices are words whose
  order the user names with ``levels`` (numeric choices excepted);
* ``pairwise`` (``value.selected``: ``left`` or ``right``) → a vote between the task's two agents
  (``data.agent_a``/``data.model_a``/... and ``data.agent_b``/...; ``columns.agent_a``/``agent_b``);
* ``ranker`` (``value.ranker``: the list's item ids, best first; older exports key that list by the control's
  name) → the ranked ids are the agents, and every pair is a vote (bucketed rankers are groups, not an order: left
  out).

The item is the task's ``data.item``/``data.question_id``/... field (``columns.item``), else the task id. Skipped
annotations, tasks nobody annotated and answers that cannot be one judgment are left out and counted; model
predictions (pre-annotations) are not annotations and are not read.

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> task = {"id": 1, "data": {"prompt_id": "q1", "model": "A"},
...         "annotations": [{"completed_by": 7, "was_cancelled": False,
...                          "result": [{"from_name": "stars", "type": "rating", "value": {"rating": 4}}]},
...                         {"completed_by": 8, "was_cancelled": True, "result": []}]}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "export.json"
>>> _ = path.write_text(json.dumps([task]))
>>> imported = read_label_studio(path, InputOptions())
>>> imported.frame.to_dict("records"), imported.levels
([{'item': 'q1', 'agent': 'A', 'rater': '7', 'label': '4'}], ('1', '2', '3', '4'))
>>> imported.notes[-1]
'left out 1 skipped (cancelled) annotation(s)'
"""

from __future__ import annotations

import os
from typing import Any

from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import (
    Tally,
    chosen_question,
    id_text,
    json_document,
    number_text,
    record_error,
    role_key,
)
from stableval.data.importers.scales import label_scale, ranking_votes
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["READABLE", "read_label_studio"]

#: The controls read, and the key of ``value`` each answers in.
READABLE: dict[str, str] = {"rating": "rating", "number": "number", "choices": "choices", "pairwise": "selected",
                            "ranker": "ranker"}
_WHAT = "a Label Studio JSON export: a list of tasks with data and annotations"
_SIDES = {"left": "a", "right": "b"}


def read_label_studio(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read a Label Studio JSON export (see the module docstring)."""
    source = str(path)
    tasks = json_document(path, what=_WHAT)
    if not isinstance(tasks, list):
        raise InputError("the export is not a list of tasks", file=source, value=type(tasks).__name__,
                         allowed=_WHAT + " (Export → JSON, not JSON-MIN or CSV)")
    controls: dict[str, str] = {}
    data_keys: dict[str, None] = {}
    for number, task in enumerate(tasks, start=1):
        _data(task, number, source)
        data_keys.update(dict.fromkeys(str(key) for key in task["data"]))
        for annotation in _annotations(task, number, source):
            for result in annotation.get("result") or []:
                kind = result.get("type") if isinstance(result, dict) else None
                if kind in READABLE and isinstance(result.get("from_name"), str):
                    controls.setdefault(result["from_name"], kind)
    question = chosen_question(controls, options, source=source, kind="control",
                               readable="results of a Rating, Number, Choices, Pairwise or Ranker control")
    return _Reader(source, question, controls[question], list(data_keys), options).read(tasks)


def _data(task: Any, number: int, source: str) -> dict[str, Any]:
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise record_error("a task needs a data object", source=source, record=number, field="data",
                           value=task.get("data") if isinstance(task, dict) else type(task).__name__,
                           allowed=_WHAT)
    data: dict[str, Any] = task["data"]
    return data


def _annotations(task: dict[str, Any], number: int, source: str) -> list[dict[str, Any]]:
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise record_error("annotations must be a list of objects", source=source, record=number,
                           field="annotations", value=type(annotations).__name__, allowed=_WHAT)
    return annotations


class _Reader:
    """Reads one control's answers from every task."""

    def __init__(self, source: str, question: str, kind: str, data_keys: list[str], options: InputOptions) -> None:
        self.source, self.question, self.kind, self.options = source, question, kind, options
        self.value_field = f"annotations[].result[{question}].value.{READABLE[kind]}"
        self.item_key = role_key(data_keys, "item", options, source=source, where="data.")
        self.tally = Tally()
        self.agent_key = self.a_key = self.b_key = None
        if kind in ("rating", "number", "choices"):
            self.agent_key = role_key(data_keys, "agent", options, source=source, where="data.")
            if self.agent_key is None and options.default_agent is None:
                raise InputError(f"the tasks' data have no field naming the agent that control {question!r} rates",
                                 file=source, column="data",
                                 allowed="a data field agent, model or system, or name one with {columns.agent}; "
                                         "or {default_agent} when one agent is rated",
                                 option="columns.agent", options={"columns.agent": "NAME", "default_agent": "NAME"})
        elif kind == "pairwise":
            self.a_key = role_key(data_keys, "agent_a", options, source=source, where="data.")
            self.b_key = role_key(data_keys, "agent_b", options, source=source, where="data.")
            if self.a_key is None or self.b_key is None:
                raise InputError(f"the tasks' data do not name the two agents control {question!r} compares",
                                 file=source, column="data",
                                 allowed="data fields agent_a and agent_b (or model_a and model_b), or name them "
                                         "with {columns.agent_a} and {columns.agent_b}",
                                 option="columns.agent_a",
                                 options={"columns.agent_a": "NAME", "columns.agent_b": "NAME"})
        votes = kind in ("pairwise", "ranker")
        self.rows = Rows(*(("item", "agent_a", "agent_b", "rater", "winner") if votes
                           else ("item", "agent", "rater", "label")))
        self.rankings = 0

    def read(self, tasks: list[Any]) -> Imported:
        read = 0
        for number, task in enumerate(tasks, start=1):
            annotations = _annotations(task, number, self.source)
            self.tally.add("model prediction(s) (pre-annotations: not read)", len(task.get("predictions") or []))
            if not annotations:
                self.tally.add("task(s) nobody annotated")
                continue
            item = self._text(task, number, self.item_key, "item") if self.item_key else self._task_id(task, number)
            for position, annotation in enumerate(annotations):
                if annotation.get("was_cancelled"):
                    self.tally.add("skipped (cancelled) annotation(s)")
                    continue
                rater = self._annotator(annotation, number, position)
                answers = [r for r in annotation.get("result") or []
                           if isinstance(r, dict) and r.get("from_name") == self.question]
                if not answers:
                    self.tally.add(f"annotation(s) without an answer to {self.question!r}")
                elif len(answers) > 1:
                    self.tally.add(f"annotation(s) answering {self.question!r} more than once (per region or item)")
                else:
                    read += 1
                    self._answer(task, number, position, item, rater, answers[0].get("value"))
        return self._imported(read)

    # ------------------------------------------------------------------ one answer
    def _answer(self, task: dict[str, Any], number: int, position: int, item: str, rater: str, value: Any) -> None:
        where = f"annotations[{position}].result[{self.question}].value"
        key = READABLE[self.kind]
        if not isinstance(value, dict) or key not in value:
            raise record_error(f"a {self.kind} result without value.{key}", source=self.source, record=number,
                               field=where, value=value, allowed=f"value: {{{key!r}: ...}}")
        answer = value[key]
        if self.kind in ("rating", "number"):
            if isinstance(answer, bool) or not isinstance(answer, int | float):
                raise record_error(f"a {self.kind} that is not a number", source=self.source, record=number,
                                   field=f"{where}.{key}", value=answer, allowed="a number")
            self._rating(task, number, item, rater, number_text(answer))
        elif self.kind == "choices":
            if not isinstance(answer, list) or not all(isinstance(c, str) for c in answer):
                raise record_error("choices must be a list of texts", source=self.source, record=number,
                                   field=f"{where}.choices", value=answer, allowed="a list with the choice made")
            if len(answer) != 1:
                self.tally.add(f"answer(s) with {'no' if not answer else 'several'} choice(s)")
                return
            self._rating(task, number, item, rater, answer[0].strip())
        elif self.kind == "pairwise":
            if answer not in _SIDES:
                raise record_error("a pairwise result must select left or right", source=self.source, record=number,
                                   field=f"{where}.selected", value=answer, allowed="left, right")
            agent_a = self._text(task, number, self.a_key, "agent_a")
            agent_b = self._text(task, number, self.b_key, "agent_b")
            self.rows.add(number, item=item, agent_a=agent_a, agent_b=agent_b, rater=rater, winner=_SIDES[answer])
        else:
            self._ranking(number, where, item, rater, answer)

    def _rating(self, task: dict[str, Any], number: int, item: str, rater: str, label: str) -> None:
        agent = self._text(task, number, self.agent_key, "agent") if self.agent_key else str(self.options.default_agent)
        self.rows.add(number, item=item, agent=agent, rater=rater, label=label)

    def _ranking(self, number: int, where: str, item: str, rater: str, answer: Any) -> None:
        if isinstance(answer, dict):
            if list(answer) != [self.question]:
                self.tally.add("Ranker answer(s) sorted into buckets (groups, not an order)")
                return
            answer = answer[self.question]  # older exports key the ranking by the control's name
        if not isinstance(answer, list) or not all(id_text(x) for x in answer):
            raise record_error("a ranking must be a list of item ids, best first", source=self.source,
                               record=number, field=f"{where}.ranker", value=answer, allowed="a list of ids")
        ids = [str(id_text(x)) for x in answer]
        if len(set(ids)) != len(ids):
            raise record_error("a ranking names an item twice", source=self.source, record=number,
                               field=f"{where}.ranker", value=answer, allowed="distinct item ids")
        if len(ids) < 2:
            self.tally.add("ranking(s) of fewer than two items")
            return
        self.rankings += 1
        for agent_a, agent_b, winner in ranking_votes([[x] for x in ids]):
            self.rows.add(number, item=item, agent_a=agent_a, agent_b=agent_b, rater=rater, winner=winner)

    # ------------------------------------------------------------------ ids
    def _text(self, task: dict[str, Any], number: int, key: str | None, role: str) -> str:
        value = id_text(task["data"].get(str(key)))
        if value is None:
            raise record_error(f"no {role} in the task's data", source=self.source, record=number,
                               field=f"data.{key}", value=task["data"].get(str(key)),
                               allowed=f"a non-empty {role} id on every task", has_value=True)
        return value

    def _task_id(self, task: dict[str, Any], number: int) -> str:
        value = id_text(task.get("id"))
        if value is None:
            raise record_error("a task without an id", source=self.source, record=number, field="id",
                               allowed="the task id Label Studio exports, or a data field naming the item "
                                       "({columns.item})", option="columns.item")
        return value

    def _annotator(self, annotation: dict[str, Any], number: int, position: int) -> str:
        who = annotation.get("completed_by")
        if isinstance(who, dict):
            who = who.get("email") or who.get("id")
        text = id_text(who)
        if text is None:
            raise record_error("an annotation without its annotator", source=self.source, record=number,
                               field=f"annotations[{position}].completed_by", value=who, has_value=True,
                               allowed="the annotator's user id (or an object with id or email)")
        return text

    # ------------------------------------------------------------------ the result
    def _imported(self, read: int) -> Imported:
        notes = [f"control {self.question!r} ({self.kind}): {read:,} answer(s) read",
                 f"item: data.{self.item_key}" if self.item_key else "item: the task id"]
        fields = {"item": f"data.{self.item_key}" if self.item_key else "id",
                  "rater": "annotations[].completed_by"}
        levels = credit = None
        if self.kind in ("pairwise", "ranker"):
            fields.update(winner=self.value_field, agent_a=f"data.{self.a_key}" if self.a_key else self.value_field,
                          agent_b=f"data.{self.b_key}" if self.b_key else self.value_field)
            if self.kind == "ranker":
                notes.append(f"{self.rankings:,} ranking(s) → {len(self.rows):,} pairwise votes (every pair of a "
                             "ranking; the better-ranked item wins; the item ids are the agents)")
        else:
            fields.update(label=self.value_field, agent=f"data.{self.agent_key}" if self.agent_key else "")
            if self.agent_key is None:
                notes.append(f"no agent field: every judgment is of agent {self.options.default_agent!r}")
            seen = sorted(set(self.rows.values["label"]))
            scale = label_scale(seen, low=1 if self.kind == "rating" else None)
            if scale is None and self.options.levels is None and seen:
                raise InputError(f"the choices of control {self.question!r} are words, whose order the export "
                                 "does not state", file=self.source, column=self.value_field,
                                 allowed="name them worst first with {levels}", option="levels",
                                 options={"levels": ",".join(seen)})
            if scale is not None:
                levels, credit = scale
                if self.kind == "rating":
                    notes.append(f"levels 1..{levels[-1]}: up to the highest rating given (the export does not "
                                 "state the control's maxRating; name the full scale with levels)")
                elif self.options.levels is None:
                    notes.append(f"levels {levels[0]}..{levels[-1]}: the values given (name the full scale with "
                                 "levels)")
        return self.rows.imported(fields, [*notes, *self.tally.notes()], levels=levels, credit=credit)
