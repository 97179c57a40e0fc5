"""Fixtures of the aggregation tests."""

from __future__ import annotations

import pytest
import scipy.sparse as sp

from synthetic import simulated_matrix


def simulated(n_responses: int, n_raters: int = 40, per_response: int = 3, seed: int = 0) -> sp.csr_matrix:
    """Response matrix of a Dawid–Skene simulation (:func:`synthetic.simulated_matrix`), raters right 0.5-0.95."""
    return simulated_matrix(n_responses, n_raters, per_response, seed, skill_low=0.5)


@pytest.fixture(scope="module")
def X() -> sp.csr_matrix:
    return simulated(3000)
