"""The settings of a track, each declared once (a :class:`~stableval._options.Option`: label, help, default,
bounds, flag) and read everywhere: ``stableval portal track``'s flags, the admin's "New track" form, the checks of
:func:`stableval.portal.admin.manage.track_problems`, the column defaults of
:class:`stableval.portal.store.models.Track` and the settings table of docs/portal.md (:func:`settings_table`).

:class:`TrackSettings` is the record ``create_track(db, slug, settings)`` takes. A setting is a field of it whose
metadata holds its :class:`~stableval._options.Option`; :data:`SETTINGS` lists them by name, in the order of the
form (:data:`GROUPS` gives the form's sections). Settings whose value is not text (``rules``, a mapping) are set from
Python only. A setting without a column of its own in the ``tracks`` table is stored with the track's options
(``Track.task_options``) when it is not its default; :meth:`~stableval.portal.store.models.Track.setting` reads
any setting back. The task type's allowed values are the registered types
(:data:`stableval.portal.tasks.registry.TASKS`), checked by the type registry rather than listed here. The study's
texts (:data:`MARKDOWN`) are Markdown; the settings of :data:`CHANGEABLE` may change once the track exists.

>>> SETTINGS["k"].default, SETTINGS["gold_rate"].constraint, SETTINGS["k"].cli
(3, 'a number in [0, 1]', '--k')
>>> TrackSettings(k=5).k, track_settings(None, k=4, title="T").title
(5, 'T')
>>> [problem.column for problem in setting_problems(TrackSettings(k=0, gold_rate=2.0))]
['k', 'gold_rate']
>>> SETTINGS["public"].cli, SETTINGS["overview"].title, "overview" in CHANGEABLE
('--public', 'Overview', True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from stableval._options import Option
from stableval.errors import InputError

__all__ = ["CHANGEABLE", "DEFAULT_TASK", "FALLBACKS", "GROUPS", "MARKDOWN", "MAX_CONDITIONS", "MAX_CRITERIA", "MAX_K",
           "MAX_LEASE_HOURS", "MAX_STUDY_TEXT", "MAX_TITLE", "PROPOSAL_STATUSES", "SETTINGS", "TrackSettings",
           "setting_problems", "settings_table", "track_settings"]

#: Largest k, flag limit and gold-question counts a track may have.
MAX_K = 1000
#: Longest lease (hours): one year.
MAX_LEASE_HOURS = 24 * 366
#: Largest "up to N conditions" of a ddx track.
MAX_CONDITIONS = 20
#: Longest track title (characters).
MAX_TITLE = 200
#: Most criteria of a track (each a radio group on every page).
MAX_CRITERIA = 20
#: Longest overview or rater instructions of a track (characters of Markdown).
MAX_STUDY_TEXT = 20_000
#: Routing fallbacks, narrowest first (see :mod:`stableval.portal.work.scope`).
FALLBACKS = ("specialty", "general", "any")
#: The states of a question proposed for a track (:mod:`stableval.portal.work.question_queue`; ``imported``: accepted,
#: and its answers imported, so a question of the track); here, so the command line lists them without importing it.
PROPOSAL_STATUSES = ("pending", "accepted", "rejected", "imported")
#: The task type of a track created without ``--task``.
DEFAULT_TASK = "pairwise"


def _about(kind: type, help: str, **declared: Any) -> dict[str, Option]:
    """A setting's metadata: its declaration (its name and default are the field's)."""
    return {"option": Option("", kind, help, **declared)}


def _names(text: str) -> list[str] | None:
    """Comma-separated names (empty: None, the default)."""
    return [name for name in text.split(",") if name.strip()] or None


@dataclass(frozen=True)
class TrackSettings:
    """Every setting of a track but its name (``slug``), with its default; see each field's declaration
    (:data:`SETTINGS`) for what it does and what it allows."""

    title: str | None = field(default=None, metadata=_about(str, "Title shown to raters (default: the track's "
                                                             f"name; at most {MAX_TITLE} characters).", label="Title"))
    task: str = field(default=DEFAULT_TASK, metadata=_about(
        str, "What raters do: one of the registered task types (see 'Task types'); fixed once the track exists.",
        label="Task type"))
    criteria: Sequence[str] | None = field(default=None, metadata=_about(
        str, f"Comma-separated criteria, at most {MAX_CRITERIA} of at most 64 characters (default: problem "
        "resolution, helpfulness, scientific consensus, accuracy, completeness).", parse=_names, label="Criteria"))
    scale: str | Sequence[str] | None = field(default=None, metadata=_about(
        str, "Single-answer tracks: the ordered levels, worst first, e.g. incorrect,partial,correct (default "
        "1,2,3,4,5).", label="Scale"))
    conditions: Path | Sequence[str] | None = field(default=None, metadata=_about(
        Path, "Differential-diagnosis (ddx) tracks: the condition list, 2 to 500 names, one per line (a text file; "
        "the form also takes it typed).", label="Condition list"))
    max_conditions: int = field(default=5, metadata=_about(
        int, "Ddx tracks: most conditions per answer.", ge=1, le=MAX_CONDITIONS, label="Most conditions per answer"))
    k: int = field(default=3, metadata=_about(int, "Confirmed ratings needed per question.", ge=1, le=MAX_K,
                                              label="Ratings per question (k)"))
    flag_limit: int = field(default=2, metadata=_about(
        int, "'Does not make sense' flags that retire a question.", ge=1, le=MAX_K,
        label="Flags that retire a question"))
    lease_hours: float = field(default=24.0, metadata=_about(
        float, "How long a claimed question stays reserved (at least 1 second).", ge=1 / 3600, le=MAX_LEASE_HOURS,
        label="Lease (hours)"))
    gold_rate: float = field(default=0.0, metadata=_about(
        float, "Share of claims that are gold (quality-control) questions, imported with a gold column.", ge=0,
        le=1, label="Share of gold questions"))
    qc_threshold: float = field(default=0.7, metadata=_about(
        float, "Pause a rater whose gold accuracy is below this share.", ge=0, le=1, label="Pause threshold"))
    qc_min_gold: int = field(default=3, metadata=_about(
        int, "Gold questions answered before the pause threshold applies.", ge=0, le=MAX_K,
        label="Gold questions before the threshold applies"))
    qualification: int = field(default=0, metadata=_about(
        int, "Gold questions a new rater answers first (a qualification set; 0: none).", ge=0, le=MAX_K,
        label="Qualification"))
    max_k: int = field(default=0, metadata=_about(
        int, "Adaptive assignment: questions whose rater model (STABLEVAL; Rater-PL for rankings) is still uncertain "
        "after k ratings get more raters, up to this many (0: off; else more than k).", ge=0, le=MAX_K,
        label="Raters per question at most"))
    adaptive_threshold: float = field(default=0.8, metadata=_about(
        float, "A question is uncertain while its confidence (mean STABLEVAL max posterior over its criteria; for "
        "rankings, the plausibility of its most plausible option) is below this.", gt=0, le=1,
        label="Uncertain below"))
    adaptive_every: int = field(default=10, metadata=_about(
        int, "Refresh the adaptive model after this many new submissions (or 5 minutes and one).", ge=1,
        le=1_000_000, label="Refresh the adaptive model after"))
    specialties: str | Sequence[str] | None = field(default=None, metadata=_about(
        str, "Comma-separated specialty list: raters choose from it, imported questions must use it (default: free "
        "text).", label="Specialty list"))
    fallback: str = field(default="general", metadata=_about(
        str, "When no question of the rater's specialty is left: specialty (stop), general (then untagged "
        "questions) or any (then any question of the track).", choices=FALLBACKS,
        label="When no question of the rater's specialty is left"))
    rules: Mapping[str, Any] | None = field(default=None, metadata=_about(
        dict, "Pairwise tracks: the consistency rule of each choice (default: A better needs rating A >= rating B; "
        "see 'Consistency rules'). Python only.", label="Consistency rules"))
    overview: Path | str | None = field(default=None, metadata=_about(
        Path, "What the study is about, in Markdown (a file; the forms take it typed, at most "
        f"{MAX_STUDY_TEXT:,} characters): shown to raters on their progress page and, for a public track, on the "
        "landing page.", label="Overview"))
    instructions: Path | str | None = field(default=None, metadata=_about(
        Path, "What raters should know before they start, in Markdown (a file; the forms take it typed, at most "
        f"{MAX_STUDY_TEXT:,} characters): shown before a rater's first question of the track and on every "
        "question page.", label="Rater instructions"))
    public: bool = field(default=False, metadata=_about(
        bool, "List the track (title and overview) on the landing page, where anyone may submit a question for it "
        "to the review queue (rate-limited; see 'Submit a question').", label="Public"))


#: Every setting's declaration, by name, in the order of the form.
SETTINGS: dict[str, Option] = {f.name: replace(f.metadata["option"], name=f.name, default=f.default)
                               for f in fields(TrackSettings)}
#: The sections of the "New track" form: (legend, hint, settings); "" legend: no fieldset. A setting in none of them
#: is shown after them.
GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("", "", ("title", "criteria")),
    ("Task type", "what raters do; fixed once the track exists", ("task", "scale", "conditions", "max_conditions")),
    ("", "", ("k", "flag_limit", "lease_hours")),
    ("Quality control", "gold questions: import them with a gold column",
     ("gold_rate", "qc_threshold", "qc_min_gold", "qualification")),
    ("Adaptive assignment", "STABLEVAL decides which questions need more raters",
     ("max_k", "adaptive_threshold", "adaptive_every")),
    ("Routing", "which questions a rater's profile gets; editable later under the track's routing settings",
     ("specialties", "fallback")),
    ("About the study", "Markdown; editable later on the track's page", ("overview", "instructions", "public")),
)
#: The settings that are Markdown text: a file on the command line, a text box in the forms, rendered safely
#: (:func:`stableval.portal.tasks.render.markdown_to_html`) where shown.
MARKDOWN = ("overview", "instructions")
#: The settings an existing track may change (``stableval portal track --change``, the admin's "Edit" page); the
#: others are fixed once the track exists (routing has its own page).
CHANGEABLE = ("title", "overview", "instructions", "public")
#: The kinds a command-line flag or a form field can carry (the others are set from Python).
TEXT_KINDS = (str, int, float, bool, Path)


def track_settings(settings: TrackSettings | None = None, **changes: Any) -> TrackSettings:
    """``settings`` (default: every default) with ``changes``; an unknown name is a ``TypeError`` naming it."""
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise TypeError(f"unknown track setting(s): {', '.join(unknown)}; the settings: {', '.join(SETTINGS)}")
    return replace(settings or TrackSettings(), **changes)


def setting_problems(settings: TrackSettings) -> list[InputError]:
    """The settings whose value is outside their declared bounds or choices, in the order of :data:`SETTINGS`
    (``"<name> out of range"``, or ``"unknown <name>"`` for a choice)."""
    problems = []
    for name, option in SETTINGS.items():
        value = getattr(settings, name)
        if option.kind not in (int, float, bool) and not option.choices:
            continue
        try:
            if option.kind is int and isinstance(value, float) and math.isnan(value):
                raise ValueError(name)
            option.check(value)
        except ValueError:
            problem = f"unknown {name}" if option.choices else f"{name} is not true or false" \
                if option.kind is bool else f"{name} out of range"
            allowed = ", ".join(option.choices) if option.choices else option.constraint
            problems.append(InputError(problem, column=name, value=value, allowed=allowed))
    return problems


def settings_table() -> str:
    """The Markdown table of the settings (flag, default, allowed, what it does): docs/portal.md holds it, and a
    test compares the two."""
    rows = ["| setting | flag | default | allowed | what it does |", "|---|---|---|---|---|"]
    for name, option in SETTINGS.items():
        flag = f"`{option.cli}`" if option.kind in TEXT_KINDS else "(Python)"
        default = "" if option.default in (None, "") else f"`{option.default}`"
        rows.append(f"| `{name}` | {flag} | {default} | {option.constraint} | {option.help} |")
    return "\n".join(rows)
