"""Pairwise leaderboards: Bradley–Terry ratings with bootstrap intervals, win rates and position bias.

For each criterion (or once, when the votes carry none) the agents are rated by Bradley–Terry maximum likelihood
(:class:`~stableval.aggregate.BradleyTerry`); the percentile bootstrap over votes (B = 1000 by default, seeded)
gives each rating a confidence interval and each agent a rank interval. The empirical win-rate matrix counts a tie
as half a win. Position bias: ``agent_a`` is taken to be the answer shown first (on the left); the share of
decisive votes won by the left side, with a Wilson interval, tells whether raters favour a position (0.5 = none).

>>> import pandas as pd
>>> from stableval.data import pairwise_from_frame
>>> votes = pairwise_from_frame(pd.DataFrame({
...     "item": list("abcdefgh"), "agent_a": ["A", "B"] * 4, "agent_b": ["B", "C"] * 4,
...     "rater": "r", "winner": ["a", "a", "a", "b", "tie", "a", "b", "a"]}))
>>> board = pairwise_leaderboard(votes, bootstrap=50)
>>> board.ratings["agent"].tolist()
['A', 'B', 'C']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, matrix, records
from stableval.aggregate import clone
from stableval.aggregate.bradley_terry import BradleyTerry
from stableval.aggregate.pairwise import count_matrices, pairwise_counts, vote_codes
from stableval.console import Displayed
from stableval.data.pairwise import PairwiseTable
from stableval.evaluate.intervals import wilson_interval
from stableval.evaluate.scores import competition_ranks
from stableval.progress import progress_bar

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

ALL = "all"


@dataclass(frozen=True)
class PairwiseLeaderboard(Displayed):
    """Result of :func:`pairwise_leaderboard`.

    Attributes:
        ratings: one row per (criterion, agent), best first within a criterion: ``criterion, agent, rating,
            ci_low, ci_high, rank, rank_low, rank_high, strength, games, wins, losses, ties`` (wins/losses/ties
            are weighted vote counts; rank 1 is best).
        win_rate: per criterion, agents × agents: (wins + ties / 2) / games of the row agent against the column
            agent (NaN where they never met).
        win_probability: per criterion, the fitted model's P(row agent beats column agent).
        position_bias: per criterion: ``left_wins, right_wins, ties, share_left, ci_low, ci_high`` (Wilson).
        tie_parameter: per criterion, Davidson's nu (NaN for ``ties="half"``).
        settings: ties model, prior, bootstrap size, seed, confidence, notes.
    """

    ratings: pd.DataFrame
    win_rate: dict[str, pd.DataFrame]
    win_probability: dict[str, pd.DataFrame]
    position_bias: pd.DataFrame
    tie_parameter: dict[str, float]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The ratings: one row per (criterion, agent)."""
        return self.ratings

    def render(self, console: Console) -> None:
        """Per criterion: the ratings with intervals, the win-rate matrix and the position bias."""
        _render_leaderboard(self, console)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (NaN and infinities become None)."""
        return {
            "settings": jsonable(self.settings),
            "ratings": records(self.ratings),
            "win_rate": {c: matrix(f) for c, f in self.win_rate.items()},
            "win_probability": {c: matrix(f) for c, f in self.win_probability.items()},
            "position_bias": records(self.position_bias),
            "tie_parameter": jsonable(self.tie_parameter),
        }


def _render_leaderboard(board: PairwiseLeaderboard, console: Console) -> None:
    """The table people read: per criterion the ratings, the win-rate matrix and the position bias."""
    from rich import box
    from rich.table import Table

    from stableval.markup import literal

    settings = board.settings
    console.print(f"[bold]{literal(settings['source'])}[/]: {settings['votes']:,} pairwise votes; Bradley–Terry, ties "
                  f"{'as half wins' if settings['ties'] == 'half' else 'by the Davidson model'}"
                  + (f", prior {settings['prior']:g} virtual ties per pair" if settings["prior"] else ""))
    for note in settings["notes"]:
        console.print(f"  note: {literal(note)}")
    confidence = round(settings["confidence"] * 100)
    for criterion, part in board.ratings.groupby("criterion", sort=False):
        table = Table(box=box.SIMPLE_HEAVY, title=f"Leaderboard — {literal(criterion)}", title_justify="left",
                      show_edge=False)
        for name in ("Agent", "Rating", f"{confidence}% CI", "Rank", "Games", "W / L / T"):
            table.add_column(name, justify="left" if name == "Agent" else "right")
        row: Any
        for row in part.itertuples(index=False):
            interval = f"[{row.ci_low:.0f}, {row.ci_high:.0f}]" if row.ci_low == row.ci_low else ""
            rank = f"{row.rank}" + (f" ({row.rank_low}–{row.rank_high})" if row.rank_low != row.rank_high else "")
            table.add_row(literal(row.agent), f"{row.rating:.0f}", interval, rank, f"{row.games:g}",
                          f"{row.wins:g} / {row.losses:g} / {row.ties:g}")
        console.print(table)
        rate = board.win_rate[str(criterion)]
        order = list(part["agent"])
        matrix_table = Table(box=box.MINIMAL, title="Win rate of row vs column (ties = ½)", title_justify="left")
        matrix_table.add_column("")
        for agent in order:
            matrix_table.add_column(literal(agent), justify="right", overflow="fold")
        for agent in order:
            cells = [float(rate.loc[agent, a]) for a in order]
            matrix_table.add_row(literal(agent), *[("—" if a == agent else (f"{v:.2f}" if v == v else ""))
                                          for a, v in zip(order, cells, strict=True)])
        console.print(matrix_table)
        bias = board.position_bias.set_index("criterion").loc[criterion].to_dict()
        console.print(f"Position bias: the first-shown (left) answer won {bias['share_left']:.1%} of decisive votes "
                      f"({int(bias['left_wins'])} vs {int(bias['right_wins'])}; {confidence}% CI "
                      f"[{bias['ci_low']:.1%}, {bias['ci_high']:.1%}]; 50% = no bias). Ties: {int(bias['ties'])}.")
        if settings["ties"] == "davidson":
            console.print(f"Davidson tie parameter nu = {board.tie_parameter[str(criterion)]:.3f}.")
    console.print(f"Ratings: 1000 + 400·log10(strength / geometric mean); intervals from {settings['bootstrap']:,} "
                  f"bootstrap resamples of the votes (seed {settings['seed']}).")


def _bootstrap_ratings(frame: pd.DataFrame, agents: list[str], model: BradleyTerry, n_boot: int,
                       rng: np.random.Generator, bar: Any) -> np.ndarray:
    """(B, A) ratings refitted on votes resampled with replacement (draw counts reweight the votes)."""
    n_votes = len(frame)
    base = frame["weight"].to_numpy(float) if "weight" in frame.columns else np.ones(n_votes)
    side_a, side_b, outcome, _ = vote_codes(frame, agents)
    slot = _draw_slots(side_a, side_b, outcome, base, _agent_keys(model, side_a, side_b, outcome, base))
    out = np.full((n_boot, len(agents)), np.nan)
    start = np.log(model.strengths_)
    refit = clone(model)
    for replicate in range(n_boot):
        counts = np.bincount(rng.integers(0, n_votes, n_votes), minlength=n_votes)[slot]
        wins, ties = count_matrices(side_a, side_b, outcome, base * counts, len(agents))
        try:
            out[replicate] = refit.fit_counts(wins, ties, agents, start=start).ratings_
        except ValueError:  # a resample where some agent never lost: leave the replicate out (counted)
            pass
        bar.advance()
    return out


def _agent_keys(model: BradleyTerry, side_a: np.ndarray, side_b: np.ndarray, outcome: np.ndarray,
                base: np.ndarray) -> np.ndarray:
    """Each agent's place in an order that uses no name where the data tells agents apart: by fitted rating, then
    weighted wins, losses and ties (then the name order, for agents alike in all of these)."""
    wins, ties = count_matrices(side_a, side_b, outcome, base, len(model.ratings_))
    won, lost, tied = wins.sum(axis=1), wins.sum(axis=0), ties.sum(axis=1)
    order = np.lexsort((np.round(tied, 9), np.round(lost, 9), np.round(won, 9), np.round(model.ratings_, 9)))
    key = np.empty(order.size, dtype=np.int64)
    key[order] = np.arange(order.size)
    return key


def _draw_slots(side_a: np.ndarray, side_b: np.ndarray, outcome: np.ndarray, base: np.ndarray,
                agent_key: np.ndarray) -> np.ndarray:
    """Each vote's slot in the bootstrap's draws: votes ordered by what they say (the agents' keys, the outcome,
    the weight), so the resamples depend neither on the row order nor on the names; votes alike in all of these
    are interchangeable.

    >>> _draw_slots(np.array([1, 0]), np.array([0, 1]), np.array([0, 0]), np.ones(2), np.array([0, 1])).tolist()
    [1, 0]
    """
    order = np.lexsort((np.round(base, 12), outcome, agent_key[side_b], agent_key[side_a]))
    slot = np.empty(order.size, dtype=np.int64)
    slot[order] = np.arange(order.size)
    return slot


def _check_arguments(*, bootstrap: Any, seed: Any, confidence: Any, prior: Any) -> None:
    """The checks the ``stableval pairwise`` flags make, for callers from Python."""
    def whole(value: Any) -> bool:
        return isinstance(value, int | np.integer) and not isinstance(value, bool)

    if not whole(bootstrap) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a whole number >= 0 (0 = no intervals), got {bootstrap!r}")
    if seed is not None and (not whole(seed) or seed < 0):
        raise ValueError(f"seed must be a whole number >= 0 or None, got {seed!r}")
    if not isinstance(confidence, float | int) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {confidence!r}")
    if not isinstance(prior, float | int) or not 0 <= prior < float("inf"):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")


def pairwise_leaderboard(
    votes: PairwiseTable,
    *,
    ties: str = "half",
    prior: float = 0.0,
    bootstrap: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> PairwiseLeaderboard:
    """Bradley–Terry leaderboard per criterion with bootstrap CIs, rank intervals, win rates and position bias.

    Bad arguments raise ``ValueError`` naming the argument, the value and what is allowed, as the CLI flags do.

    >>> pairwise_leaderboard(None, bootstrap=-5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: bootstrap must be a whole number >= 0 (0 = no intervals), got -5
    """
    _check_arguments(bootstrap=bootstrap, seed=seed, confidence=confidence, prior=prior)
    frame = votes.frame
    criteria = sorted(frame["criterion"].unique()) if "criterion" in frame.columns else [ALL]
    tail = (1 - confidence) / 2
    rng = np.random.default_rng(seed)
    rows, win_rate, win_prob, bias, nus = [], {}, {}, [], {}
    notes: list[str] = list(votes.notes)
    with progress_bar("bootstrap", total=bootstrap * len(criteria), enabled=progress) as bar:
        for criterion in criteria:
            part = frame if criterion == ALL else frame[frame["criterion"] == criterion]
            wins, tie_counts, agents = pairwise_counts(part)
            model = BradleyTerry(ties=ties, prior=prior).fit_counts(wins, tie_counts, agents)
            games = wins + wins.T + tie_counts
            reps = _bootstrap_ratings(part, agents, model, bootstrap, rng, bar) if bootstrap else np.empty((0, 0))
            if bootstrap:
                failed = int(np.isnan(reps).any(axis=1).sum())
                if failed:
                    notes.append(f"{criterion}: {failed} of {bootstrap} bootstrap resamples had no finite estimate "
                                 "(some agent never lost) and were left out of the intervals")
                reps = reps[~np.isnan(reps).any(axis=1)]
            if len(reps):
                low, high = np.quantile(reps, [tail, 1 - tail], axis=0)
                rank_low, rank_high = np.quantile(competition_ranks(reps), [tail, 1 - tail], axis=0,
                                                  method="nearest")
            else:
                low = high = np.full(len(agents), np.nan)
                rank_low = rank_high = competition_ranks(model.ratings_)
            rows.append(pd.DataFrame({
                "criterion": criterion, "agent": agents, "rating": model.ratings_, "ci_low": low, "ci_high": high,
                "rank": competition_ranks(model.ratings_), "rank_low": np.asarray(rank_low, dtype=np.int64),
                "rank_high": np.asarray(rank_high, dtype=np.int64), "strength": model.strengths_,
                "games": games.sum(axis=1), "wins": wins.sum(axis=1), "losses": wins.sum(axis=0),
                "ties": tie_counts.sum(axis=1),
            }).sort_values("rating", ascending=False, kind="stable"))
            with np.errstate(invalid="ignore", divide="ignore"):
                rate = (wins + 0.5 * tie_counts) / games
            np.fill_diagonal(rate, np.nan)
            win_rate[criterion] = pd.DataFrame(rate, index=agents, columns=agents)
            win_prob[criterion] = pd.DataFrame(model.win_probability(), index=agents, columns=agents)
            nus[criterion] = model.tie_parameter_
            winner = part["winner"].to_numpy()
            left, right, tied = int((winner == "a").sum()), int((winner == "b").sum()), int((winner == "tie").sum())
            share_low, share_high = wilson_interval(left, left + right, confidence)
            bias.append({"criterion": criterion, "left_wins": left, "right_wins": right, "ties": tied,
                         "share_left": left / (left + right) if left + right else float("nan"),
                         "ci_low": float(share_low), "ci_high": float(share_high)})
    return PairwiseLeaderboard(
        ratings=pd.concat(rows, ignore_index=True),
        win_rate=win_rate,
        win_probability=win_prob,
        position_bias=pd.DataFrame(bias),
        tie_parameter=nus,
        settings={"source": votes.source, "votes": votes.n_votes, "ties": ties, "prior": prior,
                  "bootstrap": bootstrap, "seed": seed, "confidence": confidence, "notes": notes},
    )
