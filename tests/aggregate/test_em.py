"""The shared EM kernel (``aggregate/em.py``): the start copied once into EM's layout and gold clamped in the copy,
per-rater judgment counts, and the thread pool kept across a fork."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
import scipy.sparse as sp

import stableval.aggregate._base as base
from stableval.aggregate import DawidSkene
from stableval.aggregate.em import ResponseBlocks, run_em, thread_pool, vote_counts_of_matrix
from stableval.aggregate.em_fit import EMStart


def _e_step_in_child(X: sp.csr_matrix) -> float:
    out = np.empty((2, X.shape[0]))
    return ResponseBlocks(X, threads=2, kernel="numpy").e_step(np.array([0.5, 0.5]), np.full((2, 2, 2), 0.5), out)[0]


def test_thread_pool_is_kept_and_works_after_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14: the fit's cheaper set-up at scale."""
    import stableval.aggregate.em as em

    monkeypatch.setattr(em, "BLOCK_NNZ", 8)  # several blocks: the E-step runs on the pool
    X = sp.csr_matrix(np.tile([[1.0, 0.0, 0.0, 1.0]], (40, 1)))
    assert thread_pool(2) is thread_pool(2)
    expected = _e_step_in_child(X)  # the parent's pool now has threads
    assert expected == pytest.approx(40 * np.log(0.25))  # per response: 2 classes × mu 0.5 × 0.5 × 0.5 = 0.25
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_e_step_in_child, (X,)).get(timeout=60) == expected


K = 3


def test_a_start_is_copied_once_and_gold_clamped_in_the_copy(X: sp.csr_matrix) -> None:
    """Issue 14: the score path at scale."""
    counts = vote_counts_of_matrix(X, K)
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    before = shares.copy()
    gold = np.full(len(counts), -1)
    gold[::7] = np.arange(len(gold[::7])) % K
    n_raters = X.shape[1] // K
    model = DawidSkene(acceleration="none", max_iter=30)
    result = model._run(ResponseBlocks(X, gold), EMStart(shares), n_raters, K, gold, (1.0, 1.0), 30)
    assert np.array_equal(shares, before)  # the start itself is left alone
    clamped = shares.copy()
    base.clamp_gold(clamped, gold)
    reference = run_em(X, init_posteriors=np.ascontiguousarray(clamped.T), n_raters=n_raters, n_levels=K,
                       max_iter=30, tol=model.tol, gold=gold, acceleration="none")
    np.testing.assert_array_equal(result.posteriors, reference.posteriors)
