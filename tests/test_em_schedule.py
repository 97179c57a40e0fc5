"""The fit's cheaper set-up at scale (issue 14): each fast path against the simple computation it replaces."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
import scipy.sparse as sp

from stableval.aggregate import MajorityVote, Stableval
from stableval.aggregate._base import hard_distribution
from stableval.aggregate.em import ResponseBlocks, thread_pool, vote_counts_of_matrix
from stableval.aggregate.stableval import _distinct_rows, random_rows


@pytest.mark.parametrize(("n", "high"), [(0, 3), (1, 3), (2000, 4), (3000, 40)])
def test_distinct_rows_equal_numpy_unique(n: int, high: int) -> None:
    counts = np.random.default_rng(n).integers(0, high, (n, 3)).astype(float)
    n_patterns, inverse = _distinct_rows(counts)
    patterns, expected = np.unique(counts, axis=0, return_inverse=True)
    assert n_patterns == len(patterns)
    np.testing.assert_array_equal(inverse, expected.ravel())


def test_random_starts_equal_their_definition() -> None:
    """The random starts, defined cell by cell. Issue 28: they were one Dirichlet(1) draw per distinct vote row in
    sorted order, so reordering the levels drew other starts; now each cell's Exp(1) variate is keyed by what the
    votes say of it — the row's counts sorted, the cell's count, its level's total count (in the problem) — handed
    out in the sorted order of the keys, and each row normalised."""
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 4, (3000, 3)).astype(float)
    groups = np.sort(rng.integers(0, 6, 3000))
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    for problem in (None, groups):
        starts = dict(Stableval(n_starts=3, seed=2).em_starts(counts, problem))
        reused: list[tuple[int, np.ndarray]] = []
        for number in (1, 2, 3):
            # the definition: one Exp(1) variate per distinct (sorted row, cell count, level total), problem by
            # problem, each row normalised
            noise = np.empty(counts.shape)
            for g in np.unique(problem) if problem is not None else [None]:
                rows = np.flatnonzero(problem == g) if g is not None else np.arange(len(counts))
                part = counts[rows].astype(np.int64)
                keys = [(*sorted(row, reverse=True), cell, total) for row in part.tolist()
                        for cell, total in zip(row, part.sum(axis=0).tolist(), strict=True)]
                distinct = sorted(set(keys))
                variates = np.random.default_rng((2, number)).exponential(size=len(distinct))
                cell = np.array([variates[distinct.index(key)] for key in keys]).reshape(len(rows), 3)
                noise[rows] = cell / cell.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(starts[f"random-{number}"].distributions, 0.5 * shares + 0.5 * noise,
                                       rtol=0, atol=1e-15)
            np.testing.assert_allclose(random_rows(counts, problem, (2, number), reused), noise,  # reused rows
                                       rtol=0, atol=1e-15)
        assert len(reused) == (1 if problem is None else len(np.unique(groups)))


def test_split_majority_vote_is_the_hard_distribution_of_the_counts() -> None:
    rng = np.random.default_rng(0)
    X = sp.random(500, 12, density=0.3, format="csr", random_state=1)
    X.data = rng.integers(1, 3, X.nnz).astype(float)
    model = MajorityVote().fit_matrix(X, n_raters=4, n_levels=3)
    counts = vote_counts_of_matrix(X, 3)
    np.testing.assert_array_equal(model.posteriors_, hard_distribution(counts, atol=0.0))
    assert model.tied_.any() and (counts.sum(axis=1) == 0).any()  # ties and empty rows were exercised


@pytest.mark.parametrize(("alpha_pi", "passes"), [(1.0, 0), (2.0, 0), ("auto", 2), ("pooled", 2)])
def test_expected_counts_computed_only_for_a_learnt_prior(alpha_pi: float | str, passes: int) -> None:
    """A fixed prior needs no expected-counts pass. Issue 28: a learnt prior is learnt in PRIOR_ROUNDS = 2 rounds,
    one pass each (from the screened flat fit, then from the screened fit with the first prior); the judgments per
    rater that decide between the flat fit and the votes come from the E-step, not from a pass."""
    from stableval import AnnotationTable

    from synthetic import synthetic_frame

    table = AnnotationTable.from_frame(synthetic_frame(n_items=60, seed=1)[0], levels=("0", "1", "2"))
    X = table.response_matrix()
    model = Stableval(alpha_pi=alpha_pi, n_starts=0)
    calls: list[int] = []

    def expected(posteriors: np.ndarray) -> np.ndarray:
        calls.append(1)
        return np.asarray((X.T @ posteriors).reshape(table.n_raters, 3, 3).transpose(0, 2, 1).reshape(-1, 3))

    blocks = ResponseBlocks(X)
    model.fit_from_starts(vote_counts_of_matrix(X, 3), table.n_raters, 3, expected=expected,
                          run=lambda start, alphas, max_iter: model._run(blocks, start, table.n_raters, 3, None,
                                                                         alphas, max_iter),
                          per_rater=lambda: blocks.rater_judgments(table.n_raters))
    assert len(calls) == passes
    reference = Stableval(alpha_pi=alpha_pi, n_starts=0).fit(table)
    np.testing.assert_allclose(model.posteriors_, reference.posteriors_, rtol=0, atol=1e-12)


def _e_step_in_child(X: sp.csr_matrix) -> float:
    out = np.empty((2, X.shape[0]))
    return ResponseBlocks(X, threads=2, kernel="numpy").e_step(np.array([0.5, 0.5]), np.full((2, 2, 2), 0.5), out)[0]


def test_thread_pool_is_kept_and_works_after_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import stableval.aggregate.em as em

    monkeypatch.setattr(em, "BLOCK_NNZ", 8)  # several blocks: the E-step runs on the pool
    X = sp.csr_matrix(np.tile([[1.0, 0.0, 0.0, 1.0]], (40, 1)))
    assert thread_pool(2) is thread_pool(2)
    expected = _e_step_in_child(X)  # the parent's pool now has threads
    assert expected == pytest.approx(40 * np.log(0.25))  # per response: 2 classes × mu 0.5 × 0.5 × 0.5 = 0.25
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_e_step_in_child, (X,)).get(timeout=60) == expected
