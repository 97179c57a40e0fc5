"""Who may work where: invites scoped to tracks, a controlled specialty list per track, and the track's fallback
when no question fits a rater's profile.

* **Scope**: an invite (and so its rater) may be limited to a list of tracks (``Rater.tracks``, track ids; None =
  every track). Other tracks are not listed on the rater's progress page and refuse claims.
* **Specialty list**: a track may name its specialties (``Track.specialties``, normalised as
  :func:`stableval.portal.admin.manage.normalise_group` does: stripped, lower case). Then the profile form offers a
  choice from the lists of the rater's tracks instead of free text ("Cardiologist" ≠ "cardiology"), and an import
  into the track refuses a question whose specialty is not on its list.
* **Fallback** (``Track.fallback``), how far routing goes when questions of the rater's (sub)specialty run out:
  ``specialty`` — only questions of their subspecialty or specialty (untagged questions only to raters without a
  specialty); ``general`` (default, the routing before this setting existed) — then the general pool of untagged
  questions; ``any`` — then any question of the track, other specialties' included.
* **Editing** (:func:`set_routing`; ``stableval portal routing``, the admin's track routing page): both settings may
  change after creation. A new fallback applies from the next claim (open leases stay). A specialty list may
  grow, be dropped (free text again) or be introduced, but never leave out the specialty of a question of the
  track (retired ones included: they may be restored), which no rater could pick any more. Such a change is
  refused, naming the specialty, who uses it and the shortest list that would be accepted. A rater's profile or a
  pending proposed question does not hold a specialty: a rater whose specialty is off the lists of their tracks
  (:func:`needs_new_specialty`) is asked to choose again at their next claim (their open question stays theirs),
  and an accepted proposal is imported, and so checked against the list, like any question.

>>> parse_specialties(" Cardiology, oncology ,cardiology")
['cardiology', 'oncology']
>>> in_scope(None, 3), in_scope([1, 2], 3)
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.settings import FALLBACKS
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, QuestionProposal, Rater, Track

__all__ = ["FALLBACKS", "Routing", "check_fallback", "check_question_specialties", "in_scope", "needs_new_specialty",
           "parse_specialties", "profile_specialties", "routing_of", "set_routing", "specialties_in_use",
           "specialty_choices", "track_ids"]

#: Most specialties on one track's list.
MAX_SPECIALTIES = 500


def _normalise(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def parse_specialties(specialties: str | Sequence[str] | None) -> list[str] | None:
    """A track's specialty list, normalised, in order, repeats dropped (None or nothing given: no list)."""
    if specialties is None:
        return None
    items = specialties.split(",") if isinstance(specialties, str) else list(specialties)
    out = list(dict.fromkeys(_normalise(s) for s in items if _normalise(s)))
    for name in out:
        if len(name) > 100:
            raise InputError("specialty too long", column="specialties", value=name[:40], allowed="at most 100 "
                                                                                                   "characters")
    if len(out) > MAX_SPECIALTIES:
        raise InputError("too many specialties", column="specialties", value=len(out),
                         allowed=f"at most {MAX_SPECIALTIES}")
    return out or None


def check_fallback(fallback: str) -> str:
    """The fallback, checked against :data:`FALLBACKS`."""
    if fallback not in FALLBACKS:
        raise InputError("unknown fallback", column="fallback", value=fallback, allowed=", ".join(FALLBACKS))
    return fallback


def in_scope(scope: Sequence[int] | None, track_id: int) -> bool:
    """Whether a rater with this scope (track ids; None = every track) may work in the track."""
    return scope is None or track_id in scope


def track_ids(session: Session, slugs: Sequence[str] | None) -> list[int] | None:
    """The ids of the named tracks (an invite's scope); None or an empty list: every track."""
    wanted = list(dict.fromkeys(s.strip() for s in slugs or () if s.strip()))
    if not wanted:
        return None
    found = {str(slug): int(id_) for slug, id_ in session.execute(select(Track.slug, Track.id).where(
        Track.slug.in_(wanted)))}
    missing = [s for s in wanted if s not in found]
    if missing:
        slugs_known = session.scalars(select(Track.slug).order_by(Track.slug)).all()
        raise InputError("no such track", column="tracks", value=missing[0],
                         allowed=", ".join(slugs_known) or "none yet")
    return sorted(int(found[s]) for s in wanted)


def profile_specialties(session: Session, rater: Rater) -> list[str]:
    """The specialties the rater's profile form offers: the union of the lists of the tracks in their scope
    (sorted); empty when none of those tracks has a list (the form then takes free text)."""
    query = select(Track.id, Track.specialties)
    lists = [names for track_id, names in session.execute(query).all()
             if names and in_scope(rater.tracks, int(track_id))]
    return sorted({name for names in lists for name in names})


def needs_new_specialty(session: Session, rater: Rater, track: Track) -> bool:
    """Whether the rater must choose their specialty again before a new question of the track: the track has a
    specialty list and the rater's specialty is on none of the lists of their tracks (the profile form would
    refuse it), e.g. typed as free text before the list was introduced."""
    return bool(track.specialties) and bool(rater.specialty) and \
        rater.specialty not in profile_specialties(session, rater)


def specialty_choices(db: Database, rater_id: int) -> list[str]:
    """:func:`profile_specialties` of the rater (empty for an unknown rater)."""
    with db.reading() as session:
        rater = session.get(Rater, rater_id)
        return [] if rater is None else profile_specialties(session, rater)


def check_question_specialties(track: Track, specialties: pd.Series, source: str) -> None:
    """Refuse an import whose (normalised) specialties are not on the track's list (empty = untagged: fine)."""
    if not track.specialties:
        return
    values = specialties.to_numpy(dtype=object)
    bad = (values != "") & ~np.isin(values, np.asarray(track.specialties, dtype=object))
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise InputError(f"specialty not on track {track.slug!r}'s list ({int(bad.sum())} row(s) in all)",
                         file=source, row=row, column="specialty", value=str(values[row - 1]),
                         allowed=", ".join(track.specialties) + " or empty (the general pool)")


@dataclass(frozen=True)
class Routing:
    """A track's routing settings: its specialty list (None: free text) and its fallback; ``in_use`` are the
    specialties a new list must keep (:func:`specialties_in_use`)."""

    slug: str
    title: str
    specialties: list[str] | None
    fallback: str
    in_use: dict[str, str]


def _track_or_fail(session: Session, slug: str) -> Track:
    track = session.scalar(select(Track).where(Track.slug == slug))
    if track is None:
        known = session.scalars(select(Track.slug).order_by(Track.slug)).all()
        raise InputError("no such track", column="track", value=slug, allowed=", ".join(known) or "none yet")
    return track


def routing_of(db: Database, slug: str) -> Routing:
    """The routing settings of the track called ``slug``."""
    with db.reading() as session:
        track = _track_or_fail(session, slug)
        return Routing(track.slug, track.title, list(track.specialties) if track.specialties else None,
                       track.fallback, specialties_in_use(session, track.id))


def specialties_in_use(session: Session, track_id: int) -> dict[str, str]:
    """Each specialty in use in the track -> who uses it, in words ("2 questions (e.g. q3), 1 rater (rater-4)"):
    its questions (retired included), pending proposals, and the profiles of raters who claimed one of its
    questions. Empty specialties (the general pool, no profile yet) are not listed."""
    users: dict[str, list[str]] = {}

    def add(rows: Sequence[Any], what: str, example: str) -> None:
        for name, count, first in rows:
            users.setdefault(str(name), []).append(f"{count} {what}{'s' if count != 1 else ''} "
                                                    f"({'e.g. ' if count > 1 else ''}{example.format(first)})")

    add(session.execute(select(Question.specialty, func.count(), func.min(Question.external_id))
                        .where(Question.track_id == track_id, Question.specialty != "")
                        .group_by(Question.specialty)).all(), "question", "{}")
    add(session.execute(select(QuestionProposal.specialty, func.count(), func.min(QuestionProposal.id))
                        .where(QuestionProposal.track_id == track_id, QuestionProposal.status == "pending",
                               QuestionProposal.specialty != "")
                        .group_by(QuestionProposal.specialty)).all(), "pending proposal", "proposal {}")
    workers = select(Assignment.rater_id).join(Question, Question.id == Assignment.question_id) \
        .where(Question.track_id == track_id).distinct().scalar_subquery()
    add(session.execute(select(Rater.specialty, func.count(), func.min(Rater.id))
                        .where(Rater.id.in_(workers), Rater.specialty != "")
                        .group_by(Rater.specialty)).all(), "rater", "rater-{}")
    return {name: ", ".join(parts) for name, parts in sorted(users.items())}


def set_routing(db: Database, slug: str, *, specialties: str | Sequence[str] | None, fallback: str) -> Routing:
    """Change a track's specialty list (None or empty: no list, free text) and fallback; refuses a list that
    leaves out the specialty of a question of the track (see the module docstring; :func:`specialties_in_use`
    names who uses each specialty)."""
    names, fallback = parse_specialties(specialties), check_fallback(fallback)
    with db.writing() as session:
        track = _track_or_fail(session, slug)
        in_use = specialties_in_use(session, track.id)
        held = set(session.scalars(select(Question.specialty).where(Question.track_id == track.id,
                                                                    Question.specialty != "").distinct()))
        if names is not None:
            left_out = [name for name in in_use if name in held and name not in names]
            if left_out:
                keep = list(dict.fromkeys([*names, *(name for name in in_use if name in held)]))
                raise InputError(
                    f"specialty {left_out[0]!r} is still used in track {slug!r}: {in_use[left_out[0]]}"
                    + (f" (and {len(left_out) - 1} more specialt{'y' if len(left_out) == 2 else 'ies'} in use: "
                       f"{', '.join(left_out[1:])})" if len(left_out) > 1 else ""),
                    column="specialties", value=left_out[0],
                    allowed=f"a list that keeps every specialty in use, e.g. {', '.join(keep)}; or no list "
                            "(free text)")
        track.specialties, track.fallback = names, fallback
        return Routing(track.slug, track.title, names, fallback, in_use)
