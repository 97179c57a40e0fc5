"""The admin's "New track" form: its text fields turned into the arguments of
:func:`stableval.portal.admin.manage.create_track`, the function ``stableval portal track`` calls too, so the web
form and the command line refuse the same things with the same messages.

Only the reading of text (a whole number, a decimal, the condition list from the text box or an uploaded file) is
done here; every range and every task-type rule is checked by :func:`~stableval.portal.admin.manage.track_problems`,
which ``create_track`` calls (it raises the first problem; the form shows them all). A problem is a
:class:`FieldError` naming the form field, so the page can show it in the error summary and beside the field
(``aria-invalid``/``aria-describedby``).

>>> arguments, errors = track_arguments({"slug": "derm", "k": "2", "conditions": "Eczema\\nTinea"})
>>> arguments["k"], arguments["conditions"], errors
(2, ['Eczema', 'Tinea'], [])
>>> track_arguments({"slug": "x", "k": "two"})[1]
[FieldError(field='k', message="Ratings per question (k): not a whole number: got 'two'")]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stableval.errors import InputError
from stableval.portal.admin.manage import track_problems
from stableval.portal.settings import DEFAULT_TASK
from stableval.portal.tasks.ddx import parse_conditions

__all__ = ["FIELDS", "FieldError", "field_error", "form_problems", "track_arguments"]

#: Form fields (= create_track keyword, except ``conditions_file``) and their labels, in the order of the form.
FIELDS: dict[str, str] = {
    "slug": "Name", "title": "Title", "task": "Task type", "criteria": "Criteria", "scale": "Scale",
    "conditions": "Condition list", "conditions_file": "Condition list file", "max_conditions": "Most conditions "
    "per answer", "k": "Ratings per question (k)", "flag_limit": "Flags that retire a question",
    "lease_hours": "Lease (hours)", "gold_rate": "Share of gold questions", "qc_threshold": "Pause threshold",
    "qc_min_gold": "Gold questions before the threshold applies", "qualification": "Qualification",
    "max_k": "Raters per question at most", "adaptive_threshold": "Uncertain below",
    "adaptive_every": "Refresh the adaptive model after", "specialties": "Specialty list",
    "fallback": "When no question of the rater's specialty is left"}
_WHOLE = {"k": 3, "flag_limit": 2, "qc_min_gold": 3, "qualification": 0, "max_k": 0, "adaptive_every": 10,
          "max_conditions": 5}
_DECIMAL = {"lease_hours": 24.0, "gold_rate": 0.0, "qc_threshold": 0.7, "adaptive_threshold": 0.8}


@dataclass(frozen=True)
class FieldError:
    """A problem with one form field: the field's id and the message shown for it."""

    field: str
    message: str


def field_error(error: InputError, field: str | None = None) -> FieldError:
    """The :class:`FieldError` of an :class:`InputError` from :func:`~stableval.portal.admin.manage.create_track`: the
    field is the error's column (unknown columns: the name field)."""
    field = field or (error.column if error.column in FIELDS else "slug")
    where = ", ".join(p for p in (error.file, f"row {error.row}" if error.row is not None else None) if p)
    text = error.problem + (f": got {error.value!r}" if error.has_value else "") + \
        (f"; allowed: {error.allowed}" if error.allowed else "")
    return FieldError(field, f"{FIELDS[field]}: {where + ': ' if where else ''}{text}")


def _number(fields: Mapping[str, str], name: str, kind: type, errors: list[FieldError]) -> Any:
    text = str(fields.get(name) or "").strip()
    if not text:
        return _WHOLE.get(name, _DECIMAL.get(name))
    try:
        if not text.isascii():
            raise ValueError(text)
        return kind(text)
    except ValueError:
        wanted = "a whole number" if kind is int else "a number"
        errors.append(FieldError(name, f"{FIELDS[name]}: not {wanted}: got {text[:40]!r}"))
        return _WHOLE.get(name, _DECIMAL.get(name))  # the default, so the other fields can still be checked


def track_arguments(fields: Mapping[str, str], *, conditions_file: tuple[str, bytes] | None = None
                    ) -> tuple[dict[str, Any], list[FieldError]]:
    """The keyword arguments of :func:`~stableval.portal.admin.manage.create_track` (``db`` aside) from the form's text
    fields, and the fields that could not be read (those take their default in the arguments, so
    :func:`form_problems` can still check the rest). ``conditions_file`` is an uploaded condition list (its file
    name and bytes); it wins over the ``conditions`` text box. Empty fields take the command line's defaults."""
    errors: list[FieldError] = []
    arguments: dict[str, Any] = {name: _number(fields, name, int, errors) for name in _WHOLE}
    arguments.update({name: _number(fields, name, float, errors) for name in _DECIMAL})
    text = {name: str(fields.get(name) or "") for name in ("slug", "title", "task", "criteria", "scale",
                                                           "conditions", "specialties", "fallback")}
    arguments.update(slug=text["slug"].strip(), title=text["title"], task=text["task"].strip() or DEFAULT_TASK,
                     criteria=[c for c in text["criteria"].split(",") if c.strip()] or None,
                     scale=text["scale"] if text["scale"].strip() else None,
                     specialties=text["specialties"] if text["specialties"].strip() else None,
                     fallback=text["fallback"].strip() or "general", conditions=None)
    try:
        if conditions_file is not None:
            name, data = conditions_file
            try:
                arguments["conditions"] = parse_conditions(data.decode("utf-8"), name)
            except UnicodeDecodeError as error:
                raise InputError(f"file is not UTF-8 text ({error.reason})", file=name) from None
        elif text["conditions"].strip():
            arguments["conditions"] = parse_conditions(text["conditions"], "condition list")
    except InputError as error:
        errors.append(field_error(error, "conditions_file" if conditions_file is not None else "conditions"))
    return arguments, errors


def form_problems(fields: Mapping[str, str], *, conditions_file: tuple[str, bytes] | None = None
                  ) -> tuple[dict[str, Any], list[FieldError]]:
    """:func:`track_arguments` and every problem of the form at once: the fields that could not be read, then
    what :func:`~stableval.portal.admin.manage.track_problems` (the checks of ``create_track``) refuses; one message per
    field, in the order of the form.

    >>> [e.field for e in form_problems({"slug": "Bad name", "k": "0", "scale": "a", "lease_hours": "x"})[1]]
    ['slug', 'scale', 'k', 'lease_hours']
    """
    arguments, errors = track_arguments(fields, conditions_file=conditions_file)
    errors += [field_error(error) for error in track_problems(**arguments)[1]]
    first: dict[str, FieldError] = {}
    for error in errors:  # an unreadable file and "a ddx track needs its condition list": one message
        first.setdefault("conditions" if error.field == "conditions_file" else error.field, error)
    order = list(FIELDS)
    return arguments, sorted(first.values(), key=lambda e: order.index(e.field))
