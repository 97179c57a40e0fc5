"""Monte Carlo conformal prediction under ambiguous ground truth: prediction sets calibrated on plausibilities.

When a calibration example has no single true label but a *plausibility* (a distribution over labels, e.g. the
aggregated rankings of several dermatologists), Monte Carlo conformal prediction (Stutz, Roy, Matejovicova,
Strachan, Cemgil & Doucet 2023, "Conformal prediction under ambiguous ground truth", TMLR, arXiv:2307.09302)
draws ``samples`` labels from each calibration example's plausibility, scores every drawn label by the model's
score for it (the conformity score), and calibrates the threshold on all ``n · samples`` scores as split conformal
prediction does on ``n``: τ is the ⌊α(n·m + 1)⌋-th smallest. A test example's prediction set holds every label
whose score is at least τ. Its coverage is measured against the plausibility: the plausibility mass inside the set
(the probability that a label drawn from the ambiguous ground truth is covered), averaged over test examples.

>>> rng = np.random.default_rng(0)
>>> plausibility = rng.dirichlet(np.ones(5) * 0.3, size=2000)
>>> scores = plausibility + rng.normal(0, 0.05, plausibility.shape)     # a model that knows the plausibilities
>>> fit = monte_carlo_conformal(scores[:1000], plausibility[:1000], 0.1, rng=1)
>>> sets = fit.predict(scores[1000:])
>>> round(float(coverage(sets, plausibility[1000:]).mean()), 2), round(float(sets.sum(axis=1).mean()), 1)
(0.9, 2.1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ConformalThreshold", "coverage", "monte_carlo_conformal", "split_cases"]


@dataclass(frozen=True)
class ConformalThreshold:
    """A calibrated threshold: ``predict(scores)`` keeps every label scoring at least ``threshold``.

    Attributes: ``alpha`` (the miscoverage aimed at), ``threshold`` τ, ``n_calibration`` (examples) and
    ``samples`` (labels drawn per example).
    """

    alpha: float
    threshold: float
    n_calibration: int
    samples: int

    def predict(self, scores: np.ndarray) -> np.ndarray:
        """(N, C) bool: the prediction set of each row of ``scores``."""
        return np.asarray(np.asarray(scores, dtype=float) >= self.threshold)


def monte_carlo_conformal(scores: np.ndarray, plausibility: np.ndarray, alpha: float, *, samples: int = 10,
                          rng: int | np.random.Generator | None = 0) -> ConformalThreshold:
    """Calibrate on ``scores`` (n, C; higher = more likely) and ``plausibility`` (n, C; rows sum to 1): ``samples``
    labels drawn per example from its plausibility, τ the ⌊α(n·m + 1)⌋-th smallest of their scores (−∞ when
    that is below the first, so every label is kept)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    scores = np.asarray(scores, dtype=float)
    plausibility = np.asarray(plausibility, dtype=float)
    if scores.shape != plausibility.shape or scores.ndim != 2:
        raise ValueError(f"scores {scores.shape} and plausibility {plausibility.shape} must be the same (n, C)")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    n = scores.shape[0]
    cumulative = np.cumsum(plausibility / plausibility.sum(axis=1, keepdims=True), axis=1)
    u = generator.random((n, samples))
    labels = np.minimum((u[:, :, None] > cumulative[:, None, :]).sum(axis=2), scores.shape[1] - 1)   # (n, m)
    conformity = np.sort(np.take_along_axis(scores, labels, axis=1).ravel())
    rank = int(np.floor(alpha * (conformity.size + 1)))
    threshold = -np.inf if rank < 1 else float(conformity[rank - 1])
    return ConformalThreshold(alpha=alpha, threshold=threshold, n_calibration=n, samples=samples)


def coverage(sets: np.ndarray, plausibility: np.ndarray) -> np.ndarray:
    """(N,) the plausibility mass inside each prediction set (its coverage of an ambiguous ground truth)."""
    return np.asarray((np.asarray(sets, dtype=bool) * np.asarray(plausibility, dtype=float)).sum(axis=1))


def split_cases(n: int, calibration: float = 0.5, *, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """A random split of ``n`` cases: (calibration indices, held-out indices), both sorted.

    >>> [part.tolist() for part in split_cases(6, seed=0)]
    [[2, 3, 5], [0, 1, 4]]
    """
    order = np.random.default_rng(seed).permutation(n)
    cut = round(calibration * n)
    return np.sort(order[:cut]), np.sort(order[cut:])
