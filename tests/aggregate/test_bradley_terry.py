"""Bradley–Terry against closed forms, an independent MM solver and an independent Davidson likelihood."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from stableval.aggregate import BradleyTerry
from stableval.data import pairwise_from_frame
from stableval.errors import InputError


def random_counts(n_agents: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    strength = np.exp(rng.normal(0, 1, n_agents))
    games = rng.integers(5, 40, size=(n_agents, n_agents))
    games = np.triu(games, 1)
    p = strength[:, None] / (strength[:, None] + strength[None, :])
    wins_upper = rng.binomial(games, np.clip(p - 0.1, 0.05, 0.95))
    ties_upper = rng.binomial(games - wins_upper, 0.25)
    losses_upper = games - wins_upper - ties_upper
    wins = wins_upper + losses_upper.T
    ties = ties_upper + ties_upper.T
    return wins.astype(float), ties.astype(float)


def hunter_mm(wins: np.ndarray, ties: np.ndarray, iterations: int = 200_000) -> np.ndarray:
    """Independent reference: Hunter's (2004) MM algorithm, ties as half wins, run to convergence."""
    w = wins + 0.5 * ties
    n = w + w.T
    total = w.sum(axis=1)
    p = np.ones(len(w))
    for _ in range(iterations):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = total / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - p)) < 1e-15:
            p = new
            break
        p = new
    return p


def test_two_agents_half_ties_closed_form() -> None:
    wins = np.array([[0, 7], [3, 0]], dtype=float)
    ties = np.array([[0, 4], [4, 0]], dtype=float)
    model = BradleyTerry().fit_counts(wins, ties, ["A", "B"])
    assert model.strengths_[0] / model.strengths_[1] == pytest.approx((7 + 2) / (3 + 2), rel=1e-10)
    assert model.ratings_[0] - model.ratings_[1] == pytest.approx(400 * np.log10(9 / 5), rel=1e-10)
    assert model.converged_


def test_two_agents_davidson_closed_form() -> None:
    """Two agents: the Davidson model is saturated, so P(win), P(loss), P(tie) equal the observed shares."""
    wins = np.array([[0, 8], [2, 0]], dtype=float)
    ties = np.array([[0, 5], [5, 0]], dtype=float)
    model = BradleyTerry(ties="davidson").fit_counts(wins, ties, ["A", "B"])
    assert model.strengths_[0] / model.strengths_[1] == pytest.approx(8 / 2, rel=1e-8)
    assert model.tie_parameter_ == pytest.approx(5 / np.sqrt(8 * 2), rel=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_half_ties_matches_an_independent_mm_solution(seed: int) -> None:
    wins, ties = random_counts(7, seed)
    model = BradleyTerry(tol=1e-13).fit_counts(wins, ties, [f"m{i}" for i in range(7)])
    reference = hunter_mm(wins, ties)
    np.testing.assert_allclose(model.strengths_, reference, rtol=1e-8)


def test_davidson_matches_an_independent_likelihood_maximisation() -> None:
    wins, ties = random_counts(5, 3)
    n = len(wins)

    def negative_log_likelihood(x: np.ndarray) -> float:  # written from Davidson (1970) directly
        pi = np.exp(np.append(x[:-1], 0.0))
        nu = np.exp(x[-1])
        total = 0.0
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                d = pi[i] + pi[j] + nu * np.sqrt(pi[i] * pi[j])
                total += wins[i, j] * np.log(pi[i] / d)
                if i < j:
                    total += ties[i, j] * np.log(nu * np.sqrt(pi[i] * pi[j]) / d)
        return -total

    best = minimize(negative_log_likelihood, np.zeros(n), method="BFGS", options={"gtol": 1e-10})
    model = BradleyTerry(ties="davidson", tol=1e-12).fit_counts(wins, ties, [f"m{i}" for i in range(n)])
    expected = np.exp(np.append(best.x[:-1], 0.0))
    np.testing.assert_allclose(model.strengths_, expected / np.exp(np.log(expected).mean()), rtol=1e-6)
    assert model.tie_parameter_ == pytest.approx(np.exp(best.x[-1]), rel=1e-6)
    assert model.log_likelihood_ == pytest.approx(-best.fun, abs=1e-8)


def test_agent_that_never_lost_is_reported_and_prior_fixes_it() -> None:
    wins = np.array([[0, 3, 2], [0, 0, 1], [0, 1, 0]], dtype=float)
    with pytest.raises(InputError, match="never lost"):
        BradleyTerry().fit_counts(wins, np.zeros((3, 3)), ["A", "B", "C"])
    model = BradleyTerry(prior=0.5).fit_counts(wins, np.zeros((3, 3)), ["A", "B", "C"])
    assert model.ratings_.argmax() == 0 and np.isfinite(model.ratings_).all()


def test_vote_weights_scale_and_zero_weight_removes_a_vote() -> None:
    frame = pd.DataFrame({"item": list("abcdef"), "agent_a": ["A", "A", "B", "B", "A", "C"],
                          "agent_b": ["B", "C", "C", "A", "C", "B"], "rater": "r",
                          "winner": ["a", "b", "tie", "a", "a", "b"]})
    votes = pairwise_from_frame(frame)
    base = BradleyTerry().fit(votes)
    doubled = BradleyTerry().fit(votes, weights=np.full(6, 2.0))
    np.testing.assert_allclose(base.strengths_, doubled.strengths_, rtol=1e-10)
    weights = np.array([1, 1, 1, 1, 1, 0.0])
    without = BradleyTerry().fit(pairwise_from_frame(frame.iloc[:5]))
    np.testing.assert_allclose(BradleyTerry().fit(votes, weights=weights).strengths_, without.strengths_, rtol=1e-9)
    weighted = pairwise_from_frame(frame.assign(weight=weights))
    np.testing.assert_allclose(BradleyTerry().fit(weighted).strengths_, without.strengths_, rtol=1e-9)
