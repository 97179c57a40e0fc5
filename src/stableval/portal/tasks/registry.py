"""The task-type registry: every kind of rater task, declared once in its own module, listed here once.

A track has one task type (``--task`` at creation; default ``pairwise``). Each module of
:data:`TASK_MODULES` declares ``TASK`` (a :class:`~stableval.portal.tasks.base.TaskType`): its form, checks, stored
answer, gold answers, export, results and ratings, and its capabilities as fields. The admin's "New track" form,
``stableval portal track --task`` and ``import --task``, the step pages, the exports, the results page, quality
control, live diagnostics and adaptive assignment all read :data:`TASKS`; none of them names a type. To add a type,
write its module and its page template(s), and add one line below (see docs/portal.md, "Task types"). A type's
name is its module's name with ``-`` for ``_`` (``rank_documents`` declares ``rank-documents``), so the command line
lists the names (:func:`task_names`) without importing the types; :data:`TASKS` is built on first use.

>>> list(TASKS)
['pairwise', 'single', 'mcq', 'ddx', 'rank-documents']
>>> task_type_of("ddx").steps
('ddx',)
>>> try:
...     task_type_of("essay")
... except InputError as error:
...     print(error.problem, "-", error.allowed)
unknown task type - pairwise, single, mcq, ddx, rank-documents
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stableval.errors import InputError
from stableval.portal.settings import SETTINGS, TrackSettings

if TYPE_CHECKING:
    from stableval.portal.tasks.base import TaskType

__all__ = ["TASKS", "TASK_MODULES", "task_names", "task_options", "task_type_of"]

#: the modules of ``stableval.portal.tasks`` that declare a task type (``TASK = ...``), in the order forms and
#: help list them: adding a type is its module, its template and one line here
TASK_MODULES: tuple[str, ...] = (
    "pairwise",
    "single",
    "mcq",
    "ddx",
    "rank_documents",
)

#: name → task type (built on first use: ``from stableval.portal.tasks.registry import TASKS``)
TASKS: dict[str, TaskType]


def task_names() -> tuple[str, ...]:
    """The names of the registered task types, in order, without importing them.

    >>> task_names()
    ('pairwise', 'single', 'mcq', 'ddx', 'rank-documents')
    """
    return tuple(module.replace("_", "-") for module in TASK_MODULES)


def _build() -> dict[str, TaskType]:
    tasks = {}
    for module, name in zip(TASK_MODULES, task_names(), strict=True):
        task = importlib.import_module(f"stableval.portal.tasks.{module}").TASK
        if task.name != name:
            raise ValueError(f"stableval.portal.tasks.{module} declares {task.name!r}: a type's name is its "
                             f"module's name with - for _ ({name!r})")
        tasks[name] = task
    return tasks


def __getattr__(name: str) -> Any:
    if name == "TASKS":
        globals()["TASKS"] = _build()
        return globals()["TASKS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def task_type_of(name: str) -> TaskType:
    """The task type called ``name`` (an :class:`InputError` listing the names otherwise)."""
    from stableval.portal.tasks.registry import TASKS

    if name not in TASKS:
        raise InputError("unknown task type", column="task", value=name, allowed=", ".join(TASKS))
    return TASKS[name]


def task_options(settings: TrackSettings) -> tuple[list[str] | None, dict[str, Any] | None]:
    """The ``(scale, task_options)`` a track of these settings stores, read by its task type; refuses an optional
    setting that only another type reads (its ``settings``), when given."""
    from stableval.portal.tasks.registry import TASKS

    chosen = task_type_of(settings.task)
    for other in TASKS.values():
        for setting in other.settings:
            value = getattr(settings, setting)
            if value is None or SETTINGS[setting].default is not None or setting in chosen.settings:
                continue
            noun = SETTINGS[setting].title.lower()
            shown = value if isinstance(value, str | Path) else f"{len(value)} {noun} entries"
            raise InputError(f"a {noun} applies to {other.label} tracks only", column=setting, value=str(shown),
                             allowed=f"no {noun}, or --task {other.name}")
    return chosen.track_options(settings)
