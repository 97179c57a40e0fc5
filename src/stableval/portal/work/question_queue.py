"""The "submit a question" channel: experts propose questions for a track; the admin accepts or rejects them.

A rater proposes a question (prompt, optional reference answer, specialty) for one of the tracks in their scope;
it waits in the admin's review queue as ``pending``. **Accept** marks it for the track: a question still needs
the models' answers before it can be rated, so ``stableval portal proposals TRACK --status accepted -o FILE``
writes the accepted ones in the question-import format (``id`` = ``proposed-<n>``, ``prompt, reference,
specialty`` filled in, the model and answer columns empty); the study team adds the answers and imports the file
with ``stableval portal import``, and the proposal is then a question of the track. **Reject** needs a reason,
kept with the proposal. Text is stored as typed and always shown escaped; limits: :data:`MAX_PROMPT` characters
per text, :data:`MAX_PENDING` pending proposals per rater.

>>> check_text("  Which dose?  ", "prompt", required=True)
'Which dose?'
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from sqlalchemy import func, select

from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import QuestionProposal, Rater, Track, utcnow
from stableval.portal.work.scope import in_scope

__all__ = ["MAX_PENDING", "MAX_PROMPT", "MAX_REASON", "STATUSES", "Proposal", "check_text", "decide",
           "import_frame", "list_proposals", "proposal_tracks", "propose"]

#: Longest prompt or reference answer (characters).
MAX_PROMPT = 20_000
#: Longest rejection reason (characters).
MAX_REASON = 2_000
#: Pending proposals a rater may have at once.
MAX_PENDING = 20
#: A proposal's states.
STATUSES = ("pending", "accepted", "rejected")


@dataclass(frozen=True)
class Proposal:
    """One proposal as the admin sees it."""

    id: int
    track: str
    rater_id: int
    rater_name: str
    prompt: str
    reference: str
    specialty: str
    status: str
    reason: str
    created_at: datetime


def proposal_tracks(db: Database, rater_id: int) -> list[tuple[str, str, list[str]]]:
    """(name, title, specialty list) of every track the rater may propose a question for (their scope)."""
    with db.reading() as session:
        rater = session.get(Rater, rater_id)
        if rater is None:
            return []
        return [(t.slug, t.title, list(t.specialties or [])) for t in session.scalars(select(Track).order_by(Track.id))
                if in_scope(rater.tracks, t.id)]


def check_text(text: str, column: str, *, required: bool = False, limit: int = MAX_PROMPT) -> str:
    """The text stripped; refused when required and empty, or longer than ``limit`` (never cut silently)."""
    value = str(text or "").strip()
    if required and not value:
        raise InputError("empty value", column=column, value="", allowed="non-empty text")
    if len(value) > limit:
        raise InputError(f"text too long ({len(value):,} characters)", column=column, value=value[:40] + "…",
                         allowed=f"at most {limit:,} characters")
    return value


def propose(db: Database, rater_id: int, slug: str, *, prompt: str, reference: str = "", specialty: str = ""
            ) -> int:
    """Store a rater's proposed question for the track (pending review); returns its id."""
    prompt = check_text(prompt, "prompt", required=True)
    reference = check_text(reference, "reference")
    specialty = " ".join(check_text(specialty, "specialty", limit=100).split()).casefold()
    with db.writing() as session:
        rater = session.get(Rater, rater_id)
        track = session.scalar(select(Track).where(Track.slug == slug))
        if rater is None or rater.disabled_at is not None or track is None or not in_scope(rater.tracks, track.id):
            raise InputError("no such track", column="track", value=slug, allowed="one of your tracks")
        if specialty and track.specialties and specialty not in track.specialties:
            raise InputError("specialty not on the track's list", column="specialty", value=specialty,
                             allowed=", ".join(track.specialties) + " or empty")
        pending = session.scalar(select(func.count(QuestionProposal.id)).where(
            QuestionProposal.rater_id == rater_id, QuestionProposal.status == "pending")) or 0
        if pending >= MAX_PENDING:
            raise InputError("too many proposals waiting for review", column="prompt", value=int(pending),
                             allowed=f"at most {MAX_PENDING} pending; wait for the study team's review")
        proposal = QuestionProposal(track_id=track.id, rater_id=rater_id, prompt=prompt, reference=reference,
                                    specialty=specialty, status="pending", reason="", created_at=utcnow())
        session.add(proposal)
        session.flush()
        return proposal.id


def list_proposals(db: Database, slug: str | None = None, status: str | None = "pending") -> list[Proposal]:
    """Proposals (of one track, or all; of one status, or all with ``status=None``), oldest first."""
    if status is not None and status not in STATUSES:
        raise InputError("unknown status", column="status", value=status, allowed=", ".join(STATUSES))
    query = (select(QuestionProposal, Track.slug, Rater.name)
             .join(Track, QuestionProposal.track_id == Track.id)
             .join(Rater, QuestionProposal.rater_id == Rater.id)
             .order_by(QuestionProposal.id))
    if slug is not None:
        query = query.where(Track.slug == slug)
    if status is not None:
        query = query.where(QuestionProposal.status == status)
    with db.reading() as session:
        rows = session.execute(query).all()
    return [Proposal(p.id, str(track), p.rater_id, str(name), p.prompt, p.reference, p.specialty, p.status,
                     p.reason, p.created_at) for p, track, name in rows]


def decide(db: Database, proposal_id: int, *, accept: bool, reason: str = "") -> str:
    """Accept or reject (with a reason) a pending proposal; returns the track's name."""
    reason = check_text(reason, "reason", required=not accept, limit=MAX_REASON)
    with db.writing() as session:
        proposal = session.get(QuestionProposal, proposal_id)
        if proposal is None:
            raise InputError("no such proposal", value=proposal_id)
        if proposal.status != "pending":
            raise InputError("proposal already decided", value=f"proposal {proposal_id}: {proposal.status}",
                             allowed="a pending proposal")
        proposal.status = "accepted" if accept else "rejected"
        proposal.reason, proposal.decided_at = reason, utcnow()
        return session.get_one(Track, proposal.track_id).slug


def import_frame(proposals: list[Proposal]) -> pd.DataFrame:
    """Proposals in the question-import format (answers to be filled in): ``id`` = ``proposed-<n>``."""
    return pd.DataFrame({"id": [f"proposed-{p.id}" for p in proposals], "prompt": [p.prompt for p in proposals],
                         "model_a": "", "answer_a": "", "model_b": "", "answer_b": "",
                         "reference": [p.reference for p in proposals], "specialty": [p.specialty for p in proposals],
                         "proposed_by": [f"rater-{p.rater_id}" for p in proposals],
                         "status": [p.status for p in proposals], "reason": [p.reason for p in proposals]},
                        columns=["id", "prompt", "model_a", "answer_a", "model_b", "answer_b", "reference",
                                 "specialty", "proposed_by", "status", "reason"])
