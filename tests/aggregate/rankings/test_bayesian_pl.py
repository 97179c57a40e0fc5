"""Bayesian Plackett–Luce: under a flat prior and much data its posterior mean is the maximum-likelihood estimate
(within Monte Carlo error); its samples are distributions; a prior pulls towards uniform."""

from __future__ import annotations

import numpy as np

from stableval.aggregate.rankings import BayesianPlackettLuce, PlackettLuce
from stableval.simulate.rankings import RankingStudyConfig, simulate_rankings


def large_study() -> object:
    """One item, 6 options, 3,000 top-3 rankings by reliable raters (ties 10%)."""
    config = RankingStudyConfig(items=1, options=6, raters=3000, budget=3000, depth=3, noisy=0.0, truncated=0.0,
                                reliability=(1.0, 1.0), spread=1.0, ties=0.1)
    return simulate_rankings(config, seed=4)


def test_posterior_mean_is_the_mle_under_a_flat_prior() -> None:
    rankings = large_study().rankings  # type: ignore[attr-defined]
    mle = PlackettLuce(prior_shape=1, tol=1e-12).fit(rankings).plausibility_
    fit = BayesianPlackettLuce(prior_shape=1, samples=2000, burn_in=200, seed=1).fit(rankings)
    samples = fit.sample_plausibility_.astype(float)
    # Monte Carlo error of the mean from batch means (20 batches of 100 sweeps: autocorrelation included)
    batches = samples.reshape(20, 100, -1).mean(axis=1)
    mc_error = batches.std(axis=0, ddof=1) / np.sqrt(20)
    assert np.all(np.abs(fit.plausibility_ - mle) < 4 * mc_error + 2e-4), (fit.plausibility_ - mle, mc_error)
    assert samples.std(axis=0).max() < 0.02                     # 3,000 rankings: a narrow posterior
    np.testing.assert_allclose(samples.sum(axis=1), 1.0, rtol=1e-5)


def test_a_strong_prior_pulls_towards_uniform_and_seeds_repeat() -> None:
    rankings = simulate_rankings(RankingStudyConfig(items=5, options=4, raters=3, budget=3), seed=2).rankings
    weak = BayesianPlackettLuce(prior_shape=1, samples=300, seed=3).fit(rankings)
    strong = BayesianPlackettLuce(prior_shape=50, samples=300, seed=3).fit(rankings)
    uniform = 1 / np.repeat(np.diff(weak.slots_.offsets), np.diff(weak.slots_.offsets))
    assert np.abs(strong.plausibility_ - uniform).max() < np.abs(weak.plausibility_ - uniform).max()
    again = BayesianPlackettLuce(prior_shape=1, samples=300, seed=3).fit(rankings)
    np.testing.assert_array_equal(again.sample_plausibility_, weak.sample_plausibility_)
