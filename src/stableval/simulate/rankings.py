"""Simulate partial-ranking raters: items with known option scores, raters who rank them more or less well.

The generative model (so a ranking aggregator's output can be checked against a known truth):

1. **Items.** Each of ``items`` items has ``options`` options with true scores θ_ij ~ Normal(0, spread²); the true
   ranking of an item orders its options by θ (best first) and its true plausibility is softmax(θ_i).
2. **Raters.** A pool of ``raters``: a share ``noisy`` of them noisy, a share ``truncated`` truncated, the rest
   reliable (shuffled over the pool). A rater ranks with Plackett–Luce choices ∝ exp(β θ) (drawn by sorting
   β θ_ij + Gumbel noise): reliable raters have a reliability β drawn uniformly from ``reliability``, noisy raters
   from ``noisy_reliability`` (near-random rankings); both name their best ``depth`` options. Truncated raters are
   reliable raters who name only their first ``truncated_depth`` options.
3. **Ties.** Each named option after the first joins the group before it with probability ``ties`` (the groups of
   a differential diagnosis).
4. **Design.** Each item is ranked by ``budget`` distinct raters drawn uniformly from the pool.

>>> study = simulate_rankings(RankingStudyConfig(items=4, options=5, raters=6, budget=3), seed=0)
>>> study.rankings.n_rankings, study.rankings.n_items, sorted(set(study.rater_type))
(12, 4, ['noisy', 'reliable', 'truncated'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stableval.data.rankings import Rankings
from stableval.errors import InputError

__all__ = ["RANKING_RATER_TYPES", "RankingStudy", "RankingStudyConfig", "simulate_rankings"]

#: the kinds of simulated ranking raters
RANKING_RATER_TYPES = ("reliable", "noisy", "truncated")


@dataclass(frozen=True)
class RankingStudyConfig:
    """Everything that defines a simulated ranking study (see the module docstring).

    Attributes:
        items: items to rank. options: options per item. raters: size of the rater pool.
        budget: rankings per item (distinct raters, at most ``raters``).
        depth: options a reliable or noisy rater names. truncated_depth: options a truncated rater names.
        spread: standard deviation of the true option scores.
        noisy, truncated: shares of the pool that are noisy and truncated (the rest reliable).
        reliability: range of a reliable (or truncated) rater's β. noisy_reliability: range of a noisy rater's β.
        ties: probability that a named option is tied with the one before it.
    """

    items: int = 50
    options: int = 8
    raters: int = 20
    budget: int = 3
    depth: int = 3
    truncated_depth: int = 1
    spread: float = 1.0
    noisy: float = 0.2
    truncated: float = 0.2
    reliability: tuple[float, float] = (1.5, 3.0)
    noisy_reliability: tuple[float, float] = (0.0, 0.3)
    ties: float = 0.1

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> InputError:
            return InputError("invalid ranking simulation setting", option=name, value=getattr(self, name),
                              allowed=allowed)

        if self.items < 1:
            raise bad("items", "an integer >= 1")
        if self.options < 2:
            raise bad("options", "an integer >= 2")
        if self.raters < 1:
            raise bad("raters", "an integer >= 1")
        if not 1 <= self.budget <= self.raters:
            raise bad("budget", f"an integer from 1 to raters ({self.raters})")
        if not 1 <= self.depth <= self.options:
            raise bad("depth", f"an integer from 1 to options ({self.options})")
        if not 1 <= self.truncated_depth <= self.depth:
            raise bad("truncated_depth", f"an integer from 1 to depth ({self.depth})")
        if not (0 <= self.noisy <= 1 and 0 <= self.truncated <= 1 and self.noisy + self.truncated <= 1):
            raise bad("noisy", "shares noisy and truncated in [0, 1], summing to at most 1")
        if not 0 <= self.ties < 1:
            raise bad("ties", "a probability in [0, 1)")
        for name in ("reliability", "noisy_reliability"):
            low, high = getattr(self, name)
            if not 0 <= low <= high:
                raise bad(name, "a range (low, high) with 0 <= low <= high")


@dataclass(frozen=True)
class RankingStudy:
    """A simulated ranking study and its truth.

    Attributes:
        rankings: the raters' partial rankings. scores: (items, options) true scores θ.
        reliability: (raters,) each rater's β. rater_type: (raters,) ``reliable``, ``noisy`` or ``truncated``.
    """

    rankings: Rankings
    scores: np.ndarray
    reliability: np.ndarray
    rater_type: tuple[str, ...]

    def true_plausibility(self) -> np.ndarray:
        """(items, options) softmax of the true scores."""
        weight = np.exp(self.scores - self.scores.max(axis=1, keepdims=True))
        return np.asarray(weight / weight.sum(axis=1, keepdims=True))


def simulate_rankings(config: RankingStudyConfig, seed: int | np.random.Generator | None = 0) -> RankingStudy:
    """Draw a ranking study (see the module docstring)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n, c, r = config.items, config.options, config.raters
    scores = rng.normal(0.0, config.spread, size=(n, c))
    n_noisy = round(config.noisy * r)
    n_truncated = min(r - n_noisy, round(config.truncated * r))
    kinds = np.array(["noisy"] * n_noisy + ["truncated"] * n_truncated + ["reliable"] * (r - n_noisy - n_truncated))
    kinds = kinds[rng.permutation(r)]
    beta = np.where(kinds == "noisy", rng.uniform(*config.noisy_reliability, size=r),
                    rng.uniform(*config.reliability, size=r))
    depth = np.where(kinds == "truncated", config.truncated_depth, config.depth)
    # each item ranked by `budget` distinct raters
    raters = np.argsort(rng.random((n, r)), axis=1)[:, :config.budget]            # (n, budget)
    item_of = np.repeat(np.arange(n), config.budget)
    rater_of = raters.reshape(-1)
    noise = rng.gumbel(size=(item_of.size, c))
    order = np.argsort(-(beta[rater_of, None] * scores[item_of] + noise), axis=1)   # each ranking's full order
    lengths = depth[rater_of]
    keep = np.arange(c)[None, :] < lengths[:, None]
    option = order[keep]
    joins = (rng.random(keep.shape) < config.ties) & (np.arange(c)[None, :] > 0)
    group = np.cumsum(~joins, axis=1)[keep]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    rankings = Rankings.from_arrays(item_of, offsets, option, group, n_items=n, n_options=c, rater_of=rater_of,
                                    items=[f"item{i + 1}" for i in range(n)],
                                    options=[f"option{j + 1}" for j in range(c)],
                                    raters=[f"rater{k + 1}" for k in range(r)], source="simulated rankings")
    return RankingStudy(rankings=rankings, scores=scores, reliability=beta, rater_type=tuple(kinds.tolist()))
