"""Agreement of each rater's rankings with the other raters' consensus, for the tracks whose answers are rankings
(task types whose ``ordering`` field is set), where STABLEVAL's categorical rater model does not apply.

Each answer's score comes from its task type (:meth:`~stableval.portal.tasks.base.TaskType.order_scores`, built on
the measures of :mod:`stableval.portal.tasks.ordering`: mean Kendall tau-b with the others' mean ranking for
rank-documents, top-1 agreement with the others' plurality first choice for ddx); a rater's score is the mean over
their answers to questions that another rater also answered. A rater with at least :data:`MIN_COMPARED` compared
answers is flagged when the score is below the type's threshold: a rater who answers at random or always the same
way. These are heuristics for the admin to look at, not a model; pausing stays the admin's decision.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo")
>>> track_order_agreement(db, "demo").message
'Agreement with the consensus order is for tracks whose answers are rankings.'
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stableval.portal.store.answers import confirmed_answers, submission_signature, task_of
from stableval.portal.store.db import Database
from stableval.portal.store.result_cache import ResultCache
from stableval.portal.tasks.ordering import TAU_FLAG, TOP1_FLAG, loo_kendall_tau, loo_top1_agreement
from stableval.portal.tasks.registry import TASKS

__all__ = ["MIN_COMPARED", "TAU_FLAG", "TOP1_FLAG", "OrderAgreement", "RaterOrderAgreement", "clear_cache",
           "loo_kendall_tau", "loo_top1_agreement", "track_order_agreement"]

#: Compared answers a rater needs before the page flags them.
MIN_COMPARED = 5
_CACHE_SIZE = 16


@dataclass(frozen=True)
class RaterOrderAgreement:
    """One rater's agreement with the others' consensus (``score``: mean tau-b, or top-1 share)."""

    rater: str
    rater_id: int
    answers: int  # confirmed answers in the track
    compared: int  # answers to questions another rater also answered
    score: float  # NaN when nothing could be compared
    flags: tuple[str, ...]


@dataclass(frozen=True)
class OrderAgreement:
    """The agreement table of a track whose answers are rankings (``measure`` says which score, ``column`` and
    ``explanation`` how the admin's table names it, ``threshold`` where it flags), or why it is empty."""

    track: str
    task: str
    measure: str
    raters: tuple[RaterOrderAgreement, ...] = ()
    message: str = ""
    column: str = ""
    explanation: str = ""
    threshold: float = float("nan")


_cache: ResultCache[OrderAgreement] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached tables (tests; the cache also invalidates itself on every new submission)."""
    _cache.clear()


def track_order_agreement(db: Database, slug: str, *, cache: bool = True) -> OrderAgreement:
    """Each rater's agreement with the others' consensus in a track whose answers are rankings (other tracks: an
    empty table and a message); cached until the next submission."""
    count, last = submission_signature(db, slug)
    key = (db.url, slug, count, last)
    return _cache.get(key, lambda: _compute(db, slug), enabled=cache)


def _compute(db: Database, slug: str) -> OrderAgreement:
    task = TASKS[task_of(db, slug)]
    if not task.ordering:
        return OrderAgreement(slug, task.name, "", message="Agreement with the consensus order is for tracks whose "
                                                           "answers are rankings.")
    track, frame, _, _ = confirmed_answers(db, slug)
    question = pd.factorize(frame["question_id"])[0].astype(np.int64)
    found = task.order_scores(track, frame, question)
    base = OrderAgreement(slug, task.name, found.measure, column=found.column, explanation=found.explanation,
                          threshold=found.threshold)
    if frame.empty:
        return OrderAgreement(**{**base.__dict__, "message": "No confirmed answers yet."})
    scores = found.scores
    raters, codes = np.unique(frame["rater_id"].to_numpy(dtype=np.int64), return_inverse=True)
    compared = ~np.isnan(scores)
    n_compared = np.bincount(codes, weights=compared, minlength=len(raters)).astype(np.int64)
    total = np.bincount(codes, weights=np.where(compared, scores, 0.0), minlength=len(raters))
    answered = np.bincount(codes, minlength=len(raters))
    out = []
    for index, rater_id in enumerate(raters.tolist()):
        score = total[index] / n_compared[index] if n_compared[index] else float("nan")
        if n_compared[index] < MIN_COMPARED:
            flags: tuple[str, ...] = (f"too few compared answers to judge (< {MIN_COMPARED})",)
        else:
            flags = (f"low agreement with the others: {found.flag}",) if score < found.threshold else ()
        out.append(RaterOrderAgreement(f"rater-{rater_id}", int(rater_id), int(answered[index]),
                                       int(n_compared[index]), float(score), flags))
    out.sort(key=lambda r: (not any(not f.startswith("too few") for f in r.flags),
                            -(r.score if np.isfinite(r.score) else -2.0), r.rater_id))
    return OrderAgreement(**{**base.__dict__, "raters": tuple(out)})
