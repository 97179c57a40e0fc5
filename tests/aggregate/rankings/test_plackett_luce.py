"""Plackett–Luce by MM and I-LSR against choix (Maystre's reference implementation) and against an independent
optimiser of the posterior; partial rankings with ties decomposed by a conversion written here from the rule."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.aggregate.rankings import PlackettLuce
from stableval.data.rankings import Rankings

choix = pytest.importorskip("choix")


def random_rankings(seed: int, n_items: int = 3, n_options: int = 7, per_item: int = 40) -> Rankings:
    """Random partial rankings with ties: each names 2–5 options in 1–3 groups; every option of an item is named
    somewhere (no pool), and enough rankings make the maximum-likelihood estimate exist."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n_items):
        strength = rng.gamma(2.0, size=n_options)
        for r in range(per_item):
            length = int(rng.integers(2, 6))
            order = list(np.argsort(-(np.log(strength) + rng.gumbel(size=n_options)))[:length])
            if r < n_options:                       # every option named at least once, first in one ranking
                order = [r, *[o for o in order if o != r][:length - 1]]
            groups: list[list[str]] = []
            for o in order:
                if groups and rng.random() < 0.25:
                    groups[-1].append(f"o{o}")
                else:
                    groups.append([f"o{o}"])
            records.append((f"rater{r % 5}", f"item{i}", groups))
    return Rankings.from_records(records, options=[f"o{j}" for j in range(n_options)])


def choix_data(rankings: Rankings, item: int) -> list[tuple[int, tuple[int, ...]]]:
    """Top-1 choices of one item, from the rule: a tied option is chosen over everything below its group (the
    options a ranking leaves out included), not over the other members of its group."""
    data = []
    for r in np.flatnonzero(rankings.item_of == item):
        start, stop = rankings.offsets[r], rankings.offsets[r + 1]
        options, groups = rankings.option[start:stop], rankings.group[start:stop]
        named = set(options.tolist())
        for o, g in zip(options, groups, strict=True):
            below = [int(x) for x, h in zip(options, groups, strict=True) if h > g]
            below += [x for x in range(rankings.n_options) if x not in named]
            if below:
                data.append((int(o), tuple(below)))
    return data


def centred_log(values: np.ndarray) -> np.ndarray:
    logs = np.log(values)
    return logs - logs.mean()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("solver", ["mm", "ilsr"])
def test_maximum_likelihood_equals_choix(seed: int, solver: str) -> None:
    rankings = random_rankings(seed)
    fit = PlackettLuce(prior_shape=1, solver=solver, tol=1e-14, max_iter=100_000).fit(rankings)
    assert fit.converged_
    matrix = fit.plausibility_matrix()
    for item in range(rankings.n_items):
        expected = choix.ilsr_top1(rankings.n_options, choix_data(rankings, item), tol=1e-14, max_iter=10_000)
        np.testing.assert_allclose(centred_log(matrix[item]), expected - expected.mean(), atol=1e-6)


def test_posterior_mode_equals_an_independent_optimiser() -> None:
    """MAP with Gamma(a, 1) priors: maximise log L(λ) + Σ (a − 1) log λ − λ over θ = log λ with scipy (the choix
    data as the likelihood), one item at a time; compare the normalised strengths."""
    from scipy.optimize import minimize

    rankings = random_rankings(7, n_items=2, n_options=6, per_item=8)
    a = 2.5
    fit = PlackettLuce(prior_shape=a, tol=1e-14, max_iter=100_000).fit(rankings)
    matrix = fit.plausibility_matrix()
    for item in range(rankings.n_items):
        data = choix_data(rankings, item)

        def negative(theta: np.ndarray, data: list = data) -> float:
            value = sum(theta[w] - np.log(np.exp(theta[[w, *losers]]).sum()) for w, losers in data)
            return -(value + np.sum((a - 1) * theta - np.exp(theta)))

        best = minimize(negative, np.zeros(rankings.n_options), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(matrix[item], np.exp(best) / np.exp(best).sum(), atol=1e-6)


def test_hand_worked_ties_and_pool() -> None:
    """Rankings [a, b] tied over c, and [c]: choices a over {a, c, pool}, b over {b, c, pool}, c over {a, b, c,
    pool}. By symmetry λ_a = λ_b = x, and the pool, never chosen, gets 0 (maximum likelihood), so λ_c = 1 − 2x and
    L(x) = (x / (1 − x))² (1 − 2x): the estimate is the root of d log L / dx = 2/x + 2/(1 − x) − 2/(1 − 2x)."""
    from scipy.optimize import brentq

    rankings = Rankings.from_records([(None, "q", [["a", "b"], "c"]), (None, "q", ["c"])],
                                     options=["a", "b", "c", "d"])
    fit = PlackettLuce(prior_shape=1, tol=1e-14, max_iter=100_000).fit(rankings)
    x = brentq(lambda x: 2 / x + 2 / (1 - x) - 2 / (1 - 2 * x), 1e-6, 0.5 - 1e-6)
    np.testing.assert_allclose(fit.plausibility_matrix()[0], [x, x, 1 - 2 * x, 0.0], atol=1e-7)
    assert fit.to_frame()["option"].tolist() == ["a", "b", "c", "(others)"]


def test_warm_start_reaches_the_same_estimate_faster() -> None:
    rankings = random_rankings(3)
    cold = PlackettLuce(tol=1e-12).fit(rankings)
    warm = PlackettLuce(tol=1e-12).fit(rankings, start=cold)
    np.testing.assert_allclose(warm.plausibility_, cold.plausibility_, atol=1e-9)
    assert warm.n_iter_ < cold.n_iter_


def test_ilsr_refuses_a_prior() -> None:
    with pytest.raises(ValueError, match="maximum likelihood only"):
        PlackettLuce(prior_shape=2, solver="ilsr")
