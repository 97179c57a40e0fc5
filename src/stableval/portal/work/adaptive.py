"""Adaptive assignment: questions whose STABLEVAL posterior is still uncertain get raters beyond k, up to a cap.

The model: the track's confirmed answers to regular questions as its task type reads them
(:meth:`~stableval.portal.tasks.base.TaskType.adaptive_table`; types whose ``adaptive`` field is set). A pairwise
track's are its step-1 choices (counterbalancing undone, so ``a`` always means the file's ``model_a``; levels ``a,
b, tie, neither``), one judgment of the response (question, criterion) each; a single-answer track's are its levels
per criterion, a multiple-choice track's the blind answers (one response per question). The method registry's
primary method, STABLEVAL (Bonagiri et al. 2026, arXiv:2605.02122: MAP Dawid–Skene with Dirichlet priors; here a
Dirichlet(2) prior on each confusion row, :data:`ALPHA_PI`) gives each response a posterior over the levels. A
question's **confidence** is the mean over its criteria of the max posterior. Once a question has its k confirmed
ratings, one with confidence below the track's ``adaptive_threshold`` gets one more rater at a time (its quota:
``extra`` slots beyond k, stored in ``question_quotas``) until it is confident or has ``max_k``; a confident one is
closed where it stands. :mod:`stableval.portal.work.assignment` offers a question while confirmed ratings plus open
leases are below ``k + extra``.

Refreshing is incremental and rare: after a submission, the fit is refreshed only when ``adaptive_every`` new
submissions have arrived in the track since the last fit, or :data:`REFRESH_SECONDS` have passed and at least one
has; it runs after the response is sent (a background task). The first fit is STABLEVAL's own (every start, keep
the best); each later one warm-starts EM from the last fit's parameters — class priors, and each rater's confusion
matrix (a new rater starts at the mean of the known ones) — with an E-step first
(:func:`stableval.aggregate.em.run_em` with ``init_params``), so a few new judgments cost a few EM iterations
rather than a fit from scratch. Each time the track's submissions have doubled since the last cold fit, the next
refresh is a cold fit again: fits on the first few judgments are poorly identified (levels nobody has used yet
get identical confusion rows, which EM can never separate again), and this costs O(log n) cold fits in all. The
last fit's parameters are kept per process (each worker process keeps its own; the quotas live in the database).

Types whose answers are rankings (``ordering`` types: ddx, rank-documents) use the rater-aware ranking model
instead (:mod:`stableval.portal.work.ranking_model`, warm-started the same way, and shared with the admin's rater
table): a question's confidence is the plausibility of its most plausible option.

>>> import numpy as np
>>> quotas(np.array([3, 3, 2, 5, 4]), np.array([0.95, 0.5, 0.4, 0.5, 0.9]), k=3, max_k=5, threshold=0.8).tolist()
[0, 1, 0, 2, 1]
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import func, select

from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, QuestionQuota, Submission, Track, utcnow
from stableval.portal.tasks.registry import TASKS

if TYPE_CHECKING:
    from stableval.aggregate.registry import Method

__all__ = ["ADAPTIVE_TASKS", "ALPHA_PI", "REFRESH_SECONDS", "AdaptiveFit", "adaptive_table", "clear_state",
           "fit_choices", "quotas", "refresh", "refresh_after_submission", "track_quotas"]

#: Task types with adaptive assignment (their ``adaptive`` field: answers a rater model reads;
#: :func:`stableval.portal.admin.manage.create_track` refuses a ``max_k`` on a track of another type).
ADAPTIVE_TASKS = tuple(name for name, task in TASKS.items() if task.adaptive)
#: A refresh also happens when this many seconds have passed since the last one and a submission arrived.
REFRESH_SECONDS = 300.0
#: Dirichlet concentration on each confusion row: with a flat prior (1) unanimous early judgments are unidentified
#: (every true level explains "all say a" equally well and the MAP optimum is a uniform posterior); 2 breaks the tie
ALPHA_PI = 2.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AdaptiveFit:
    """One refresh of a track's adaptive model: the parameters (for the next warm start) and its verdicts."""

    track: str
    raters: tuple[int, ...]  # rater ids, in the order of ``confusion``
    priors: np.ndarray  # (K,) (empty for a ranking track)
    confusion: np.ndarray  # (R, K, K) [rater, true, given] (K = 0 for a ranking track)
    submissions: int  # regular submissions in the track when fitted
    n_iter: int
    converged: bool
    warm: bool  # warm-started from the previous fit
    cold_at: int  # submissions at the last cold fit (a cold refit each time the data doubles)
    confidence: dict[int, float] = field(default_factory=dict)  # question id -> mean max posterior
    extra: dict[int, int] = field(default_factory=dict)  # question id -> raters beyond k
    refreshed_at: float = 0.0  # time.monotonic()


def quotas(confirmed: np.ndarray, confidence: np.ndarray, *, k: int, max_k: int, threshold: float) -> np.ndarray:
    """Extra raters beyond k per question: one more than confirmed (up to ``max_k``) for a question with k or more
    confirmed ratings and confidence below ``threshold``; a confident one keeps what it has (no new slot)."""
    confirmed = np.asarray(confirmed, dtype=np.int64)
    uncertain = (np.asarray(confidence) < threshold) & (confirmed >= k)
    target = np.where(uncertain, np.minimum(max_k, confirmed + 1), np.minimum(np.maximum(confirmed, k), max_k))
    return np.asarray(np.maximum(target - k, 0))


def adaptive_table(db: Database, track: Track) -> tuple[AnnotationTable, np.ndarray, np.ndarray]:
    """(annotation table of the track's adaptive model, question id per table item, rater id per table rater), as
    its task type reads its answers (:meth:`~stableval.portal.tasks.base.TaskType.adaptive_table`)."""
    return TASKS[track.task_type].adaptive_table(db, track)


def _primary() -> Method:
    """The headline method of the method registry (STABLEVAL): the rater model this module fits."""
    from stableval.aggregate.registry import REGISTRY

    return next(method for method in REGISTRY.values() if method.primary)


def fit_choices(table: AnnotationTable, rater_ids: np.ndarray, previous: AdaptiveFit | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """The primary method (STABLEVAL) on the table: (posteriors (N, K), priors, confusion, EM iterations,
    converged).

    Without ``previous``: the method's own fit (every start). With it: EM from its parameters (warm start)."""
    from stableval.aggregate.em import run_em

    model: Any = _primary().build(alpha_pi=ALPHA_PI)
    if previous is None or not previous.raters:
        model.fit(table)
        return (np.asarray(model.posteriors_), np.asarray(model.priors_), np.asarray(model.confusion_),
                int(model.n_iter_), bool(model.converged_))
    k = table.n_levels
    known = {rater: index for index, rater in enumerate(previous.raters)}
    crowd = previous.confusion.mean(axis=0)
    confusion = np.stack([previous.confusion[known[r]] if r in known else crowd for r in rater_ids.tolist()])
    priors = previous.priors  # MAP with alpha_pi > 1: no confusion cell is 0, so no judgment starts impossible
    alpha_mu, alpha_pi = model.dirichlet()
    result = run_em(table.response_matrix(), n_raters=table.n_raters, n_levels=k, init_params=(priors, confusion),
                    alpha_mu=alpha_mu, alpha_pi=alpha_pi, max_iter=model.max_iter, tol=model.tol,
                    acceleration=model.acceleration)
    return result.posteriors.T, result.priors, result.confusion, int(result.n_iter), bool(result.converged)


_states: dict[tuple[str, str], AdaptiveFit] = {}
_locks: dict[tuple[str, str], threading.Lock] = {}
_guard = threading.Lock()


def clear_state() -> None:
    """Forget every track's last fit, the ranking model's too (tests: the next refresh is a cold fit)."""
    from stableval.portal.work import ranking_model

    with _guard:
        _states.clear()
    ranking_model.clear_state()


def _count(db: Database, track_id: int) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count(Submission.id)).join(Question).where(
            Question.track_id == track_id, Question.gold == "")) or 0)


def refresh(db: Database, slug: str, *, force: bool = False, now: float | None = None) -> AdaptiveFit | None:
    """Refresh the track's adaptive model and quotas when due (or ``force``); returns the current fit (None: the
    track is not adaptive, or has no judgments yet). Never runs two refreshes of a track at once."""
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            raise InputError("no such track", column="track", value=slug)
        track_id, k, max_k = track.id, track.k, track.max_k
        threshold, every, task = track.adaptive_threshold, track.adaptive_every, track.task_type
    if max_k <= k or not TASKS[task].adaptive:
        return None
    key = (db.url, slug)
    clock = time.monotonic() if now is None else now
    count = _count(db, track_id)
    with _guard:
        state = _states.get(key)
        lock = _locks.setdefault(key, threading.Lock())
    if not force and state is not None and (count - state.submissions < every) and not (
            count > state.submissions and clock - state.refreshed_at >= REFRESH_SECONDS):
        return state
    if not lock.acquire(blocking=force):
        return state  # another request is refreshing this track now
    try:
        if TASKS[task].ordering:
            return _refresh_rankings(db, slug, track_id, count, clock, k=k, max_k=max_k, threshold=threshold)
        table, question_ids, rater_ids = adaptive_table(db, track)
        if table.n_judgments == 0:
            return state
        warm = state if state is not None and count < 2 * state.cold_at and \
            state.confusion.shape[-1] == table.n_levels else None  # a level used for the first time: cold fit
        posteriors, priors, confusion, n_iter, converged = fit_choices(table, rater_ids, warm)
        best = posteriors.max(axis=1)
        per_item = np.bincount(table.response_item, weights=best, minlength=table.n_items) / np.maximum(
            np.bincount(table.response_item, minlength=table.n_items), 1)
        extra = _store_quotas(db, track_id, question_ids, per_item, k=k, max_k=max_k, threshold=threshold)
        fit = AdaptiveFit(slug, tuple(int(r) for r in rater_ids), priors, confusion, count, n_iter, converged,
                          warm is not None, warm.cold_at if warm is not None else count,
                          dict(zip(question_ids.tolist(), per_item.tolist(), strict=True)),
                          extra, clock)
        with _guard:
            _states[key] = fit
        return fit
    finally:
        lock.release()


def _refresh_rankings(db: Database, slug: str, track_id: int, count: int, clock: float, *, k: int, max_k: int,
                      threshold: float) -> AdaptiveFit | None:
    """A refresh of a ranking track: confidence per question from the rater-aware ranking model."""
    from stableval.portal.work.ranking_model import track_rankings

    ranking = track_rankings(db, slug)
    if ranking is None:
        return _states.get((db.url, slug))
    question_ids = np.array(sorted(ranking.confidence), dtype=np.int64)
    confidence = np.array([ranking.confidence[q] for q in question_ids.tolist()])
    extra = _store_quotas(db, track_id, question_ids, confidence, k=k, max_k=max_k, threshold=threshold)
    raters = tuple(int(str(name).removeprefix("rater-")) for name in ranking.model.raters_["rater"])
    fit = AdaptiveFit(slug, raters, np.empty(0), np.empty((len(raters), 0, 0)), count, ranking.n_iter,
                      ranking.converged, ranking.warm, ranking.cold_at,
                      dict(zip(question_ids.tolist(), confidence.tolist(), strict=True)), extra, clock)
    with _guard:
        _states[(db.url, slug)] = fit
    return fit


def _store_quotas(db: Database, track_id: int, question_ids: np.ndarray, confidence: np.ndarray, *, k: int,
                  max_k: int, threshold: float) -> dict[int, int]:
    """Write each question's quota and confidence (one transaction); returns the quotas."""
    with db.writing() as session:
        counts = dict(session.execute(
            select(Submission.question_id, func.count(Submission.id))
            .join(Question, Submission.question_id == Question.id)
            .where(Question.track_id == track_id, Submission.flagged.is_(False))
            .group_by(Submission.question_id)).all())
        confirmed = np.array([counts.get(q, 0) for q in question_ids.tolist()], dtype=np.int64)
        extra = quotas(confirmed, confidence, k=k, max_k=max_k, threshold=threshold)
        found = {q.question_id: q for q in session.scalars(
            select(QuestionQuota).where(QuestionQuota.question_id.in_(question_ids.tolist())))}
        now = utcnow()
        for question_id, slots, sure in zip(question_ids.tolist(), extra.tolist(), confidence.tolist(), strict=True):
            row = found.get(question_id)
            if row is None:
                session.add(QuestionQuota(question_id=question_id, extra=slots, confidence=sure, updated_at=now))
            else:
                row.extra, row.confidence, row.updated_at = slots, sure, now
    return dict(zip(question_ids.tolist(), extra.tolist(), strict=True))


def refresh_after_submission(db: Database, submission_id: int | None) -> None:
    """After a submission (a background task): refresh its track's adaptive model if due. Errors are logged."""
    if submission_id is None:
        return
    try:
        with db.reading() as session:
            slug = session.scalar(select(Track.slug).join(Question, Question.track_id == Track.id)
                                  .join(Submission, Submission.question_id == Question.id)
                                  .where(Submission.id == submission_id))
        if slug is not None:
            refresh(db, slug)
    except Exception:  # the rater's answer is stored; a failed refresh must not surface to them
        log.exception("adaptive assignment: refresh after submission %s failed", submission_id)


def track_quotas(db: Database, slug: str) -> dict[int, tuple[int, float]]:
    """Question id -> (extra raters beyond k, confidence at the last refresh), for the admin's track page."""
    with db.reading() as session:
        rows = session.execute(select(QuestionQuota.question_id, QuestionQuota.extra, QuestionQuota.confidence)
                               .join(Question, QuestionQuota.question_id == Question.id)
                               .join(Track, Question.track_id == Track.id).where(Track.slug == slug)).all()
    return {int(q): (int(extra), float(sure)) for q, extra, sure in rows}
