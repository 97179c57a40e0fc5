"""Empirical-Bayes Dirichlet priors (``aggregate/em_priors.py``) against a direct maximisation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import gammaln

from stableval.aggregate.em_priors import dirichlet_concentration


# ---------------------------------------------------------------------------------------------- learnt priors
def test_dirichlet_concentration_matches_a_direct_maximisation() -> None:
    rng = np.random.default_rng(5)
    rows = rng.multinomial(12, rng.dirichlet([3.0, 3.0, 3.0], size=40)).astype(float)

    def negative_evidence(log_beta: float) -> float:
        beta, k = np.exp(log_beta), rows.shape[1]
        n = rows.sum(axis=1)
        return -float(np.sum(gammaln(k * beta) - gammaln(n + k * beta) + (gammaln(rows + beta) - gammaln(beta)).sum(1)))

    best = np.exp(minimize_scalar(negative_evidence, bounds=(-5, 5), method="bounded").x)
    assert dirichlet_concentration(rows)[0] == pytest.approx(best, rel=0.05)  # the grid's 4% steps
    groups = np.repeat([0, 1], 20)
    per_group = dirichlet_concentration(rows, groups, 2)
    assert per_group[0] == pytest.approx(dirichlet_concentration(rows[:20])[0])
