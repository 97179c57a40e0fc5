"""Live rater diagnostics of a track whose answers are rankings (task types whose ``ordering`` field is set), where
STABLEVAL's categorical rater model does not apply: the rater-aware ranking model
(:mod:`stableval.portal.work.ranking_model`, Rater-PL: Plackett–Luce with a reliability per rater, as Raman &
Joachims 2014) fitted on the track's confirmed answers, warm-started from its last fit.

Per rater: the **reliability** β with its 95% interval (0 = rankings unrelated to the others', 1 = the typical
rater, above 1 = closer to the consensus than most), the **top agreement** (share of their answers whose first group
holds the model's most plausible option of the question), and how many of their answers could be compared (to
questions another rater also answered). A rater with at least :data:`MIN_COMPARED` compared answers is flagged
when the reliability is below :data:`~stableval.aggregate.rankings.rater_pl.FLAG_BELOW` (one half) of the median
rater's: a rater who answers at random or always the same way. Pausing stays the admin's decision.

Results are cached per (database, track, number of submissions, last submission id).

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo")
>>> track_order_agreement(db, "demo").message
'Rater reliabilities from the ranking model are for tracks whose answers are rankings.'
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from stableval.aggregate.rankings.rater_pl import FLAG_BELOW
from stableval.portal.store.answers import submission_signature, task_of
from stableval.portal.store.db import Database
from stableval.portal.store.result_cache import ResultCache
from stableval.portal.tasks.ordering import TAU_FLAG, TOP1_FLAG, loo_kendall_tau, loo_top1_agreement
from stableval.portal.tasks.registry import TASKS
from stableval.portal.work.ranking_model import track_rankings

__all__ = ["FLAG_BELOW", "MEASURE", "MIN_COMPARED", "TAU_FLAG", "TOP1_FLAG", "OrderAgreement", "RaterOrderAgreement",
           "clear_cache", "loo_kendall_tau", "loo_top1_agreement", "track_order_agreement"]

#: Compared answers a rater needs before the page flags them.
MIN_COMPARED = 5
#: What the score of the table is.
MEASURE = "reliability from the rater-aware ranking model (Rater-PL)"
_CACHE_SIZE = 16


@dataclass(frozen=True)
class RaterOrderAgreement:
    """One rater's row: ``score`` is the reliability β (NaN when nothing could be compared), with its interval."""

    rater: str
    rater_id: int
    answers: int  # confirmed answers in the track
    compared: int  # answers to questions another rater also answered
    score: float
    flags: tuple[str, ...]
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    top_agreement: float = float("nan")  # share of answers whose first group holds the model's top option


@dataclass(frozen=True)
class OrderAgreement:
    """The rater table of a track whose answers are rankings (``measure`` says which score, ``column`` and
    ``explanation`` how the admin's table names it, ``threshold`` the flag's share of the median reliability), the
    fit (iterations, convergence, warm start, seconds), or why it is empty."""

    track: str
    task: str
    measure: str
    raters: tuple[RaterOrderAgreement, ...] = ()
    message: str = ""
    column: str = ""
    explanation: str = ""
    threshold: float = float("nan")
    fit: tuple[tuple[str, object], ...] = ()


_cache: ResultCache[OrderAgreement] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached tables and the ranking model's last fits (tests; the cache also invalidates itself on every new
    submission)."""
    from stableval.portal.work import ranking_model

    _cache.clear()
    ranking_model.clear_state()


def track_order_agreement(db: Database, slug: str, *, cache: bool = True) -> OrderAgreement:
    """Each rater's reliability under the rater-aware ranking model in a track whose answers are rankings (other
    tracks: an empty table and a message); cached until the next submission."""
    count, last = submission_signature(db, slug)
    key = (db.url, slug, count, last)
    return _cache.get(key, lambda: _compute(db, slug), enabled=cache)


def _compute(db: Database, slug: str) -> OrderAgreement:
    task = TASKS[task_of(db, slug)]
    if not task.ordering:
        return OrderAgreement(slug, task.name, "", message="Rater reliabilities from the ranking model are for "
                                                           "tracks whose answers are rankings.")
    base = OrderAgreement(slug, task.name, MEASURE, column="Reliability", threshold=FLAG_BELOW, explanation=(
        "Per rater, the reliability of the rater-aware ranking model (Rater-PL: Plackett–Luce with a reliability "
        "per rater, fitted on every confirmed answer): 0 = rankings unrelated to the others', 1 = the typical "
        "rater, above 1 = closer to the consensus; with its 95% interval, and the share of their answers whose "
        "first choice is the model's most plausible one (top agreement)"))
    fitted = track_rankings(db, slug)
    if fitted is None:
        return OrderAgreement(**{**base.__dict__, "message": "No confirmed answers yet."})
    frame = fitted.frame
    raters, codes = np.unique(frame["rater_id"].to_numpy(dtype=np.int64), return_inverse=True)
    per_question = frame.groupby("question_id")["rater_id"].transform("nunique").to_numpy()
    compared = np.bincount(codes, weights=per_question > 1, minlength=len(raters)).astype(np.int64)
    answered = np.bincount(codes, minlength=len(raters))
    model: dict[str, dict[Any, Any]] = {str(r["rater"]): r for r in fitted.model.raters_.to_dict("records")}
    nan = float("nan")
    out = []
    for index, rater_id in enumerate(raters.tolist()):
        row = model.get(f"rater-{rater_id}", {})
        score = float(row.get("reliability", nan)) if compared[index] else nan
        if compared[index] < MIN_COMPARED:
            flags: tuple[str, ...] = (f"too few compared answers to judge (< {MIN_COMPARED})",)
        else:
            flags = (f"low reliability: below {FLAG_BELOW} × the median",) if row.get("flagged") else ()
        out.append(RaterOrderAgreement(
            f"rater-{rater_id}", int(rater_id), int(answered[index]), int(compared[index]), score, flags,
            ci_low=float(row.get("ci_low", nan)), ci_high=float(row.get("ci_high", nan)),
            top_agreement=float(row.get("top_agreement", nan))))
    out.sort(key=lambda r: (not any(not f.startswith("too few") for f in r.flags),
                            -(r.score if np.isfinite(r.score) else -1.0), r.rater_id))
    fit = (("iterations", fitted.n_iter), ("converged", fitted.converged), ("warm start", fitted.warm),
           ("seconds", round(fitted.seconds, 3)))
    return OrderAgreement(**{**base.__dict__, "raters": tuple(out), "fit": fit})

