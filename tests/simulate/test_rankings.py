"""The partial-ranking simulator: reliable, noisy and truncated raters as configured (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.errors import InputError
from stableval.simulate.rankings import RankingStudyConfig, simulate_rankings


def test_rater_kinds_depths_budget_and_seeds() -> None:
    config = RankingStudyConfig(items=40, options=6, raters=10, budget=4, depth=3, truncated_depth=1, noisy=0.2,
                                truncated=0.3, ties=0.0)
    study = simulate_rankings(config, seed=1)
    kinds = np.array(study.rater_type)
    assert (kinds == "noisy").sum() == 2 and (kinds == "truncated").sum() == 3
    rankings = study.rankings
    assert np.all(rankings.rankings_per_item == 4)
    lengths = np.diff(rankings.offsets)
    expected = np.where(kinds[rankings.rater_of] == "truncated", 1, 3)
    np.testing.assert_array_equal(lengths, expected)
    assert np.all(rankings.group == np.concatenate([np.arange(1, n + 1) for n in lengths]))   # no ties asked
    pairs = set(zip(rankings.item_of.tolist(), rankings.rater_of.tolist(), strict=True))
    assert len(pairs) == rankings.n_rankings                    # each item ranked by distinct raters
    noisy = kinds == "noisy"
    assert study.reliability[noisy].max() <= 0.3 < study.reliability[~noisy].min()
    again = simulate_rankings(config, seed=1)
    np.testing.assert_array_equal(again.rankings.option, rankings.option)


def test_reliable_raters_follow_the_true_scores() -> None:
    """With high reliability and no noise raters, the first choice is mostly the item's best option."""
    config = RankingStudyConfig(items=200, options=5, raters=5, budget=5, noisy=0.0, truncated=0.0,
                                reliability=(20.0, 20.0), spread=1.0, ties=0.0)
    study = simulate_rankings(config, seed=2)
    first = study.rankings.option[study.rankings.offsets[:-1]]
    best = np.argmax(study.scores, axis=1)[study.rankings.item_of]
    assert np.mean(first == best) > 0.9


def test_a_budget_above_the_raters_is_refused() -> None:
    with pytest.raises(InputError):
        RankingStudyConfig(raters=3, budget=4)
