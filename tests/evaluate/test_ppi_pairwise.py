"""Prediction-powered Bradley–Terry (Boyeau et al. 2024): the logistic PPI++ fit equals ``ppi_py``'s
``ppi_logistic_ci`` / ``classical_logistic_ci``, comparisons are built from the votes, and the ranking recovers the
people's (issue 30)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from displayed import check_displayed
from stableval.data import pairwise_from_frame
from stableval.errors import InputError
from stableval.evaluate.ppi_pairwise import _design, comparisons, ppi_bradley_terry, ppi_logistic

ppi_py = pytest.importorskip("ppi_py")

STRENGTH = np.array([1.0, 0.5, 0.0, -0.3, -1.0])
KINDS = {"ann": "human", "bob": "human", "j1": "llm", "j2": "llm", "j3": "llm"}


def _comparisons(rng: np.random.Generator, n: int, bias: float = 0.15) -> tuple[np.ndarray, ...]:
    a = rng.integers(0, len(STRENGTH), n)
    b = (a + rng.integers(1, len(STRENGTH), n)) % len(STRENGTH)
    first, second = np.minimum(a, b), np.maximum(a, b)
    p = 1 / (1 + np.exp(-(STRENGTH[first] - STRENGTH[second])))
    y = (rng.random(n) < p).astype(float)
    yhat = np.clip(p + bias + rng.normal(0, 0.1, n), 0, 1)
    return _design(first, second, len(STRENGTH)), y, yhat


@pytest.mark.parametrize("seed", range(3))
def test_equals_ppi_py_logistic(seed: int) -> None:
    """To 1e-7: ppi_py minimises with L-BFGS-B (and sklearn for the classical start), which stops there; our
    Newton steps reach a gradient below 1e-12."""
    rng = np.random.default_rng(seed)
    x, y, yhat = _comparisons(rng, 300)
    x_rest, _, yhat_rest = _comparisons(rng, 3000)
    for lam in (None, 1.0, 0.4):
        low, high = ppi_py.ppi_logistic_ci(x, y, yhat, x_rest, yhat_rest, alpha=0.05, lam=lam)
        ours_low, ours_high = ppi_logistic(x, y, yhat, x_rest, yhat_rest, lam=lam).interval(0.95)
        assert np.abs(ours_low - low).max() < 1e-7 and np.abs(ours_high - high).max() < 1e-7
    low, high = ppi_py.classical_logistic_ci(x, y, alpha=0.05)
    ours_low, ours_high = ppi_logistic(x, y, y, x[:0], y[:0], lam=0.0).interval(0.95)
    assert np.abs(ours_low - low).max() < 1e-7 and np.abs(ours_high - high).max() < 1e-7


def _votes(seed: int = 0, n: int = 1500, labelled: int = 300, bias: float = 0.25) -> pd.DataFrame:
    """Each comparison (with its own effect: one answer of a pair can be much better than the agents' strengths
    say) voted on by three LLM judges that favour agent 'E'; the first ``labelled`` also by two people."""
    rng = np.random.default_rng(seed)
    names = list("ABCDE")
    rows = []
    for i in range(n):
        a, b = rng.choice(5, 2, replace=False)
        p = 1 / (1 + np.exp(STRENGTH[b] - STRENGTH[a] - rng.normal(0, 2)))
        judged = min(1.0, p + bias) if names[a] == "E" else max(0.0, p - bias) if names[b] == "E" else p
        for judge in ("j1", "j2", "j3"):
            rows.append((f"q{i}", names[a], names[b], judge, "a" if rng.random() < judged else "b"))
        if i < labelled:
            for person in ("ann", "bob"):
                outcome = rng.random()
                rows.append((f"q{i}", names[a], names[b], person, "a" if outcome < p else "b"))
    return pd.DataFrame(rows, columns=["item", "agent_a", "agent_b", "rater", "winner"])


def test_comparisons_pool_each_kinds_votes() -> None:
    frame = pd.DataFrame({"item": ["q1"] * 4 + ["q2"], "agent_a": ["B", "A", "B", "A", "A"],
                          "agent_b": ["A", "B", "A", "B", "B"], "rater": ["ann", "bob", "j", "j", "j"],
                          "winner": ["a", "tie", "b", "a", "b"]})
    table, agents = comparisons(pairwise_from_frame(frame, duplicates="keep"),
                                {"ann": "human", "bob": "human", "j": "llm"})
    assert agents == ["A", "B"]
    assert table[["item", "people", "judge", "people_votes", "judge_votes"]].values.tolist() == [
        ["q1", 0.25, 1.0, 2, 2], ["q2", None, 0.0, 0, 1]] or np.isnan(table["people"].iloc[1])
    assert table["people"].iloc[0] == 0.25 and table["judge"].iloc[0] == 1.0


def test_the_ranking_follows_the_people_not_the_biased_judge() -> None:
    votes = pairwise_from_frame(_votes(), duplicates="keep")
    board = ppi_bradley_terry(votes, KINDS, draws=500, seed=1)
    ratings = board.ratings.set_index("agent")
    assert ratings.loc["E", "judge_rank"] < ratings.loc["D", "judge_rank"]  # the judge lifts E above D
    assert ratings.loc["E", "rank"] == 5 and ratings.loc["E", "people_rank"] == 5
    ppi_width = ratings["ppi_ci_high"] - ratings["ppi_ci_low"]
    people_width = ratings["people_ci_high"] - ratings["people_ci_low"]
    assert (ppi_width < people_width).all()
    assert board.settings["both"] == 300 and board.settings["judge_only"] == 1200
    assert len(board.differences) == 10 and 0 < board.settings["lam"] <= 1
    assert (ratings["rank_low"] <= ratings["rank"]).all() and (ratings["rank"] <= ratings["rank_high"]).all()
    assert set(board.to_dict()) == {"settings", "notes", "ppi_ratings", "differences", "win_probability"}
    check_displayed(board)


def test_too_few_comparisons_state_the_minimum() -> None:
    votes = pairwise_from_frame(_votes(n=100, labelled=5), duplicates="keep")
    with pytest.raises(InputError, match="the minimum is 10"):
        ppi_bradley_terry(votes, KINDS)
