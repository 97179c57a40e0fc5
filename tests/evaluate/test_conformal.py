"""Monte Carlo conformal prediction under ambiguous ground truth: coverage holds within sampling error on synthetic
data with known plausibilities (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.evaluate.conformal import coverage, monte_carlo_conformal, split_cases


def synthetic(seed: int, n: int = 4000, c: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Known plausibilities (Dirichlet, ambiguous) and a model's scores: a noisy, imperfect copy of them."""
    rng = np.random.default_rng(seed)
    plausibility = rng.dirichlet(np.full(c, 0.5), size=n)
    scores = np.log(plausibility + 1e-3) + rng.normal(0, 0.7, size=(n, c))
    return scores, plausibility


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2])
def test_coverage_holds_within_sampling_error(alpha: float) -> None:
    """Over 10 seeded splits, the mean held-out coverage (labels drawn from the true plausibilities: their mass
    inside the set) is 1 − α within 3 standard errors; each split's within 0.03."""
    values = []
    for seed in range(10):
        scores, plausibility = synthetic(seed)
        cal, test = split_cases(len(scores), 0.5, seed=seed)
        fit = monte_carlo_conformal(scores[cal], plausibility[cal], alpha, samples=10, rng=seed)
        covered = coverage(fit.predict(scores[test]), plausibility[test])
        values.append(covered.mean())
        assert abs(covered.mean() - (1 - alpha)) < 0.03
    values = np.array(values)
    assert abs(values.mean() - (1 - alpha)) < 3 * values.std(ddof=1) / np.sqrt(len(values)) + 0.005


def test_sampled_labels_are_covered_as_often() -> None:
    """The coverage of labels actually drawn from the plausibilities agrees with the plausibility mass."""
    scores, plausibility = synthetic(11, n=6000)
    cal, test = split_cases(len(scores), seed=3)
    sets = monte_carlo_conformal(scores[cal], plausibility[cal], 0.1).predict(scores[test])
    rng = np.random.default_rng(0)
    labels = np.array([rng.choice(plausibility.shape[1], p=p) for p in plausibility[test]])
    assert sets[np.arange(test.size), labels].mean() == pytest.approx(coverage(sets, plausibility[test]).mean(),
                                                                      abs=0.015)


def test_a_tiny_calibration_set_keeps_every_label_and_bad_alpha_is_refused() -> None:
    fit = monte_carlo_conformal(np.array([[0.2, 0.8]]), np.array([[0.5, 0.5]]), 0.1, samples=2)
    assert fit.threshold == -np.inf and fit.predict(np.array([[0.0, -5.0]])).all()
    with pytest.raises(ValueError, match="alpha"):
        monte_carlo_conformal(np.ones((2, 2)), np.ones((2, 2)) / 2, 1.5)
