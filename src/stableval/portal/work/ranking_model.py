"""The rater-aware ranking model of a track whose answers are rankings (task types whose ``ordering`` field is set):
live rater diagnostics (:mod:`stableval.portal.admin.order_agreement`) and adaptive assignment
(:mod:`stableval.portal.work.adaptive`) both read it.

The track's confirmed answers to regular questions, as its task type gives them
(:meth:`~stableval.portal.tasks.base.TaskType.rankings`: per answer the rater, the question and the answer's groups,
best first), are fitted by Rater-PL (:func:`stableval.aggregate.rankings.fit_rater_rankings`: Plackett–Luce with a
reliability per rater, as Raman & Joachims 2014): each rater gets a reliability β with a 95% interval (0 = random
rankings, 1 = the typical rater) and each question a plausibility over its options. A question's **confidence** is
the plausibility of its most plausible option (the model's probability that a typical rater puts it first).

Warm start, as the label models' adaptive fit: the last fit of the track is kept per process and the next one starts
from its scores and reliabilities (items, options and raters matched by name), so a few new answers cost a few
L-BFGS iterations; each time the track's answers have doubled since the last cold fit, the next is cold again. A fit
is reused as long as the track's submissions have not changed.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo")
>>> track_rankings(db, "demo") is None   # not a ranking track
True
>>> db.dispose()
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from stableval.portal.store.answers import confirmed_answers, submission_signature, task_of
from stableval.portal.store.db import Database
from stableval.portal.tasks.registry import TASKS

if TYPE_CHECKING:
    from stableval.aggregate.rankings import RaterPlackettLuce

__all__ = ["RankingFit", "clear_state", "track_rankings"]


@dataclass(frozen=True)
class RankingFit:
    """One fit of a track's rater-aware ranking model: the fitted model (``raters_``: rater ``rater-<id>``,
    reliability, ci_low, ci_high, rankings, choices, gain_per_choice, top_agreement, flagged), the answers it read,
    each question's confidence, and how the fit went."""

    track: str
    model: RaterPlackettLuce
    frame: pd.DataFrame  # the confirmed answers fitted (one row per answer: question_id, rater_id, ...)
    signature: tuple[int, int]  # (submissions, last submission id) of the track when fitted
    warm: bool  # warm-started from the previous fit
    cold_at: int  # answers at the last cold fit (a cold refit each time they double)
    seconds: float  # the fit's wall time
    confidence: dict[int, float] = field(default_factory=dict)  # question id -> top plausibility

    @property
    def n_iter(self) -> int:
        return int(self.model.n_iter_)

    @property
    def converged(self) -> bool:
        return bool(self.model.converged_)


_states: dict[tuple[str, str], RankingFit] = {}
_locks: dict[tuple[str, str], threading.Lock] = {}
_guard = threading.Lock()


def clear_state() -> None:
    """Forget every track's last fit (tests: the next fit is cold)."""
    with _guard:
        _states.clear()


def track_rankings(db: Database, slug: str, *, warm: bool = True) -> RankingFit | None:
    """The track's current rater-aware ranking fit (None: not a ranking track, or no answers yet): the last fit when
    no submission arrived since, else a new one warm-started from it (``warm=False``: cold). Never fits a track
    twice at once."""
    from stableval.aggregate.rankings import fit_rater_rankings

    task = TASKS[task_of(db, slug)]
    if not task.ordering:
        return None
    key = (db.url, slug)
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        signature = submission_signature(db, slug)
        state = _states.get(key)
        if state is not None and state.signature == signature and warm:
            return state
        track, frame, _, _ = confirmed_answers(db, slug)
        if frame.empty:
            return None
        records, options = task.rankings(track, frame)
        previous = state if warm and state is not None and len(frame) < 2 * state.cold_at else None
        started = time.perf_counter()
        model = fit_rater_rankings(records, options=options, previous=None if previous is None else previous.model)
        seconds = time.perf_counter() - started
        fit = RankingFit(slug, model, frame, signature, previous is not None,
                         previous.cold_at if previous is not None else len(frame), seconds, _confidence(model))
        with _guard:
            _states[key] = fit
        return fit


def _confidence(model: RaterPlackettLuce) -> dict[int, float]:
    """Question id -> the plausibility of its most plausible named option (a pool of the options nobody named
    stands for many, so it is left out)."""
    table = model.to_frame()
    table = table.loc[table["option"] != "(others)"]
    best = table.groupby("item", sort=False)["plausibility"].max()
    return {int(str(item)): float(value) for item, value in zip(best.index, best.to_numpy(float), strict=True)}
