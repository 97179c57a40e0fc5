"""Argilla (2.x): a dataset's records with their responses → ratings or pairwise votes.

Read either the folder ``Dataset.to_disk`` writes (``records.json`` and ``.argilla/settings.json``, whose question
types and options are then known), or a ``records.json`` alone (``Dataset.records.to_json``; the settings are read
from ``.argilla/settings.json`` beside it if there). A record is ``{"id", "fields", "metadata", "responses":
{question: [{"value", "user_id", "status"?}, ...]}, ...}``; the flattened form of ``records.to_list(flatten=True)``
and of Hub exports (``question.responses``, ``question.responses.users``, ``question.responses.status`` lists) is
read too.

One question is read (``columns.label`` names it when several have responses); every user's response is one
judgment by that user (``user_id``):

* a rating question → ratings on its numeric scale (the settings' options, else the values given);
* a label question → ratings whose labels the user orders with ``levels`` (numeric labels excepted);
* a ranking question → its options, ranked best first, are the agents; every pair is a vote (a shared rank is a
  tie). Without the settings, a list of texts is a ranking only if the values carry ranks (``{"value", "rank"}``):
  a multi-label answer looks the same.

The item is the record's ``id`` (``columns.item`` names a field or metadata key instead); the agent of a rating is
the metadata or field ``agent``/``model``/... (``columns.agent``) or ``default_agent``. Discarded and draft
responses are left out and counted; suggestions (model pre-annotations) are not read.

>>> import json, pathlib, tempfile
>>> from stableval.data.options import InputOptions
>>> record = {"id": "r1", "fields": {"prompt": "2+2?", "answer": "4"}, "metadata": {"model": "A"},
...           "responses": {"quality": [{"value": 4, "user_id": "u1", "status": "submitted"},
...                                     {"value": 2, "user_id": "u2", "status": "discarded"}]},
...           "suggestions": {}, "vectors": {}}
>>> path = pathlib.Path(tempfile.mkdtemp()) / "records.json"
>>> _ = path.write_text(json.dumps([record]))
>>> imported = read_argilla(path, InputOptions())
>>> imported.frame.to_dict("records"), imported.notes[-1]
([{'item': 'r1', 'agent': 'A', 'rater': 'u1', 'label': '4'}], 'left out 1 discarded response(s)')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stableval.data.importers.imported import Imported, Rows
from stableval.data.importers.records import (
    Tally,
    chosen_question,
    id_text,
    json_document,
    json_records,
    number_text,
    record_error,
    role_key,
)
from stableval.data.importers.scales import as_number, label_scale, number_scale, ranking_votes
from stableval.data.options import InputOptions
from stableval.errors import InputError

__all__ = ["read_argilla"]

_WHAT = "Argilla records: the records.json of Dataset.to_disk or Dataset.records.to_json (a list of records)"
_READABLE = ("rating", "label_selection", "ranking")
_SKIPPED = {"discarded": "discarded response(s)", "draft": "draft response(s) (not submitted)"}


@dataclass(frozen=True)
class _Response:
    value: Any
    user: Any
    status: str | None
    where: str


def _files(path: Path) -> tuple[Path, Path | None]:
    """The records file and the settings file (``None`` if absent) of a ``to_disk`` folder or a records file."""
    if path.is_dir():
        records = path / "records.json"
        if not records.exists():
            raise InputError("the folder has no records.json", file=str(path),
                             allowed="the folder Dataset.to_disk writes (records.json, .argilla/settings.json)")
        settings = path / ".argilla" / "settings.json"
    else:
        records, settings = path, path.parent / ".argilla" / "settings.json"
    return records, settings if settings.exists() else None


def _question_settings(path: Path | None) -> dict[str, tuple[str, list[Any]]]:
    """Question name → (type, option values) from ``.argilla/settings.json``."""
    if path is None:
        return {}
    settings = json_document(path, what="Argilla settings (.argilla/settings.json)")
    found = {}
    for number, question in enumerate(settings.get("questions") or [] if isinstance(settings, dict) else [], 1):
        inner = question.get("settings") if isinstance(question, dict) else None
        if not isinstance(inner, dict) or not isinstance(question.get("name"), str):
            raise record_error("a question without a name and settings", source=str(path), record=number,
                               field="questions[].settings", allowed="the settings Dataset.to_disk writes")
        options = [o.get("value") for o in inner.get("options") or [] if isinstance(o, dict)]
        found[question["name"]] = (str(inner.get("type", question.get("type", ""))), options)
    return found


def _responses(record: Any, number: int, source: str) -> dict[str, list[_Response]]:
    """Question → its responses in a record, nested or flattened."""
    if not isinstance(record, dict):
        raise record_error("a record must be a JSON object", source=source, record=number, field=None,
                           value=type(record).__name__, allowed=_WHAT)
    found: dict[str, list[_Response]] = {}
    nested = record.get("responses")
    if isinstance(nested, dict):
        for question, answers in nested.items():
            if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
                raise record_error("responses must be lists of objects", source=source, record=number,
                                   field=f"responses.{question}", value=answers,
                                   allowed='[{"value": ..., "user_id": ...}, ...]')
            found[question] = [_Response(a.get("value"), a.get("user_id"), a.get("status"),
                                         f"responses.{question}[{k}]") for k, a in enumerate(answers)]
        return found
    for key, values in record.items():
        if not key.endswith(".responses") or values is None:
            continue
        question = key[: -len(".responses")]
        users = record.get(f"{key}.users") or []
        statuses = record.get(f"{key}.status") or [None] * len(values)
        if not isinstance(values, list) or len(users) != len(values) or len(statuses) != len(values):
            raise record_error("flattened responses need equally long value, users and status lists", source=source,
                               record=number, field=key, value=values,
                               allowed=f"{key}, {key}.users (and {key}.status) lists of one length")
        found[question] = [_Response(v, u, s, f"{key}[{k}]")
                           for k, (v, u, s) in enumerate(zip(values, users, statuses, strict=True))]
    return found


def _kind(value: Any) -> str:
    """A question's type guessed from a response value (when the settings are not at hand)."""
    if isinstance(value, bool):
        return "other"
    if isinstance(value, int | float):
        return "rating"
    if isinstance(value, str):
        return "label_selection"
    if isinstance(value, list) and value and all(isinstance(v, dict) and "rank" in v for v in value):
        return "ranking"
    return "list" if isinstance(value, list) else "other"


def read_argilla(path: str | os.PathLike[str], options: InputOptions) -> Imported:
    """Read Argilla records (see the module docstring)."""
    records_path, settings_path = _files(Path(path))
    source = str(path)
    records = json_records(records_path, what=_WHAT)
    settings = _question_settings(settings_path)
    answered: dict[str, str] = {}
    keys: dict[str, None] = {}
    for number, record in enumerate(records, start=1):
        for question, answers in _responses(record, number, source).items():
            for answer in answers:
                if answer.value is not None:
                    answered.setdefault(question, settings[question][0] if question in settings
                                        else _kind(answer.value))
        for part in ("fields", "metadata"):
            if isinstance(record.get(part), dict):
                keys.update(dict.fromkeys(str(k) for k in record[part]))
        keys.update(dict.fromkeys(k for k in record if "." not in k and k not in ("responses", "suggestions")))
    named = (options.columns or {}).get("label")
    if named in answered and answered[named] == "list":
        raise InputError(f"question {named!r} has lists of texts as answers: a ranking or a multi-label answer",
                         file=source, allowed="the folder Dataset.to_disk writes, whose settings say which")
    readable = {q: kind for q, kind in answered.items() if kind in _READABLE}
    question = chosen_question(readable, options, source=source, kind="question",
                               readable="responses to a rating, label or ranking question")
    return _Reader(source, question, readable[question], settings.get(question, ("", []))[1], list(keys),
                   options).read(records)


class _Reader:
    """Reads one question's responses from every record."""

    def __init__(self, source: str, question: str, kind: str, choices: list[Any], keys: list[str],
                 options: InputOptions) -> None:
        self.source, self.question, self.kind, self.choices, self.options = source, question, kind, choices, options
        self.item_key = role_key(keys, "item", options, source=source) if (options.columns or {}).get("item") \
            else None
        self.agent_key = None
        if kind != "ranking":
            self.agent_key = role_key(keys, "agent", options, source=source)
            if self.agent_key is None and options.default_agent is None:
                raise InputError(f"the records name no agent whose answer question {question!r} rates",
                                 file=source, column="metadata",
                                 allowed="a metadata key or field agent, model or system, or name one with "
                                         "{columns.agent}; or {default_agent} when one agent is rated",
                                 option="columns.agent", options={"columns.agent": "NAME", "default_agent": "NAME"})
        self.rows = Rows(*(("item", "agent_a", "agent_b", "rater", "winner") if kind == "ranking"
                           else ("item", "agent", "rater", "label")))
        self.tally = Tally()
        self.rankings = 0

    def read(self, records: list[Any]) -> Imported:
        read = 0
        for number, record in enumerate(records, start=1):
            answers = _responses(record, number, self.source).get(self.question, [])
            kept = []
            for answer in answers:
                status = str(answer.status).lower() if answer.status is not None else None
                if status in _SKIPPED:
                    self.tally.add(_SKIPPED[status])
                elif answer.value is not None:
                    kept.append(answer)
            if not kept:
                self.tally.add(f"record(s) without a submitted response to {self.question!r}")
                continue
            item = self._lookup(record, number, self.item_key, "item") if self.item_key else self._id(record, number)
            for answer in kept:
                user = id_text(answer.user)
                if user is None:
                    raise record_error("a response without its user", source=self.source, record=number,
                                       field=answer.where + ".user_id", value=answer.user, has_value=True,
                                       allowed="the user_id of the annotator")
                read += 1
                if self.kind == "ranking":
                    self._ranking(number, item, user, answer)
                else:
                    agent = (self._lookup(record, number, self.agent_key, "agent") if self.agent_key
                             else str(self.options.default_agent))
                    self.rows.add(number, item=item, agent=agent, rater=user, label=self._label(number, answer))
        return self._imported(read)

    def _label(self, number: int, answer: _Response) -> str:
        value = answer.value
        if self.kind == "rating":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise record_error("a rating that is not a number", source=self.source, record=number,
                                   field=answer.where + ".value", value=value, allowed="a number")
            return number_text(value)
        text = id_text(value)
        if text is None:
            raise record_error("a label response that is not one label", source=self.source, record=number,
                               field=answer.where + ".value", value=value, has_value=True, allowed="one label")
        return text

    def _ranking(self, number: int, item: str, user: str, answer: _Response) -> None:
        value = answer.value
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            ranks: dict[Any, list[str]] = {}
            for entry in value:
                rank = entry.get("rank")
                ranks.setdefault(rank if rank is not None else len(ranks), []).append(str(id_text(entry.get("value"))))
            groups = [ranks[rank] for rank in sorted(ranks, key=lambda r: float(r))]
        elif isinstance(value, list) and all(id_text(v) for v in value):
            groups = [[str(id_text(v))] for v in value]
        else:
            raise record_error("a ranking must list the options best first", source=self.source, record=number,
                               field=answer.where + ".value", value=value,
                               allowed='["best", "next", ...] or [{"value": ..., "rank": 1}, ...]')
        if sum(len(g) for g in groups) < 2:
            self.tally.add("ranking(s) of fewer than two options")
            return
        self.rankings += 1
        for agent_a, agent_b, winner in ranking_votes(groups):
            self.rows.add(number, item=item, agent_a=agent_a, agent_b=agent_b, rater=user, winner=winner)

    def _id(self, record: dict[str, Any], number: int) -> str:
        value = id_text(record.get("id"))
        value = value if value is not None else id_text(record.get("_server_id"))
        if value is None:
            raise record_error("a record without an id", source=self.source, record=number, field="id",
                               allowed="the record id, or a field naming the item ({columns.item})",
                               option="columns.item")
        return value

    def _lookup(self, record: dict[str, Any], number: int, key: str | None, role: str) -> str:
        for part in ("metadata", "fields"):
            inner = record.get(part)
            if isinstance(inner, dict) and key in inner:
                value, where = inner[key], f"{part}.{key}"
                break
        else:
            value, where = record.get(str(key)), str(key)
        text = id_text(value)
        if text is None:
            raise record_error(f"no {role} in the record", source=self.source, record=number, field=where,
                               value=value, has_value=True, allowed=f"a non-empty {role} on every record")
        return text

    def _imported(self, read: int) -> Imported:
        kind = {"rating": "rating", "label_selection": "label", "ranking": "ranking"}[self.kind]
        notes = [f"question {self.question!r} ({kind}): {read:,} response(s) read",
                 f"item: {self.item_key}" if self.item_key else "item: the record id"]
        where = f"responses.{self.question}[].value"
        fields = {"item": self.item_key or "id", "rater": f"responses.{self.question}[].user_id"}
        levels = credit = None
        if self.kind == "ranking":
            fields.update(agent_a=where, agent_b=where, winner=where)
            notes.append(f"{self.rankings:,} ranking(s) → {len(self.rows):,} pairwise votes (every pair of a "
                         "ranking; the better-ranked option wins, a shared rank ties; the options are the agents)")
        else:
            fields.update(label=where, agent=self.agent_key or "")
            if self.agent_key is None:
                notes.append(f"no agent field: every judgment is of agent {self.options.default_agent!r}")
            numbers = [as_number(str(c)) for c in self.choices]
            scale: tuple[tuple[str, ...], tuple[float, ...]] | None
            if self.kind == "rating" and self.choices and all(n is not None for n in numbers):
                scale = number_scale([n for n in numbers if n is not None] + [
                    float(x) for x in self.rows.values["label"]])
            else:
                scale = label_scale(sorted(set(self.rows.values["label"])))
            seen = [str(c) for c in self.choices] or sorted(set(self.rows.values["label"]))
            if scale is None and self.options.levels is None:
                raise InputError(f"the labels of question {self.question!r} are words, whose order the export "
                                 "does not state", file=self.source, column=where,
                                 allowed="name them worst first with {levels}", option="levels",
                                 options={"levels": ",".join(seen)})
            if scale is not None:
                levels, credit = scale
                if not self.choices and self.options.levels is None:
                    notes.append(f"levels {levels[0]}..{levels[-1]}: the values given (no settings state the "
                                 "question's options; name the full scale with levels)")
        return self.rows.imported(fields, [*notes, *self.tally.notes()], levels=levels, credit=credit)
