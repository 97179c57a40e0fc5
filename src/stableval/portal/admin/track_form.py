"""The admin's "New track" form: its fields are the declared track settings (:mod:`stableval.portal.settings`), and
their text becomes the :class:`~stableval.portal.settings.TrackSettings` that
:func:`stableval.portal.admin.manage.create_track` takes, the function ``stableval portal track`` calls too, so the
web form and the command line refuse the same things with the same messages.

Only the reading of text is done here (a whole number, a decimal, a comma-separated list; a setting that is a text
file, such as a ddx track's condition list, typed in its text box or uploaded, read by the task type that owns it);
every range and every task-type rule is checked by :func:`~stableval.portal.admin.manage.track_problems`, which
``create_track`` calls (it raises the first problem; the form shows them all). A problem is a :class:`FieldError`
naming the form field, so the page can show it in the error summary and beside the field
(``aria-invalid``/``aria-describedby``).

>>> slug, settings, errors = track_arguments({"slug": "derm", "k": "2", "criteria": "Accuracy, Safety"})
>>> slug, settings.k, settings.criteria, errors
('derm', 2, ['Accuracy', ' Safety'], [])
>>> track_arguments({"slug": "x", "k": "two"})[2]
[FieldError(field='k', message="Ratings per question (k): not a whole number: got 'two'")]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stableval.errors import InputError
from stableval.portal.admin.manage import track_problems
from stableval.portal.settings import CHANGEABLE, GROUPS, MARKDOWN, SETTINGS, TEXT_KINDS, TrackSettings, track_settings
from stableval.portal.tasks.registry import TASKS

__all__ = ["FIELDS", "FieldError", "FormField", "FormSection", "change_arguments", "change_fields", "field_error",
           "form_fields", "form_layout", "form_problems", "track_arguments"]


@dataclass(frozen=True)
class FormField:
    """One setting as the form shows it: ``widget`` is ``select`` (``choices``: value, label), ``file`` (an upload
    and a text box), ``markdown`` (a text box of Markdown), ``checkbox`` (a yes/no setting), ``numeric``,
    ``decimal`` (the input mode of a number) or ``text``; ``default`` is shown when nothing was posted."""

    name: str
    label: str
    help: str
    widget: str
    default: str
    choices: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FormSection:
    """A fieldset of the form (no legend: fields outside a fieldset)."""

    legend: str
    hint: str
    fields: tuple[FormField, ...]


def form_layout() -> tuple[FormSection, ...]:
    """The form's sections and fields, from the settings' declarations (:data:`~stableval.portal.settings.GROUPS`);
    the task type's choices are the registered types."""
    choice_lists = {"task": tuple((name, f"{name}: {task.title}") for name, task in TASKS.items())}

    grouped = {name for _, _, names in GROUPS for name in names}
    others = tuple(name for name, option in SETTINGS.items() if name not in grouped and option.kind in TEXT_KINDS)
    return tuple(FormSection(legend, hint, tuple(_shown(name, choice_lists) for name in names))
                 for legend, hint, names in (*GROUPS, ("", "", others)) if names)


def _shown(name: str, choice_lists: Mapping[str, tuple[tuple[str, str], ...]]) -> FormField:
    """One setting's form field, from its declaration."""
    option = SETTINGS[name]
    choices = choice_lists.get(name) or tuple((c, c) for c in option.choices or ())
    widget = "select" if choices else "markdown" if name in MARKDOWN else "file" if option.kind is Path else \
        {int: "numeric", float: "decimal", bool: "checkbox"}.get(option.kind, "text")
    default = "" if option.default is None else f"{option.default:g}" if option.kind is float else \
        str(option.default)
    return FormField(name, option.title, option.describe(), widget, default, choices)


def change_fields() -> tuple[FormField, ...]:
    """The fields of a track's "Edit" form: the settings that may change once the track exists
    (:data:`~stableval.portal.settings.CHANGEABLE`).

    >>> [(f.name, f.widget) for f in change_fields()]
    [('title', 'text'), ('overview', 'markdown'), ('instructions', 'markdown'), ('public', 'checkbox')]
    """
    return tuple(_shown(name, {}) for name in CHANGEABLE)


def change_arguments(fields: Mapping[str, str]) -> dict[str, Any]:
    """The changes an "Edit" form posts, for :func:`~stableval.portal.admin.manage.change_track`: every changeable
    setting (a checkbox left unticked is False, an empty text box empty).

    >>> change_arguments({"title": "Derm", "overview": "**Aims**"})
    {'title': 'Derm', 'overview': '**Aims**', 'instructions': '', 'public': False}
    """
    return {name: _checkbox(fields.get(name)) if SETTINGS[name].kind is bool else str(fields.get(name) or "")
            for name in CHANGEABLE}


def _checkbox(value: str | None) -> bool:
    """A checkbox's posted value: ticked (any value sent) or not (none)."""
    return value is not None and str(value) != ""


def form_fields() -> dict[str, str]:
    """The form's fields and their labels, in the order of the form: the name, then every setting a form can
    carry, a text-file setting followed by its upload field (``<name>_file``)."""
    fields = {"slug": "Name"}
    for section in form_layout():
        for shown in section.fields:
            fields[shown.name] = shown.label
            if shown.widget == "file":
                fields[f"{shown.name}_file"] = f"{shown.label} file"
    return fields


#: Form fields and their labels, in the order of the form (:func:`form_fields`).
FIELDS: dict[str, str] = form_fields()


@dataclass(frozen=True)
class FieldError:
    """A problem with one form field: the field's id and the message shown for it."""

    field: str
    message: str


def field_error(error: InputError, field: str | None = None) -> FieldError:
    """The :class:`FieldError` of an :class:`InputError` from :func:`~stableval.portal.admin.manage.create_track`:
    the field is the error's column (unknown columns: the name field)."""
    field = field or (error.column if error.column in FIELDS else "slug")
    where = ", ".join(p for p in (error.file, f"row {error.row}" if error.row is not None else None) if p)
    text = error.problem + (f": got {error.value!r}" if error.has_value else "") + \
        (f"; allowed: {error.allowed}" if error.allowed else "")
    return FieldError(field, f"{FIELDS[field]}: {where + ': ' if where else ''}{text}")


def _number(name: str, text: str, errors: list[FieldError]) -> Any:
    option = SETTINGS[name]
    try:
        if not text.isascii():
            raise ValueError(text)
        return option.kind(text)
    except ValueError:
        wanted = "a whole number" if option.kind is int else "a number"
        errors.append(FieldError(name, f"{option.title}: not {wanted}: got {text[:40]!r}"))
        return option.default  # the default, so the other fields can still be checked


def _text_file(name: str, text: str, source: str) -> Any:
    """A text-file setting typed or uploaded, read by the task type that declares it."""
    owner = next(task for task in TASKS.values() if name in task.settings)
    return owner.read_setting(name, text, source)


def track_arguments(fields: Mapping[str, str], *, files: Mapping[str, tuple[str, bytes]] | None = None
                    ) -> tuple[str, TrackSettings, list[FieldError]]:
    """The track's name and :class:`~stableval.portal.settings.TrackSettings` from the form's text fields, and the
    fields that could not be read (those take their default, so :func:`form_problems` can still check the rest).
    ``files`` holds uploaded text files by field (``conditions_file``: its file name and bytes); an upload wins
    over its text box. Empty fields take the declared defaults."""
    errors: list[FieldError] = []
    values: dict[str, Any] = {}
    for name, option in SETTINGS.items():
        if option.kind not in TEXT_KINDS:
            continue  # set from Python only
        text = str(fields.get(name) or "")
        upload = (files or {}).get(f"{name}_file")
        if name in MARKDOWN:
            if text.strip():
                values[name] = text  # read and checked by track_problems
        elif option.kind is bool:
            values[name] = _checkbox(fields.get(name))
        elif option.kind is Path:
            try:
                if upload is not None:
                    try:
                        values[name] = _text_file(name, upload[1].decode("utf-8"), upload[0])
                    except UnicodeDecodeError as error:
                        raise InputError(f"file is not UTF-8 text ({error.reason})", file=upload[0]) from None
                elif text.strip():
                    values[name] = _text_file(name, text, option.title.lower())
            except InputError as error:
                errors.append(field_error(error, f"{name}_file" if upload is not None else name))
        elif not text.strip():
            continue
        elif option.kind in (int, float):
            values[name] = _number(name, text.strip(), errors)
        else:
            values[name] = option.parse(text) if option.parse is not None else text.strip()
    return str(fields.get("slug") or "").strip(), track_settings(**values), errors


def form_problems(fields: Mapping[str, str], *, files: Mapping[str, tuple[str, bytes]] | None = None
                  ) -> tuple[str, TrackSettings, list[FieldError]]:
    """:func:`track_arguments` and every problem of the form at once: the fields that could not be read, then what
    :func:`~stableval.portal.admin.manage.track_problems` (the checks of ``create_track``) refuses; one message per
    field, in the order of the form.

    >>> [e.field for e in form_problems({"slug": "Bad name", "k": "0", "scale": "a", "lease_hours": "x"})[2]]
    ['slug', 'scale', 'k', 'lease_hours']
    """
    slug, settings, errors = track_arguments(fields, files=files)
    errors += [field_error(error) for error in track_problems(slug, settings)[1]]
    first: dict[str, FieldError] = {}
    for error in errors:  # an unreadable file and "a ddx track needs its condition list": one message
        first.setdefault(error.field.removesuffix("_file"), error)
    order = list(FIELDS)
    return slug, settings, sorted(first.values(), key=lambda e: order.index(e.field))
