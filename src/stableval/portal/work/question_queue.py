"""The "submit a question" channel: experts, and anyone for a public track, propose questions; the admin accepts
or rejects them.

A rater proposes a question (prompt, optional reference answer, specialty) for one of the tracks in their scope;
anyone (no invite) may propose one from the landing page for a track the study team made public
(:func:`propose_public`, with an optional contact only the study team sees). Either waits in the admin's review
queue as ``pending``. **Accept** marks it for the track: a question still needs the models' answers before it can
be rated, so ``stableval portal proposals TRACK --status accepted -o FILE`` writes the accepted ones in the
question-import format (``id`` = ``proposed-<n>``, ``prompt, reference, specialty`` filled in, the model and answer
columns empty); the study team adds the answers and imports the file with ``stableval portal import``: each row
whose id is ``proposed-<n>`` must be an accepted proposal of that track (:func:`attach_proposals`), which then
becomes ``imported`` and names its question. **Reject** needs a reason, kept with the proposal. Text is stored as
typed and always shown escaped; limits: :data:`MAX_PROMPT` characters per text, :data:`MAX_PENDING` pending
proposals per rater, :data:`MAX_PUBLIC_PENDING` pending proposals from the landing page per track (and the web
server's rate limit per client address).

>>> check_text("  Which dose?  ", "prompt", required=True)
'Which dose?'
>>> proposal_number("proposed-12"), proposal_number("q12")
(12, None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stableval.errors import InputError
from stableval.portal.settings import PROPOSAL_STATUSES
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, QuestionProposal, Rater, Track, utcnow
from stableval.portal.work.scope import in_scope

__all__ = ["MAX_CONTACT", "MAX_PENDING", "MAX_PROMPT", "MAX_PUBLIC_PENDING", "MAX_REASON", "STATUSES", "Proposal",
           "PublicTrack", "attach_proposals", "check_text", "decide", "import_frame", "list_proposals",
           "mark_imported", "proposal_number", "proposal_tracks", "propose", "propose_public", "public_tracks"]

#: Longest prompt or reference answer (characters).
MAX_PROMPT = 20_000
#: Longest rejection reason (characters).
MAX_REASON = 2_000
#: Pending proposals a rater may have at once.
MAX_PENDING = 20
#: Pending proposals sent from the landing page (by anyone) a public track may have at once.
MAX_PUBLIC_PENDING = 200
#: Longest contact of a proposal sent from the landing page (characters).
MAX_CONTACT = 320
#: A proposal's states (``imported``: accepted, and its answers imported: a question of the track).
STATUSES = PROPOSAL_STATUSES
#: The question id of an accepted proposal in the question-import format.
_PROPOSED = re.compile(r"^proposed-([1-9][0-9]{0,17})$")


@dataclass(frozen=True)
class Proposal:
    """One proposal as the admin sees it."""

    id: int
    track: str
    rater_id: int | None
    rater_name: str
    prompt: str
    reference: str
    specialty: str
    status: str
    reason: str
    created_at: datetime
    contact: str = ""
    question_id: int | None = None

    @property
    def proposer(self) -> str:
        """Who proposed it, as the admin's pages and files name them: ``rater-<n>``, or ``public``."""
        return "public" if self.rater_id is None else f"rater-{self.rater_id}"


@dataclass(frozen=True)
class PublicTrack:
    """A public track as the landing page lists it."""

    slug: str
    title: str
    overview: str
    specialties: list[str]


def public_tracks(db: Database) -> list[PublicTrack]:
    """The public tracks (listed on the landing page, open to anyone's proposals), oldest first."""
    with db.reading() as session:
        return [PublicTrack(t.slug, t.title, t.overview, list(t.specialties or []))
                for t in session.scalars(select(Track).where(Track.public.is_(True)).order_by(Track.id))]


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
    with db.writing() as session:
        rater = session.get(Rater, rater_id)
        track = session.scalar(select(Track).where(Track.slug == slug))
        if rater is None or rater.disabled_at is not None or track is None or not in_scope(rater.tracks, track.id):
            raise InputError("no such track", column="track", value=slug, allowed="one of your tracks")
        return _store(session, track, rater_id, prompt=prompt, reference=reference, specialty=specialty)


def propose_public(db: Database, slug: str, *, prompt: str, reference: str = "", specialty: str = "",
                   contact: str = "") -> int:
    """Store a question proposed by anyone (no rater) for a public track (pending review), with an optional
    contact (an email address or a name, at most :data:`MAX_CONTACT` characters; only the study team sees it);
    returns its id."""
    contact = check_text(contact, "contact", limit=MAX_CONTACT)
    with db.writing() as session:
        track = session.scalar(select(Track).where(Track.slug == slug, Track.public.is_(True)))
        if track is None:
            raise InputError("no such track", column="track", value=slug, allowed="one of the tracks listed")
        return _store(session, track, None, prompt=prompt, reference=reference, specialty=specialty,
                      contact=contact)


def _store(session: Session, track: Track, rater_id: int | None, *, prompt: str, reference: str, specialty: str,
           contact: str = "") -> int:
    """Check a proposal's text and the pending limit (per rater, or per track for proposals from the landing page),
    then store it as pending; returns its id."""
    prompt = check_text(prompt, "prompt", required=True)
    reference = check_text(reference, "reference")
    specialty = " ".join(check_text(specialty, "specialty", limit=100).split()).casefold()
    if specialty and track.specialties and specialty not in track.specialties:
        raise InputError("specialty not on the track's list", column="specialty", value=specialty,
                         allowed=", ".join(track.specialties) + " or empty")
    waiting = select(func.count(QuestionProposal.id)).where(QuestionProposal.status == "pending")
    waiting = waiting.where(QuestionProposal.rater_id == rater_id) if rater_id is not None else \
        waiting.where(QuestionProposal.rater_id.is_(None), QuestionProposal.track_id == track.id)
    pending = session.scalar(waiting) or 0
    limit = MAX_PENDING if rater_id is not None else MAX_PUBLIC_PENDING
    if pending >= limit:
        raise InputError("too many proposals waiting for review", column="prompt", value=int(pending),
                         allowed=f"at most {limit} pending; wait for the study team's review")
    proposal = QuestionProposal(track_id=track.id, rater_id=rater_id, contact=contact, prompt=prompt,
                                reference=reference, specialty=specialty, status="pending", reason="",
                                created_at=utcnow())
    session.add(proposal)
    session.flush()
    return proposal.id


def list_proposals(db: Database, slug: str | None = None, status: str | None = "pending") -> list[Proposal]:
    """Proposals (of one track, or all; of one status, or all with ``status=None``), oldest first."""
    if status is not None and status not in STATUSES:
        raise InputError("unknown status", column="status", value=status, allowed=", ".join(STATUSES))
    query = (select(QuestionProposal, Track.slug, Rater.name)
             .join(Track, QuestionProposal.track_id == Track.id)
             .outerjoin(Rater, QuestionProposal.rater_id == Rater.id)
             .order_by(QuestionProposal.id))
    if slug is not None:
        query = query.where(Track.slug == slug)
    if status is not None:
        query = query.where(QuestionProposal.status == status)
    with db.reading() as session:
        rows = session.execute(query).all()
    return [Proposal(p.id, str(track), p.rater_id, str(name or ""), p.prompt, p.reference, p.specialty, p.status,
                     p.reason, p.created_at, p.contact, p.question_id) for p, track, name in rows]


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
                         "proposed_by": [p.proposer for p in proposals],
                         "status": [p.status for p in proposals], "reason": [p.reason for p in proposals]},
                        columns=["id", "prompt", "model_a", "answer_a", "model_b", "answer_b", "reference",
                                 "specialty", "proposed_by", "status", "reason"])


def proposal_number(question_id: str) -> int | None:
    """The proposal a question id of the import format names (``proposed-<n>``), else None."""
    found = _PROPOSED.match(str(question_id))
    return int(found.group(1)) if found else None


def attach_proposals(session: Session, track: Track, external_ids: Sequence[str], source: str) -> dict[str, int]:
    """Check that every ``proposed-<n>`` id of a question file being imported into ``track`` names an accepted
    proposal of that track (else an :class:`InputError` naming the row); returns {id: proposal number}. Call
    :func:`mark_imported` once the questions are stored."""
    attached: dict[str, int] = {}
    for row, external_id in enumerate(external_ids, start=1):
        number = proposal_number(external_id)
        if number is None:
            continue
        proposal = session.get(QuestionProposal, number)
        if proposal is None or proposal.track_id != track.id:
            raise InputError(f"no proposal {number} for track {track.slug!r}", file=source, row=row, column="id",
                             value=external_id, allowed="proposed-<n> of an accepted proposal of the track")
        if proposal.status != "accepted":
            raise InputError(f"proposal {number} is {proposal.status}, not accepted", file=source, row=row,
                             column="id", value=external_id, allowed="an accepted proposal (accept it first)")
        attached[str(external_id)] = number
    return attached


def mark_imported(session: Session, track: Track, attached: dict[str, int]) -> None:
    """Mark the proposals of :func:`attach_proposals` imported, each with the question it became."""
    if not attached:
        return
    questions = dict(session.execute(select(Question.external_id, Question.id).where(
        Question.track_id == track.id, Question.external_id.in_(list(attached)))).all())
    for external_id, number in attached.items():
        proposal = session.get_one(QuestionProposal, number)
        proposal.status, proposal.question_id = "imported", questions[external_id]
