"""The portal's tables (SQLAlchemy 2 ORM). The Alembic migrations in ``migrations/`` create exactly these.

One row per concept: a :class:`Track` owns its :class:`Question` rows (one prompt, two models' answers); a
:class:`Rater` is created by an invite; an :class:`Assignment` is a rater's claim (lease) on a question; a
:class:`Draft` holds the unfinished form server-side; a :class:`Submission` is the immutable, confirmed record
with one :class:`Judgment` per criterion.

>>> sorted(Base.metadata.tables)[:3]
['assignments', 'drafts', 'judgments']
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from stableval.portal.settings import SETTINGS

__all__ = ["Assignment", "Base", "Draft", "Judgment", "QcOverride", "Question", "QuestionProposal", "QuestionQuota",
           "Rater", "RevokedSession", "Setting", "Submission", "Track", "utcnow"]


def _default(setting: str) -> Any:
    """The declared default of a track setting (:data:`stableval.portal.settings.SETTINGS`)."""
    return SETTINGS[setting].default


def _defaults(setting: str) -> dict[str, Any]:
    """A column's Python and server default: the setting's declared default."""
    value = _default(setting)
    if isinstance(value, bool):
        return {"default": value, "server_default": true() if value else false()}
    return {"default": value, "server_default": f"{value:g}" if isinstance(value, float) else str(value)}


def utcnow() -> datetime:
    """Timezone-aware now (UTC); stored as naive UTC so SQLite and PostgreSQL compare the same way."""
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base of the portal's tables."""


class Setting(Base):
    """Deployment-wide key/value settings (the cookie-signing secret lives here, so restarts keep sessions)."""

    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Track(Base):
    """An evaluation track: its own questions, criteria, consistency rules, k, flag limit and lease length."""

    __tablename__ = "tracks"
    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    criteria: Mapped[list[Any]] = mapped_column(JSON)  # [{"key": "accuracy", "label": "Accuracy"}, ...]
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)  # pairwise choice -> relation of rating(A) to rating(B)
    k: Mapped[int] = mapped_column(Integer, default=_default("k"))
    flag_limit: Mapped[int] = mapped_column(Integer, default=_default("flag_limit"))
    lease_seconds: Mapped[int] = mapped_column(Integer, default=round(_default("lease_hours") * 3600))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # quality control (see stableval.portal.work.quality): share of claims that are gold questions, the gold accuracy
    # below which a rater is paused once they answered qc_min_gold gold questions, the qualification set size
    gold_rate: Mapped[float] = mapped_column(Float, **_defaults("gold_rate"))
    qc_threshold: Mapped[float] = mapped_column(Float, **_defaults("qc_threshold"))
    qc_min_gold: Mapped[int] = mapped_column(Integer, **_defaults("qc_min_gold"))
    qualification: Mapped[int] = mapped_column(Integer, **_defaults("qualification"))
    # adaptive assignment (see stableval.portal.work.adaptive): questions whose STABLEVAL posterior is still uncertain
    # (mean max posterior < adaptive_threshold) get raters beyond k, up to max_k (0: off); the fit is refreshed
    # after adaptive_every new submissions
    max_k: Mapped[int] = mapped_column(Integer, **_defaults("max_k"))
    adaptive_threshold: Mapped[float] = mapped_column(Float, **_defaults("adaptive_threshold"))
    adaptive_every: Mapped[int] = mapped_column(Integer, **_defaults("adaptive_every"))
    # routing (see stableval.portal.work.scope): the track's controlled specialty list (None: free text) and how far
    # routing falls back when the rater's specialty has no question left: specialty, general (pool) or any
    specialties: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    fallback: Mapped[str] = mapped_column(String(16), **_defaults("fallback"))
    # task type (see stableval.portal.tasks.registry): pairwise (A vs B, then 1-5), single, mcq, ddx or rank-documents;
    # scale: the ordered levels of a single-answer track; task_options: e.g. a ddx track's conditions and limit
    task_type: Mapped[str] = mapped_column(String(32), **_defaults("task"))
    scale: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    task_options: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # the study's texts (Markdown: the overview on the landing and progress pages, the instructions before the first
    # question) and whether the track is public (listed on the landing page, open to anyone's proposed questions)
    overview: Mapped[str] = mapped_column(Text, default="", server_default="")
    instructions: Mapped[str] = mapped_column(Text, default="", server_default="")
    public: Mapped[bool] = mapped_column(Boolean, **_defaults("public"))

    @property
    def task(self) -> str:
        """The task type (the ``task`` setting)."""
        return self.task_type

    @property
    def lease_hours(self) -> float:
        """The lease in hours (the ``lease_hours`` setting; stored in seconds)."""
        return self.lease_seconds / 3600

    def setting(self, name: str) -> Any:
        """A declared track setting (:data:`stableval.portal.settings.SETTINGS`) as stored: its own column or
        property (of the same name), else the track's options (a setting without a column of its own is kept
        there), else its declared default."""
        if name in self.__table__.columns or isinstance(getattr(type(self), name, None), property):
            return getattr(self, name)
        return (self.task_options or {}).get(name, _default(name))


class Question(Base):
    """One item: a prompt (and reference answer) with two models' answers, routed by (sub)specialty."""

    __tablename__ = "questions"
    __table_args__ = (UniqueConstraint("track_id", "external_id", name="uq_question_track_external"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    track_id: Mapped[int] = mapped_column(ForeignKey("tracks.id"), index=True)
    external_id: Mapped[str] = mapped_column(String(200))
    prompt: Mapped[str] = mapped_column(Text)
    reference: Mapped[str] = mapped_column(Text, default="")
    specialty: Mapped[str] = mapped_column(String(100), default="")  # normalised: stripped, lower case
    subspecialty: Mapped[str] = mapped_column(String(100), default="")
    model_a: Mapped[str] = mapped_column(String(200))
    answer_a: Mapped[str] = mapped_column(Text)
    model_b: Mapped[str] = mapped_column(String(200))
    answer_b: Mapped[str] = mapped_column(Text)
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    gold: Mapped[str] = mapped_column(String(16), default="", server_default="")  # known answer: a, b, tie, neither
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # task data: options, key, items


class Rater(Base):
    """A rater, created by an invite. Only the SHA-256 of the invite token is stored."""

    __tablename__ = "raters"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    note: Mapped[str] = mapped_column(String(200), default="")
    name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(320), default="")
    specialty: Mapped[str] = mapped_column(String(100), default="")
    subspecialty: Mapped[str] = mapped_column(String(100), default="")
    years: Mapped[int | None] = mapped_column(Integer, nullable=True)
    profile_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # revoked: no sign-in, no work
    sessions_after: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)  # older sessions are ended
    tracks: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)  # invite scope: track ids (None: all)


class RevokedSession(Base):
    """A signed-in session ended before its cookie expires (admin sign-out): its ``sid`` is refused from then on."""

    __tablename__ = "revoked_sessions"
    sid: Mapped[str] = mapped_column(String(64), primary_key=True)
    revoked_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class QcOverride(Base):
    """The admin's decision on a rater in a track: "allow" (never paused by quality control) or "pause"."""

    __tablename__ = "qc_overrides"
    track_id: Mapped[int] = mapped_column(ForeignKey("tracks.id"), primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"), primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    set_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class QuestionQuota(Base):
    """Adaptive assignment's verdict on a question: ``extra`` raters beyond the track's k, and the question's
    confidence (mean over its criteria of the STABLEVAL max posterior) at the last refresh."""

    __tablename__ = "question_quotas"
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id"), primary_key=True)
    extra: Mapped[int] = mapped_column(Integer, default=0)
    confidence: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class QuestionProposal(Base):
    """A question proposed for a track (the "submit a question" channel) by a rater, or by anyone (no rater; an
    optional contact) for a public track: pending, accepted, rejected (with the admin's reason) or imported (an
    accepted proposal whose answers were imported: ``question_id``); see
    :mod:`stableval.portal.work.question_queue`."""

    __tablename__ = "question_proposals"
    __table_args__ = (Index("ix_question_proposals_status", "status"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    track_id: Mapped[int] = mapped_column(ForeignKey("tracks.id"))
    rater_id: Mapped[int | None] = mapped_column(ForeignKey("raters.id"), index=True, nullable=True)
    contact: Mapped[str] = mapped_column(String(320), default="", server_default="")
    question_id: Mapped[int | None] = mapped_column(ForeignKey("questions.id"), nullable=True)
    prompt: Mapped[str] = mapped_column(Text)
    reference: Mapped[str] = mapped_column(Text, default="")
    specialty: Mapped[str] = mapped_column(String(100), default="")
    status: Mapped[str] = mapped_column(String(16), default="pending")
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Assignment(Base):
    """A rater's claim on a question. ``status``: open (leased until ``expires_at``), done, released.

    A rater has at most one assignment per question, ever (so never sees it twice). ``swapped`` says whether
    ``model_b`` is shown as A (counterbalancing); ``form_token`` is the one-time token of the submit form.
    """

    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("question_id", "rater_id", name="uq_assignment_question_rater"),
                      Index("ix_assignment_question_status", "question_id", "status"))
    id: Mapped[int] = mapped_column(primary_key=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id"))
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="open")
    swapped: Mapped[bool] = mapped_column(Boolean)
    form_token: Mapped[str] = mapped_column(String(64), unique=True)
    claimed_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)


class Draft(Base):
    """The unfinished form of an assignment, saved server-side on every step (and by the autosave script)."""

    __tablename__ = "drafts"
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), primary_key=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Submission(Base):
    """One confirmed, immutable evaluation of a question by a rater (unique per rater × question and token)."""

    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("question_id", "rater_id", name="uq_submission_question_rater"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id"), unique=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id"), index=True)
    form_token: Mapped[str] = mapped_column(String(64), unique=True)
    shown_a: Mapped[str] = mapped_column(String(200))  # model shown as A
    shown_b: Mapped[str] = mapped_column(String(200))
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    flag_reason: Mapped[str] = mapped_column(Text, default="")
    time_pairwise_ms: Mapped[int] = mapped_column(Integer, default=0)
    time_rating_ms: Mapped[int] = mapped_column(Integer, default=0)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # a task type's answer (not pairwise)


class Judgment(Base):
    """One criterion of a submission: the pairwise choice (about the models shown as A/B) and both ratings.

    ``choice`` is ``a``, ``b``, ``tie`` or ``neither``; ratings are 1..5, or NULL for "unable to judge".
    """

    __tablename__ = "judgments"
    __table_args__ = (UniqueConstraint("submission_id", "criterion", name="uq_judgment_submission_criterion"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    criterion: Mapped[str] = mapped_column(String(64))
    choice: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    rating_a: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rating_b: Mapped[int | None] = mapped_column(Integer, nullable=True)
