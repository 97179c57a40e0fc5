"""Reading a tool's export: its JSON records, the fields that give each role and the question to read, errors
that point at a record and a field, and the count of what is left out.

Every problem is an :class:`~stableval.errors.InputError` naming the file, the record (``row``: the 1-based
position of the task, record, battle or line in the export), the field (``column``: a path such as
``annotations[2].completed_by``), the value and what is allowed.

>>> import json, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "battles.json"
>>> _ = path.write_text(json.dumps([{"model_a": "A"}, {"model_a": "B"}]))
>>> [record["model_a"] for record in json_records(path, what="battles")]
['A', 'B']
>>> tally = Tally()
>>> tally.add("skipped annotation(s)", 2)
>>> tally.notes()
['left out 2 skipped annotation(s)']
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from stableval.data.columns import ROLE_ALIASES
from stableval.data.options import InputOptions
from stableval.data.pairwise import PAIRWISE_ALIASES
from stableval.errors import InputError

__all__ = ["Tally", "chosen_question", "field", "id_text", "json_document", "json_records", "number_text",
           "record_error", "role_key"]


def _readable(path: Path, what: str) -> bytes:
    if not path.exists():
        raise InputError("file not found", file=str(path), allowed=f"an existing file: {what}")
    if path.is_dir():
        raise InputError("is a folder, not a file", file=str(path), allowed=what)
    data = path.read_bytes()
    if not data.strip():
        raise InputError("file is empty", file=str(path), allowed=what)
    return data


def _decode(path: Path, data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"line {line} is not UTF-8 text ({error.reason}); re-save the file as UTF-8",
                         file=str(path), allowed=what) from None


def json_document(path: str | os.PathLike[str], *, what: str) -> Any:
    """The JSON document in ``path``; a missing, empty or malformed file names the line and what was expected
    (``what``)."""
    path = Path(path)
    text = _decode(path, _readable(path, what), what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}", file=str(path),
                         line=error.lineno, allowed=what) from None


def json_records(path: str | os.PathLike[str], *, what: str) -> list[Any]:
    """The records of a JSON list or of JSON Lines (one JSON value per line; blank lines skipped), in file order.

    A ``.jsonl``/``.ndjson`` file is read as JSON Lines; any other as one JSON document, which must be a list (a
    file of several JSON values is read as JSON Lines).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judgments.jsonl"
    >>> _ = path.write_text('{"score": 8}\\n\\n{"score": 3}\\n')
    >>> json_records(path, what="judgments")
    [{'score': 8}, {'score': 3}]
    """
    path = Path(path)
    text = _decode(path, _readable(path, what), what)
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            if error.msg != "Extra data":
                raise InputError(f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}",
                                 file=str(path), line=error.lineno, allowed=what) from None
        else:
            if not isinstance(document, list):
                raise InputError("the JSON document is not a list of records", file=str(path),
                                 value=type(document).__name__, allowed=what)
            return document
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise InputError(f"line {number} is not JSON: {error.msg}", file=str(path), line=number,
                             allowed=f"{what}: one JSON object per line") from None
    return records


def record_error(problem: str, *, source: str, record: int | None, field: str | None, value: Any = None,
                 allowed: str | None = None, has_value: bool | None = None, option: str | None = None,
                 options: Mapping[str, str | None] | None = None) -> InputError:
    """An :class:`~stableval.errors.InputError` at ``record`` (1-based; the error's ``row``) and ``field`` (its
    ``column``)."""
    return InputError(problem, file=source, row=record, column=field, value=value, allowed=allowed,
                      has_value=has_value, option=option, options=options)


def field(record: Any, name: str, *, source: str, number: int, where: str = "", required: bool = True,
          what: str = "a value") -> Any:
    """``record[name]`` of a JSON object; a record that is not an object, or a missing required field, names the
    record and the field (``where`` + ``name``)."""
    if not isinstance(record, dict):
        raise record_error("not a JSON object", source=source, record=number, field=where.rstrip(".") or None,
                           value=type(record).__name__, allowed=f"an object with {name!r}")
    if name not in record or (required and record[name] is None):
        if not required:
            return None
        raise record_error(f"missing field {name!r}", source=source, record=number, field=where + name,
                           allowed=what)
    return record[name]


def number_text(value: float) -> str:
    """A number as a level name: integers without a point (``8.0`` → ``"8"``), others as Python prints them.

    >>> number_text(8.0), number_text(7.5), number_text(-1)
    ('8', '7.5', '-1')
    """
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def id_text(value: Any) -> str | None:
    """A JSON scalar as an id (``7`` → ``"7"``, ``7.0`` → ``"7"``, text stripped); ``None`` for null, empty text,
    NaN, objects and lists."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return None if math.isnan(value) else number_text(value)
    text = str(value).strip()
    return text or None


class Tally:
    """What an importer left out, by reason, in the order first seen; :meth:`notes` words it for the table notes."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, reason: str, count: int = 1) -> None:
        if count:
            self.counts[reason] += count

    def __getitem__(self, reason: str) -> int:
        return self.counts[reason]

    def notes(self) -> list[str]:
        return [f"left out {count:,} {reason}" for reason, count in self.counts.items()]


def role_key(keys: Iterable[str], role: str, options: InputOptions, *, source: str = "<export>", where: str = ""
             ) -> str | None:
    """The key of the tool's fields (``keys``) that gives ``role``: the one ``columns`` names for it, else the
    first of the role's aliases present (case-insensitive); ``None`` if there is none. A named key the export does
    not have raises, listing the keys it has (``where``: the fields' place in a record, for the message).

    >>> role_key(["prompt_id", "model"], "agent", InputOptions()), role_key(["x"], "item", InputOptions())
    ('model', None)
    """
    present = list(dict.fromkeys(str(key) for key in keys))
    chosen = (options.columns or {}).get(role)
    if chosen is not None:
        if chosen not in present:
            raise InputError(f"no field {chosen!r} to read the {role} from", file=source, column=where + chosen,
                             allowed=", ".join(present) or "(the export's records have no fields)",
                             option=f"columns.{role}")
        return chosen
    aliases = ROLE_ALIASES.get(role) or PAIRWISE_ALIASES.get(role, ())
    lowered = {key.strip().lower(): key for key in present}
    return next((lowered[alias] for alias in aliases if alias in lowered), None)


def chosen_question(found: Mapping[str, Any], options: InputOptions, *, source: str, kind: str,
                    readable: str) -> str:
    """The question to read among those an export answers (``found``: name → anything), ``columns.label`` naming
    it when there are several. ``kind`` names the questions in messages (``control``, ``question``, ``scorer``);
    ``readable`` says which kinds can be read.

    >>> chosen_question({"quality": 1}, InputOptions(), source="x.json", kind="question", readable="ratings")
    'quality'
    """
    named = (options.columns or {}).get("label")
    if named is not None:
        if named not in found:
            raise InputError(f"no {kind} {named!r} with answers stableval can read", file=source,
                             allowed=", ".join(found) or f"none: no {readable}", option="columns.label")
        return named
    if not found:
        raise InputError(f"no {kind} with answers stableval can read", file=source, allowed=readable)
    if len(found) > 1:
        raise InputError(f"the export answers {len(found)} {kind}s; name the one to read with {{columns.label}}",
                         file=source, allowed=", ".join(found), option="columns.label",
                         options={"columns.label": "NAME"})
    return next(iter(found))
