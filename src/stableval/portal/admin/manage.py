"""Changes to tracks, questions and raters: create tracks, import questions, create invites, retire/restore
items (admin tasks, also without the web server), and the rater's own sign-in by invite and profile.

Imports are validated as a whole before anything is written, then written in one transaction: a bad file
changes nothing. Every problem names the file, the 1-based data row, the column and what is allowed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from stableval.errors import InputError
from stableval.portal.settings import (
    CHANGEABLE,
    MARKDOWN,
    MAX_CRITERIA,
    MAX_K,
    MAX_LEASE_HOURS,
    MAX_STUDY_TEXT,
    MAX_TITLE,
    SETTINGS,
    TrackSettings,
    setting_problems,
    track_settings,
)
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, RevokedSession, Track, utcnow
from stableval.portal.store.security import hash_token, new_token
from stableval.portal.tasks.records import without_controls
from stableval.portal.tasks.registry import TASKS
from stableval.portal.tasks.rules import DEFAULT_CRITERIA, validate_rules

__all__ = ["MAX_K", "MAX_LEASE_HOURS", "Invite", "TrackSettings", "change_track", "create_invites",
           "create_track", "end_rater_sessions", "find_rater", "import_questions", "normalise_group", "rater_access",
           "rater_for_invite", "read_invite_notes", "reissue_invite", "revoke_invite", "revoke_session", "save_profile",
           "session_revoked", "set_rater_disabled", "set_retired", "study_text", "track_problems"]

_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_KEY = re.compile(r"^[a-z0-9_]{1,64}$")


def normalise_group(text: Any) -> str:
    """Specialty names compare case- and space-insensitively: ``" Cardiology "`` -> ``"cardiology"``."""
    return " ".join(str(text or "").split()).casefold()


def _criteria(criteria: Sequence[str] | None) -> list[dict[str, str]]:
    """``["accuracy", "Bedside manner"]`` -> [{"key": "accuracy", "label": "Accuracy"}, ...]."""
    if not criteria:
        return [dict(c) for c in DEFAULT_CRITERIA]
    if len(criteria) > MAX_CRITERIA:
        raise InputError("too many criteria", column="criteria", value=len(criteria),
                         allowed=f"at most {MAX_CRITERIA} criteria (each is a question on every page)")
    out = []
    for label in criteria:
        label = " ".join(str(label).split())
        key = re.sub(r"[^a-z0-9]+", "_", label.casefold()).strip("_")
        if len(key) > 64 or len(label) > 100:
            raise InputError("criterion too long", column="criteria", value=label[:40],
                             allowed="at most 64 letters, digits and separators (100 characters in all)")
        if not _KEY.match(key):
            raise InputError("criterion needs letters or digits", column="criteria", value=label,
                             allowed="names such as 'accuracy' or 'Bedside manner'")
        out.append({"key": key, "label": label[:1].upper() + label[1:]})
    keys = [c["key"] for c in out]
    if len(set(keys)) != len(keys):
        raise InputError("criteria repeat", column="criteria", value=keys, allowed="distinct criteria")
    return out


def create_track(db: Database, slug: str, settings: TrackSettings | None = None, **changes: Any) -> int:
    """Create a track called ``slug`` with ``settings`` (a :class:`~stableval.portal.settings.TrackSettings`;
    default: every declared default) and ``changes`` (``k=5``, ``title="Derm"``: any setting by name); returns its
    id. The settings are declared in :mod:`stableval.portal.settings` and checked by :func:`track_problems`; the
    first problem is raised."""
    track, problems = track_problems(slug, settings, **changes)
    if problems or track is None:
        raise problems[0]
    with db.writing() as session:
        if session.scalar(select(Track.id).where(Track.slug == slug)) is not None:
            raise InputError("a track of that name exists", column="slug", value=slug, allowed="a new name")
        session.add(track)
        session.flush()
        return track.id


def change_track(db: Database, slug: str, **changes: Any) -> None:
    """Change the settings of an existing track that may change (:data:`~stableval.portal.settings.CHANGEABLE`:
    its title, study texts and whether it is public), checked as :func:`create_track` checks them; the first problem
    is raised and nothing changes. An empty title is the track's name again."""
    fixed = sorted(set(changes) - set(CHANGEABLE))
    if fixed:
        raise InputError("setting fixed once the track exists", column=fixed[0], value=fixed,
                         allowed=", ".join(CHANGEABLE))
    chosen = track_settings(**changes)  # unknown names: TypeError, as create_track
    problems = setting_problems(chosen)
    stored: dict[str, Any] = {}
    if "title" in changes:
        stored["title"], title_problems = _title(chosen.title)
        problems = title_problems + problems
    for name in MARKDOWN:
        if name in changes:
            stored[name] = study_text(getattr(chosen, name), name)
    if problems:
        raise problems[0]
    if "public" in changes:
        stored["public"] = chosen.public
    with db.writing() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            raise InputError("no such track", value=slug, allowed="an existing track")
        for name, value in stored.items():
            setattr(track, name, value or slug if name == "title" else value)


def _typed(kind: type, value: Any) -> Any:
    """A numeric setting as its declared kind (``k=3.0`` is stored as 3)."""
    return kind(value) if kind in (int, float) else value


#: Settings stored in another form than their value (the rest: in their column, else with the track's options).
_READ_HERE = ("title", "task", "criteria", "scale", "conditions", "max_conditions", "lease_hours", "specialties",
              "rules", "fallback", *MARKDOWN)


def study_text(value: str | Path | None, column: str) -> str:
    """A study text setting (:data:`~stableval.portal.settings.MARKDOWN`) as stored: a file (a ``Path``) read as
    UTF-8, or the text itself; without control characters, stripped, at most
    :data:`~stableval.portal.settings.MAX_STUDY_TEXT` characters (never cut silently).

    >>> study_text("  # Aims  ", "overview")
    '# Aims'
    >>> study_text("x" * 20_001, "overview")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    stableval.errors.InputError: column 'overview': text too long (20,001 characters): got 'xxxx...
    """
    if isinstance(value, Path):
        try:
            value = value.read_text(encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot read the file ({error.strerror or error})", file=str(value),
                             column=column) from None
        except UnicodeDecodeError as error:
            raise InputError(f"file is not UTF-8 text ({error.reason})", file=str(value), column=column) from None
    text = without_controls(str(value or "")).strip()
    if len(text) > MAX_STUDY_TEXT:
        raise InputError(f"text too long ({len(text):,} characters)", column=column, value=text[:40] + "…",
                         allowed=f"at most {MAX_STUDY_TEXT:,} characters")
    return text


def _title(title: str | None) -> tuple[str, list[InputError]]:
    """A title as stored, and the problem with it (too long)."""
    text = without_controls(str(title or "")).strip()
    if len(text) > MAX_TITLE:
        return text, [InputError("title too long", column="title", value=text[:40] + "…",
                                 allowed=f"at most {MAX_TITLE} characters")]
    return text, []


def track_problems(slug: str, settings: TrackSettings | None = None, **changes: Any
                   ) -> tuple[Track | None, list[InputError]]:
    """The track :func:`create_track` would store (not yet stored; None when there are problems) and every
    problem with its settings, in the order of the checks (the admin's form shows them all at once): the routing
    lists, the task type's own settings, the name, every declared bound and choice
    (:func:`~stableval.portal.settings.setting_problems`), the rules between settings, the criteria and rules.

    >>> [e.column for e in track_problems("Bad name", k=0, scale="a,b")[1]]
    ['scale', 'slug', 'k']
    """
    from stableval.portal.tasks.registry import task_options
    from stableval.portal.work.scope import parse_specialties

    chosen = track_settings(settings, **changes)
    problems: list[InputError] = []

    def checked(check: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return check(*args, **kwargs)
        except InputError as error:
            problems.append(error)
            return None

    specialty_list = checked(parse_specialties, chosen.specialties)
    task_scale, options = checked(task_options, chosen) or (None, None)
    if not _SLUG.match(slug):
        problems.append(InputError("bad track name", column="slug", value=slug, allowed="1-64 lower-case letters, "
                                   "digits, '-' or '_', starting with a letter or digit"))
    title, title_problems = _title(chosen.title)
    problems += title_problems
    texts = {name: checked(study_text, getattr(chosen, name), name) for name in MARKDOWN}
    bounds = setting_problems(chosen)
    problems += bounds
    k, max_k = chosen.k, chosen.max_k
    if max_k != 0 and "max_k" not in {e.column for e in bounds} and not k < max_k:
        problems.append(InputError("max_k out of range", column="max_k", value=max_k, allowed=f"0 (no adaptive "
                                   f"assignment) or a whole number from k + 1 = {int(k) + 1} to {MAX_K}"))
    elif max_k != 0 and chosen.task in TASKS and not TASKS[chosen.task].adaptive:
        names = [name for name, kind in TASKS.items() if kind.adaptive]
        adaptive = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
        problems.append(InputError(f"no adaptive assignment for {chosen.task} tracks (their answers are outside "
                                   "the rater model)", column="max_k", value=max_k,
                                   allowed=f"0 ({adaptive} tracks can be adaptive)"))
    track_criteria, track_rules = checked(_criteria, chosen.criteria), checked(validate_rules, chosen.rules)
    if problems:
        return None, problems
    columns = Track.__table__.columns
    stored = {name: _typed(SETTINGS[name].kind, getattr(chosen, name)) for name in SETTINGS if name not in _READ_HERE}
    others = {name: value for name, value in stored.items()  # kept with the track's options when not the default
              if name not in columns and value != SETTINGS[name].default}
    return Track(slug=slug, title=title or slug, task_type=chosen.task, criteria=track_criteria,
                 rules=track_rules, scale=task_scale, task_options={**(options or {}), **others} or None,
                 lease_seconds=round(chosen.lease_hours * 3600), specialties=specialty_list, fallback=chosen.fallback,
                 **texts, **{name: value for name, value in stored.items() if name in columns}), []


def _read_table(path: str | Path, source: str) -> pd.DataFrame:
    """Read a table file; its messages name ``source`` (the uploaded file's name), never the server's copy."""
    from stableval.data.files import read_table_file

    try:
        return read_table_file(path)
    except InputError as error:
        if source == str(path):
            raise
        raise InputError(error.problem.replace(str(path), source), file=source, row=error.row,
                         column=error.column, value=error.value, allowed=error.allowed,
                         has_value=error.has_value) from None


def import_questions(db: Database, slug: str, path: str | Path, *, source: str | None = None,
                     task: str | None = None) -> int:
    """Import questions from CSV/TSV/JSONL/Parquet into a track, all or nothing; returns the count.

    The file is read as the track's task type reads it (its columns, checks and gold answers: see each module of
    :mod:`stableval.portal.tasks`; a pairwise file has ``id, prompt, model_a, answer_a, model_b, answer_b`` and
    optionally ``reference, specialty, subspecialty, gold``); ``task``, when given, must be the track's task type.
    Ids must be new in the track and unique in the file; specialties must be on the track's list, if it has one
    (:mod:`stableval.portal.work.scope`); an answer that is a JSON list of messages must be a valid transcript
    (:mod:`stableval.portal.tasks.transcripts`). A row whose id is ``proposed-<n>`` attaches the answers to
    proposal ``n``: it must be an accepted proposal of the track, and becomes ``imported``
    (:mod:`stableval.portal.work.question_queue`).
    """
    from stableval.portal.work.question_queue import attach_proposals, mark_imported
    from stableval.portal.work.scope import check_question_specialties

    source = source or str(path)
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
    if track is None:
        raise InputError("no such track", value=slug, allowed="an existing track (create it first)")
    if task is not None and task != track.task_type:
        raise InputError(f"track {slug!r} is a {track.task_type} track", column="task", value=task,
                         allowed=track.task_type)
    rows = TASKS[track.task_type].read_questions(Path(path), source, track, _read_table, normalise_group)
    if not rows:
        raise InputError("no rows", file=source, allowed="one row per question")
    with db.writing() as session:
        check_question_specialties(track, pd.Series([row["specialty"] for row in rows], dtype=object), source)
        existing = set(session.scalars(select(Question.external_id).where(Question.track_id == track.id)))
        clash = [number for number, row in enumerate(rows, start=1) if row["external_id"] in existing]
        if clash:
            first = rows[clash[0] - 1]["external_id"]
            raise InputError(f"question id already in track {slug!r} ({len(clash)} row(s) in all)", file=source,
                             row=clash[0], column="id", value=first,
                             allowed="new ids (retire or rename the old question)")
        attached = attach_proposals(session, track, [row["external_id"] for row in rows], source)
        now = utcnow()
        session.execute(Question.__table__.insert(), [  # type: ignore[attr-defined]
            {**row, "track_id": track.id, "retired": False, "created_at": now} for row in rows])
        mark_imported(session, track, attached)
    return len(rows)


@dataclass(frozen=True)
class Invite:
    """A created invite: the rater id and the one-time-shown token (only its hash is stored)."""

    rater_id: int
    note: str
    token: str

    def link(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/i/{self.token}"


def create_invites(db: Database, notes: Sequence[str], *, tracks: Sequence[str] | None = None) -> list[Invite]:
    """One invite per note (e.g. the person's name or email, for the admin's records); ``tracks`` limits the
    invites to those tracks (by name; None or empty: every track, see :mod:`stableval.portal.work.scope`)."""
    from stableval.portal.work.scope import track_ids

    pending = [(without_controls(str(note)).strip()[:200], new_token()) for note in notes]
    with db.writing() as session:
        scope = track_ids(session, tracks)
        raters = [Rater(token_hash=hash_token(token), note=note, tracks=scope) for note, token in pending]
        session.add_all(raters)
        session.flush()
        return [Invite(r.id, note, token) for r, (note, token) in zip(raters, pending, strict=True)]


def read_invite_notes(path: str | Path, *, source: str | None = None) -> list[str]:
    """Notes from a CSV/JSONL file of invitees: the ``note`` column, else ``email``, else ``name``. ``source``
    names the file in messages (the uploaded name rather than a server-side copy)."""
    source = source or str(path)
    frame = _read_table(path, source)
    lower = {str(c).strip().lower(): c for c in frame.columns}
    for name in ("note", "email", "name"):
        if name in lower:
            values = frame[lower[name]].fillna("").astype(str).str.strip()
            empty = (values == "").to_numpy()
            if empty.any():
                raise InputError("empty value", file=source, row=int(np.flatnonzero(empty)[0]) + 1,
                                 column=str(lower[name]), value="", allowed="one invitee per row")
            return values.tolist()
    raise InputError("no invitee column", file=source, value=[str(c) for c in frame.columns],
                     allowed="a column note, email or name")


def set_retired(db: Database, question_id: int, retired: bool) -> str:
    """Retire a question (it leaves the pool; its ratings stay) or restore it; returns its track's name."""
    with db.writing() as session:
        question = session.get(Question, question_id)
        if question is None:
            raise InputError("no such question", value=question_id)
        question.retired = retired
        slug: str = session.scalars(select(Track.slug).where(Track.id == question.track_id)).one()
        return slug


def revoke_invite(db: Database, rater_id: int) -> None:
    """Make the rater's invite link stop working (their sessions go on; see :func:`end_rater_sessions`)."""
    with db.writing() as session:
        rater = _rater_or_fail(session.get(Rater, rater_id), rater_id)
        rater.token_hash = "revoked-" + secrets.token_hex(28)  # 64 characters, never a SHA-256 digest


def reissue_invite(db: Database, rater_id: int) -> Invite:
    """A new invite link for an existing rater; the old link stops working. Shown once, like every link."""
    token = new_token()
    with db.writing() as session:
        rater = _rater_or_fail(session.get(Rater, rater_id), rater_id)
        rater.token_hash = hash_token(token)
        return Invite(rater.id, rater.note, token)


def end_rater_sessions(db: Database, rater_id: int, now: datetime | None = None) -> None:
    """Sign the rater out everywhere: sessions issued before now are refused (the invite link still works)."""
    with db.writing() as session:
        _rater_or_fail(session.get(Rater, rater_id), rater_id).sessions_after = now or utcnow()


def set_rater_disabled(db: Database, rater_id: int, disabled: bool, now: datetime | None = None) -> None:
    """Disable a rater (sessions ended, invite refused, open leases released, submissions kept) or enable again."""
    now = now or utcnow()
    with db.writing() as session:
        rater = _rater_or_fail(session.get(Rater, rater_id), rater_id)
        rater.disabled_at = now if disabled else None
        if disabled:
            rater.sessions_after = now
            for assignment in session.scalars(select(Assignment).where(Assignment.rater_id == rater_id,
                                                                       Assignment.status == "open")):
                assignment.status = "released"


def rater_access(db: Database, rater_id: int, issued_ms: int) -> str:
    """Whether a session of this rater issued at ``issued_ms`` (Unix milliseconds) may act: "ok", "unknown",
    "disabled" or "ended" (signed out by :func:`end_rater_sessions`); the rule of
    :func:`stableval.portal.work.access.access_state`, the one every rater request applies."""
    from stableval.portal.work.access import session_access

    return session_access(db, rater_id, issued_ms)


def revoke_session(db: Database, sid: str) -> None:
    """End one signed-in session (admin sign-out): its cookie, replayed later, is refused."""
    with db.writing() as session:
        if session.get(RevokedSession, sid) is None:
            session.add(RevokedSession(sid=sid, revoked_at=utcnow()))


def session_revoked(db: Database, sid: str) -> bool:
    """Whether the session ``sid`` was ended by :func:`revoke_session`."""
    with db.reading() as session:
        return session.get(RevokedSession, sid) is not None


def _rater_or_fail(rater: Rater | None, rater_id: int) -> Rater:
    if rater is None:
        raise InputError("no such rater", column="rater", value=rater_id, allowed="an id from the admin page")
    return rater


def rater_for_invite(db: Database, token: str) -> Rater | None:
    """The rater whose invite link carries ``token`` (only its hash is stored), or None."""
    with db.reading() as session:
        return session.scalar(select(Rater).where(Rater.token_hash == hash_token(token)))


def find_rater(db: Database, rater_id: int) -> Rater | None:
    """The rater with this id, or None."""
    with db.reading() as session:
        return session.get(Rater, rater_id)


def save_profile(db: Database, rater_id: int, *, name: str, email: str, specialty: str, subspecialty: str,
                 years: int) -> bool:
    """Store the rater's profile (specialties normalised, see :func:`normalise_group`) and mark it filled in;
    False when there is no such rater."""
    with db.writing() as session:
        rater = session.get(Rater, rater_id)
        if rater is None:
            return False
        rater.name, rater.email, rater.years = name, email, int(years)
        rater.specialty = normalise_group(specialty)
        rater.subspecialty = normalise_group(subspecialty)
        rater.profile_at = utcnow()
    return True
