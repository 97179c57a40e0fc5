"""Live results of one track and criterion: agreement between raters and the leaderboards.

Built straight from the export tables of :mod:`stableval.portal.admin.export` (no file round trip):

* **Ratings (1-5)**: the annotation export (one row per rated answer) becomes an
  :class:`~stableval.data.AnnotationTable` with levels ``1 < 2 < 3 < 4 < 5`` (credit 0, 0.25, ..., 1).
  Agreement is :func:`stableval.evaluate.agreement.agreement` (Krippendorff 2004 alpha, Fleiss 1971 kappa,
  Gwet 2008 AC1, Cohen 1960 kappa; unit = one model's answer to one question); the leaderboard is
  :func:`stableval.evaluate.score_agents` (the registry's default methods: majority vote, Dawid & Skene 1979,
  STABLEVAL) with percentile-bootstrap intervals over each agent's answers.
* **Pairwise votes (step 1)**: the pairwise export becomes a :class:`~stableval.data.PairwiseTable` and
  :func:`stableval.evaluate.pairwise.pairwise_leaderboard` fits Bradley–Terry (Bradley & Terry 1952) by maximum
  likelihood, ties counting half, with bootstrap intervals over votes; it also reports position bias (share of
  decisive votes won by the answer shown as A). Agreement on the votes uses the nominal statistics, with the
  choice written about the two models in a fixed (alphabetical) order so that counterbalancing does not count as
  disagreement.

Bootstrap sizes are small by default (B = 200, seeded) so the admin page answers quickly; results are cached
per (track, criterion, number and last id of the judgments), so a reload without new judgments costs nothing.

>>> import tempfile, pathlib
>>> from stableval.portal.store.db import Database
>>> from stableval.portal.admin.manage import create_track
>>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'portal.db'}"); db.upgrade()
>>> _ = create_track(db, "demo", criteria=["accuracy"])
>>> res = track_results(db, "demo")
>>> res.criterion, res.ratings, res.messages[0]
('accuracy', 0, 'No confirmed judgments for Accuracy yet: the results appear after the first submissions.')
>>> db.dispose()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import func, select

from stableval.errors import InputError, StableValError
from stableval.portal.store.db import Database
from stableval.portal.store.models import Judgment, Question, Submission, Track
from stableval.portal.store.result_cache import ResultCache
from stableval.portal.tasks.judgments import RATING_LEVELS, export_judgments

__all__ = ["DEFAULT_BOOTSTRAP", "MIN_ITEMS", "PAIRWISE_LEVELS", "TrackResults", "clear_cache", "pairwise_choices",
           "track_results"]

#: Bootstrap replicates used by the results page (small, so the page answers fast).
DEFAULT_BOOTSTRAP = 200
#: Questions with a confirmed judgment needed before leaderboards are shown.
MIN_ITEMS = 2
#: Levels of the step-1 choice written about the models in alphabetical order (nominal).
PAIRWISE_LEVELS = ("first better", "tie", "second better", "neither good")
#: The agreement statistics that make sense for nominal step-1 choices.
NOMINAL_STATISTICS = ("unanimous_agreement", "pairwise_agreement", "krippendorff_alpha_nominal", "fleiss_kappa",
                      "gwet_ac1")
_CACHE_SIZE = 32

if TYPE_CHECKING:
    from stableval.evaluate.pairwise import PairwiseLeaderboard
    from stableval.evaluate.scores import AgentScores


@dataclass(frozen=True)
class TrackResults:
    """Results of one track and criterion (what the admin results page shows).

    Attributes:
        track, title, criterion, criterion_label: which results.
        criteria: every criterion of the track, as ``{"key", "label"}`` dicts.
        items: questions with at least one confirmed judgment of this criterion.
        ratings: 1-5 ratings in the annotation table ("unable to judge" left out, counted in ``notes``).
        votes: step-1 pairwise votes.
        rating_agreement: ``statistic, value, ci_low, ci_high, units, note`` on the 1-5 ratings (or None).
        vote_agreement: the same, nominal statistics only, on the step-1 votes (or None).
        scores: the ratings leaderboard (:class:`~stableval.evaluate.AgentScores`: MV, DS and STABLEVAL scores
            with CIs and rank intervals), or None.
        pairwise: the Bradley–Terry leaderboard of the votes
            (:class:`~stableval.evaluate.pairwise.PairwiseLeaderboard`: Elo-scaled ratings, ties count half, CIs,
            win rates, position bias), or None.
        messages: why a section is missing (too few judgments, an agent that never lost, ...).
        notes: what was left out or should be known.
        bootstrap, seed: the bootstrap settings used.
    """

    track: str
    title: str
    criterion: str
    criterion_label: str
    criteria: tuple[dict[str, str], ...]
    items: int = 0
    ratings: int = 0
    votes: int = 0
    rating_agreement: pd.DataFrame | None = None
    vote_agreement: pd.DataFrame | None = None
    scores: AgentScores | None = None
    pairwise: PairwiseLeaderboard | None = None
    messages: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())
    bootstrap: int = DEFAULT_BOOTSTRAP
    seed: int = 0


def pairwise_choices(frame: pd.DataFrame) -> pd.DataFrame:
    """Step-1 votes as annotation rows about the two models in alphabetical order (so A/B counterbalancing is
    not disagreement): ``item, agent`` (``"X vs Y"``), ``rater``, ``label`` (one of :data:`PAIRWISE_LEVELS`).

    >>> votes = pd.DataFrame({"item": ["q1", "q1"], "agent_a": ["B", "A"], "agent_b": ["A", "B"],
    ...                       "rater": ["r1", "r2"], "winner": ["b", "a"]})
    >>> pairwise_choices(votes)[["agent", "label"]].values.tolist()
    [['A vs B', 'first better'], ['A vs B', 'first better']]
    """
    agent_a = frame["agent_a"].astype(str).to_numpy()
    agent_b = frame["agent_b"].astype(str).to_numpy()
    swapped = agent_b < agent_a
    first = np.where(swapped, agent_b, agent_a)
    second = np.where(swapped, agent_a, agent_b)
    winner = frame["winner"].astype(str).to_numpy()
    label = np.select(
        [winner == "tie", winner == "tie (bothbad)", (winner == "a") ^ swapped],
        ["tie", "neither good", "first better"], default="second better")
    known = np.isin(winner, ["a", "b", "tie", "tie (bothbad)"])
    if not known.all():
        bad = int(np.flatnonzero(~known)[0])
        raise InputError("unknown pairwise winner", row=bad + 1, column="winner", value=winner[bad],
                         allowed="a, b, tie, tie (bothbad)")
    return pd.DataFrame({"item": frame["item"].to_numpy(), "agent": np.char.add(np.char.add(first, " vs "), second),
                         "rater": frame["rater"].to_numpy(), "label": label})


def _signature(db: Database, slug: str, criterion: str) -> tuple[Any, ...]:
    """Changes whenever a judgment of this track and criterion is added (judgments are immutable)."""
    with db.reading() as session:
        count, last = session.execute(
            select(func.count(Judgment.id), func.max(Judgment.id))
            .join(Submission, Judgment.submission_id == Submission.id)
            .join(Question, Submission.question_id == Question.id)
            .join(Track, Question.track_id == Track.id)
            .where(Track.slug == slug, Judgment.criterion == criterion)).one()
        flagged = session.scalar(select(func.count(Submission.id)).join(Question).join(Track).where(
            Track.slug == slug, Submission.flagged.is_(True)))
    return (db.url, slug, criterion, count, last, flagged)


_cache: ResultCache[TrackResults] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached results (tests; the cache also invalidates itself on every new judgment)."""
    _cache.clear()


def _agreement_frame(table: Any, bootstrap: int, seed: int, names: tuple[str, ...] | None = None) -> pd.DataFrame:
    from stableval.evaluate.agreement import agreement

    stats = agreement(table, bootstrap=bootstrap, seed=seed, min_shared=2).statistics
    if names is not None:
        stats = stats[stats["statistic"].isin(names)]
    return stats.reset_index(drop=True)


def track_results(db: Database, slug: str, criterion: str | None = None, *, bootstrap: int = DEFAULT_BOOTSTRAP,
                  seed: int = 0, cache: bool = True) -> TrackResults:
    """Agreement and leaderboards of one track and criterion (default: the track's first criterion).

    Raises :class:`~stableval.errors.InputError` for an unknown track or criterion; too few judgments are not an
    error: the section is left empty and ``messages`` says why.
    """
    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == slug))
        if track is None:
            slugs = session.scalars(select(Track.slug)).all()
            raise InputError("no such track", column="track", value=slug, allowed=", ".join(slugs) or "none yet")
        title, criteria = track.title, tuple(dict(c) for c in track.criteria)
    keys = [c["key"] for c in criteria]
    criterion = criterion or keys[0]
    if criterion not in keys:
        raise InputError("no such criterion in the track", column="criterion", value=criterion,
                         allowed=", ".join(keys))
    key = (*_signature(db, slug, criterion), bootstrap, seed)
    return _cache.get(key, lambda: _compute(db, slug, title, criterion, criteria, bootstrap, seed), enabled=cache)


def _compute(db: Database, slug: str, title: str, criterion: str, criteria: tuple[dict[str, str], ...],
             bootstrap: int, seed: int) -> TrackResults:
    from stableval.data import annotations_from_frame, pairwise_from_frame
    from stableval.evaluate import score_agents
    from stableval.evaluate.pairwise import pairwise_leaderboard

    label = next(c["label"] for c in criteria if c["key"] == criterion)
    base: dict[str, Any] = {"track": slug, "title": title, "criterion": criterion, "criterion_label": label,
                            "criteria": criteria, "bootstrap": bootstrap, "seed": seed}
    ratings = export_judgments(db, "annotations", track=slug, criterion=criterion)
    votes = export_judgments(db, "pairwise", track=slug, criterion=criterion)
    notes = list(dict.fromkeys(ratings.notes + votes.notes))
    messages: list[str] = []
    items = int(votes.frame["item"].nunique())
    base.update(items=items, ratings=len(ratings.frame), votes=len(votes.frame))
    if votes.frame.empty:
        messages.append(f"No confirmed judgments for {label} yet: the results appear after the first submissions.")
        return TrackResults(**base, messages=tuple(messages), notes=tuple(notes))

    # ---- agreement: needs one answer (or question) judged by two raters
    if int(votes.frame["item"].value_counts().max()) < 2:
        messages.append("Agreement needs two raters on the same question; every question has one so far.")
    else:
        try:
            table = annotations_from_frame(pairwise_choices(votes.frame), levels=list(PAIRWISE_LEVELS),
                                           source=f"{slug} pairwise votes")
            base["vote_agreement"] = _agreement_frame(table, bootstrap, seed, NOMINAL_STATISTICS)
        except (StableValError, ValueError) as error:
            messages.append(f"Agreement on the votes could not be computed: {error}")
        if not ratings.frame.empty:
            try:
                table = annotations_from_frame(ratings.frame, levels=list(RATING_LEVELS),
                                               source=f"{slug} ratings")
                base["rating_agreement"] = _agreement_frame(table, bootstrap, seed)
            except (StableValError, ValueError) as error:
                messages.append(f"Agreement on the ratings could not be computed: {error}")

    if items < MIN_ITEMS:
        messages.append(f"Too few judgments for a leaderboard: {items} question(s) judged so far; the leaderboards "
                        f"appear from {MIN_ITEMS}.")
        return TrackResults(**base, messages=tuple(messages), notes=tuple(notes))

    # ---- ratings leaderboard (MV, DS, STABLEVAL with bootstrap CIs)
    if ratings.frame.empty:
        messages.append("Every rating so far is 'unable to judge': no ratings leaderboard yet.")
    else:
        try:
            table = annotations_from_frame(ratings.frame, levels=list(RATING_LEVELS), source=f"{slug} ratings")
            scores = score_agents(table, bootstrap=bootstrap, seed=seed)  # the registry's default methods
            base["scores"] = scores
        except (StableValError, ValueError) as error:
            messages.append(f"The ratings leaderboard could not be computed: {error}")

    # ---- Bradley–Terry from the step-1 votes
    try:
        vote_table = pairwise_from_frame(votes.frame, source=f"{slug} pairwise votes")
        board = pairwise_leaderboard(vote_table, bootstrap=bootstrap, seed=seed)
        base["pairwise"] = board
        notes.extend(board.settings.get("notes", []))
    except (StableValError, ValueError) as error:
        messages.append(f"No Bradley–Terry leaderboard yet: {error}")
    return TrackResults(**base, messages=tuple(messages), notes=tuple(dict.fromkeys(notes)))


STATISTIC_LABELS = {
    "unanimous_agreement": "Unanimous agreement (share of units all raters agree on)",
    "pairwise_agreement": "Pairwise agreement (share of agreeing rater pairs)",
    "krippendorff_alpha_nominal": "Krippendorff's α, nominal",
    "krippendorff_alpha_ordinal": "Krippendorff's α, ordinal",
    "krippendorff_alpha_interval": "Krippendorff's α, interval",
    "fleiss_kappa": "Fleiss' κ",
    "gwet_ac1": "Gwet's AC1",
    "cohen_kappa_mean": "Cohen's κ, mean over rater pairs",
}


def _number(value: Any, digits: int = 3) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _interval(low: Any, high: Any, digits: int = 3) -> str:
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return "–"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def display_tables(results: TrackResults) -> dict[str, Any]:
    """Text cells for the results page: ``{"agreement": {...}, "bradley_terry": {...}, "scores": {...}}``, each
    ``{"header": [...], "rows": [[...], ...]}`` (sections with no data are left out), and ``"position_bias"``.

    >>> res = TrackResults("t", "T", "accuracy", "Accuracy", ({"key": "accuracy", "label": "Accuracy"},))
    >>> display_tables(res)
    {}
    """
    out: dict[str, Any] = {}
    for name, frame in (("rating_agreement", results.rating_agreement), ("vote_agreement", results.vote_agreement)):
        if frame is None:
            continue
        out[name] = {"header": ["Statistic", "Value", "95% CI", "Units", "Note"], "rows": [
            [STATISTIC_LABELS.get(str(r["statistic"]), str(r["statistic"])), _number(r["value"]),
             _interval(r["ci_low"], r["ci_high"]), f"{int(r['units']):,}", str(r["note"])]
            for r in frame.to_dict("records")]}
    if results.scores is not None:
        shown = results.scores.display_frame()
        out["scores"] = {"header": [str(c) for c in shown.columns], "rows": shown.astype(str).values.tolist()}
    if results.pairwise is not None:
        board = results.pairwise.ratings
        out["bradley_terry"] = {
            "header": ["Agent", "Rating (Elo scale)", "95% CI", "Rank", "Games", "Wins", "Losses", "Ties"],
            "rows": [[str(r["agent"]), _number(r["rating"], 0), _interval(r["ci_low"], r["ci_high"], 0),
                      f"{r['rank']}" + (f" ({r['rank_low']}–{r['rank_high']})" if r["rank_low"] != r["rank_high"]
                                        else ""),
                      _number(r["games"], 0), _number(r["wins"], 1), _number(r["losses"], 1), _number(r["ties"], 0)]
                     for r in board.to_dict("records")]}
    if results.pairwise is not None:
        bias = results.pairwise.position_bias.iloc[0]
        out["position_bias"] = (f"The answer shown as A won {bias['left_wins']} and B won {bias['right_wins']} of "
                                f"the decisive votes ({bias['ties']} ties or 'neither'); share won by A "
                                f"{_number(bias['share_left'])} {_interval(bias['ci_low'], bias['ci_high'])} "
                                "(Wilson 95% interval; 0.5 = no position bias).")
    return out
