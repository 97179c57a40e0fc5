"""Live rater diagnostics of one track: the project's own ``diagnose`` (a fit of the method registry's primary
method, STABLEVAL) on the track's ratings.

The track's confirmed ratings (gold questions and "unable to judge" left out), as its task type gives them
(:meth:`~stableval.portal.tasks.base.TaskType.ratings`; types whose ``categorical`` field is set), become an
annotation table: for a pairwise track the 1-5 ratings (responses are (question, model · criterion)), for a
single-answer track the levels of the track's scale, for a multiple-choice track the blind answers as nominal
labels (a type whose ``nominal`` field is set: levels nobody used are left out, and leniency, strictness and
over/under-rating, which need ordered levels, are left empty). Answers that are rankings (``ordering`` types) are
outside the model: their raters get a reliability from the rater-aware ranking model in
:mod:`stableval.portal.admin.order_agreement`. :func:`stableval.evaluate.diagnostics.diagnose` fits STABLEVAL
(Bonagiri et al. 2026, arXiv:2605.02122) and reads each rater's confusion matrix:
class-balanced ``accuracy``, ``leniency`` (how often the top level is given, whatever the truth) and
``strictness`` (the bottom level), ``over_rating`` / ``under_rating`` (P(rating above / below the truth)) and
the Raykar & Yu (2012, JMLR 13:491-518) ``spammer_score``. Beside them, ``consensus`` is the share of the rater's
ratings equal to the fitted consensus level (the most probable level of the response's posterior).

A rater with at least :data:`MIN_RATINGS` ratings is flagged "near-uniform" when their ratings are nearly
independent of the consensus (spammer score below ``diagnose``'s threshold: a rater who always gives the same
level, or answers at random) and "at/below chance" when their accuracy is at most 1/K.

Results are cached per (database, track, number of submissions, last submission id): loading the admin page
again without a new submission costs two counting queries.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo", criteria=["accuracy"])
>>> live = track_diagnostics(db, "demo")
>>> live.raters, live.message
((), 'No confirmed ratings yet: the diagnostics appear once two raters have rated the same answers.')
>>> db.dispose()
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stableval.portal.store.answers import submission_signature, track_or_fail
from stableval.portal.store.db import Database
from stableval.portal.store.result_cache import ResultCache
from stableval.portal.tasks.registry import TASKS

__all__ = ["MIN_RATINGS", "ORDER_MESSAGE", "LiveDiagnostics", "RaterDiagnostics", "clear_cache", "track_diagnostics"]

#: Ratings a rater needs before the page flags them (fewer: "too few ratings").
MIN_RATINGS = 20
#: Why a track whose answers are rankings has no STABLEVAL diagnostics (see
#: :mod:`stableval.portal.admin.order_agreement`).
ORDER_MESSAGE = ("STABLEVAL's rater model reads categorical ratings; rankings are not, so this track's raters are "
                 "diagnosed by the rater-aware ranking model instead (reliability per rater).")
_CACHE_SIZE = 16


@dataclass(frozen=True)
class RaterDiagnostics:
    """One rater's row of the live diagnostics (see the module docstring for each number)."""

    rater: str  # "rater-<id>", as in the exports
    rater_id: int
    ratings: int
    accuracy: float
    consensus: float
    leniency: float
    strictness: float
    over_rating: float
    under_rating: float
    spammer_score: float
    flags: tuple[str, ...]


@dataclass(frozen=True)
class LiveDiagnostics:
    """The diagnostics of one track: raters (flagged first, then by accuracy), the fit, and why it may be empty."""

    track: str
    submissions: int
    raters: tuple[RaterDiagnostics, ...] = ()
    fit: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    task: str = ""  # the track's task type (which ratings were fitted)


_cache: ResultCache[LiveDiagnostics] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached diagnostics (tests; the cache also invalidates itself on every new submission)."""
    _cache.clear()


def track_diagnostics(db: Database, slug: str, *, cache: bool = True) -> LiveDiagnostics:
    """Per-rater diagnostics of the track from a STABLEVAL fit of its ratings (cached until the next submission).

    Raises :class:`~stableval.errors.InputError` for an unknown track.
    """
    count, last = submission_signature(db, slug)
    key = (db.url, slug, count, last)
    return _cache.get(key, lambda: _compute(db, slug, count), enabled=cache)


def _compute(db: Database, slug: str, submissions: int) -> LiveDiagnostics:
    from stableval.data import annotations_from_frame
    from stableval.evaluate.diagnostics import diagnose

    with db.reading() as session:
        track = track_or_fail(session, slug)
    task = TASKS[track.task_type]
    found = task.ratings(db, track) if task.categorical else None
    if found is None:
        return LiveDiagnostics(slug, submissions, task=task.name, message=ORDER_MESSAGE if task.ordering else
                               "This track's answers are not categorical ratings: no rater model applies.")
    frame, levels = found.frame, found.levels
    if frame.empty or frame["rater"].nunique() < 2:
        return LiveDiagnostics(slug, submissions, task=task.name, message="No confirmed ratings yet: the "
                               "diagnostics appear once two raters have rated the same answers.")
    if task.nominal:  # levels nobody used (e.g. option D of three-option questions) only dilute chance
        used = [level for level in levels if level in set(frame["label"])]
        levels = tuple(used) if len(used) >= 2 else levels
    table = annotations_from_frame(frame[["item", "agent", "rater", "label"]], levels=list(levels),
                                   source=f"{slug} ratings")
    result = diagnose(table, _primary_method())
    # each response's consensus level code (the most probable level of its posterior)
    predicted = pd.Index([str(v) for v in table.levels]).get_indexer(
        pd.Index(result.responses["predicted"].astype(str)))
    agrees = table.label == predicted[table.response]
    ordinal = not task.nominal  # leniency, strictness, over/under-rating need ordered levels
    consensus = np.bincount(table.rater, weights=agrees, minlength=table.n_raters) / np.maximum(
        np.bincount(table.rater, minlength=table.n_raters), 1)
    position = {str(name): index for index, name in enumerate(table.raters)}
    rows = []
    for row in result.raters.to_dict("records"):
        name = str(row["rater"])
        flags: list[str] = []
        if row["ratings"] < MIN_RATINGS:
            flags.append(f"too few ratings to judge (< {MIN_RATINGS})")
        else:
            if row["near_uniform"]:
                flags.append("near-uniform: ratings nearly independent of the consensus")
            if row["below_chance"]:
                flags.append("at/below chance")
        rows.append(RaterDiagnostics(
            rater=name, rater_id=int(name.removeprefix("rater-")), ratings=int(row["ratings"]),
            accuracy=float(row["accuracy"]), consensus=float(consensus[position[name]]),
            leniency=float(row["leniency"]) if ordinal else math.nan,
            strictness=float(row["strictness"]) if ordinal else math.nan,
            over_rating=float(row["over_rating"]) if ordinal else math.nan,
            under_rating=float(row["under_rating"]) if ordinal else math.nan,
            spammer_score=float(row["spammer_score"]), flags=tuple(flags)))
    rows.sort(key=lambda r: (not any(not f.startswith("too few") for f in r.flags), -r.accuracy, r.rater_id))
    return LiveDiagnostics(slug, submissions, tuple(rows), dict(result.fit), task=task.name)


def _primary_method() -> str:
    """The method registry's headline method (STABLEVAL): the rater model the diagnostics fit."""
    from stableval.aggregate.registry import REGISTRY

    return next(name for name, method in REGISTRY.items() if method.primary)
