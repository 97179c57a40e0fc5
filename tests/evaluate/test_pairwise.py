"""Pairwise leaderboards: MT-Bench position bias and counts, per-criterion boards, argument checks."""

from __future__ import annotations

import pandas as pd
import pytest

from stableval.aggregate.pairwise import pairwise_counts
from stableval.data import example_path, pairwise_from_frame, read_pairwise
from stableval.evaluate.pairwise import pairwise_leaderboard


@pytest.mark.parametrize(("argument", "value", "message"), [
    ("bootstrap", -5, "bootstrap must be a whole number >= 0"),
    ("bootstrap", 2.5, "bootstrap must be a whole number >= 0"),
    ("seed", -1, "seed must be a whole number >= 0"),
    ("confidence", 1.5, "confidence must be a number in (0, 1)"),
    ("prior", float("inf"), "prior must be a finite number >= 0"),
])
def test_pairwise_leaderboard_validates_arguments(argument: str, value: object, message: str) -> None:
    """Issue 16: bad input."""
    from stableval import pairwise_leaderboard

    votes = read_pairwise(example_path("mt_bench"), duplicates="keep")
    with pytest.raises(ValueError) as error:
        pairwise_leaderboard(votes, **{argument: value})  # type: ignore[arg-type]
    assert message in str(error.value) and repr(value) in str(error.value)


def test_mt_bench_leaderboard_position_bias_and_counts() -> None:
    votes = read_pairwise(example_path(), duplicates="keep")
    board = pairwise_leaderboard(votes, bootstrap=200, seed=1)
    ratings = board.ratings.set_index("agent")
    assert ratings["rating"].idxmax() == "gpt-4" and ratings["rating"].idxmin() == "llama-13b"
    assert (ratings["ci_low"] <= ratings["rating"]).all() and (ratings["rating"] <= ratings["ci_high"]).all()
    assert ratings["games"].sum() == 2 * 1689
    bias = board.position_bias.iloc[0]
    # the source's winner counts (SOURCE.md): model_a 656, model_b 628, tie 405
    assert (bias["left_wins"], bias["right_wins"], bias["ties"]) == (656, 628, 405)
    assert bias["share_left"] == pytest.approx(656 / 1284)
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(656, 1284, method="wilson")
    assert (bias["ci_low"], bias["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    wins, ties, agents = pairwise_counts(votes.frame)
    rate = board.win_rate["all"]
    i, j = agents.index("gpt-4"), agents.index("llama-13b")
    assert rate.loc["gpt-4", "llama-13b"] == pytest.approx((wins[i, j] + ties[i, j] / 2)
                                                           / (wins[i, j] + wins[j, i] + ties[i, j]))


def test_per_criterion_leaderboards() -> None:
    frame = pd.DataFrame({"item": list("abcdabcd"), "agent_a": "A", "agent_b": "B", "rater": "r",
                          "winner": ["a", "a", "b", "tie", "b", "b", "a", "tie"],
                          "criterion": ["accuracy"] * 4 + ["helpfulness"] * 4})
    board = pairwise_leaderboard(pairwise_from_frame(frame), bootstrap=0)
    top = board.ratings.groupby("criterion")["agent"].first().to_dict()
    assert top == {"accuracy": "A", "helpfulness": "B"}
