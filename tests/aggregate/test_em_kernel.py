"""The compiled one-pass E-step (numba, optional) against the numpy reference and a dense hand computation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from stableval.aggregate import em_kernel
from stableval.aggregate.em import ResponseBlocks, log_confusion_table

needs_numba = pytest.mark.skipif(not em_kernel.NUMBA, reason="numba not installed (the `fast` extra)")


def problem(n: int, n_raters: int, k: int, seed: int, repeats: bool = False) -> tuple[sp.csr_matrix, np.ndarray,
                                                                                         np.ndarray]:
    """A random response matrix (a few judgments per response, some responses without any), priors, confusion."""
    rng = np.random.default_rng(seed)
    per = rng.integers(0, 6, n)
    rows = np.repeat(np.arange(n), per)
    cols = rng.integers(0, n_raters, rows.size) * k + rng.integers(0, k, rows.size)
    data = rng.integers(1, 3, rows.size).astype(float) if repeats else np.ones(rows.size)
    X = sp.csr_matrix((data, (rows, cols)), shape=(n, n_raters * k))
    X.sum_duplicates()
    priors = rng.dirichlet(np.ones(k))
    confusion = rng.dirichlet(np.full(k, 0.7), size=(n_raters, k))
    return X, priors, confusion


def dense_e_step(X: sp.csr_matrix, priors: np.ndarray, confusion: np.ndarray,
                 gold: np.ndarray | None = None) -> tuple[np.ndarray, float, np.ndarray]:
    """The E-step written out densely with scipy's logsumexp: (posteriors (K, N), log-likelihood, counts)."""
    logits = X.toarray() @ log_confusion_table(confusion) + np.log(priors)
    if gold is not None:
        known = gold >= 0
        clamped = np.full_like(logits, -np.inf)
        clamped[known, gold[known]] = logits[known, gold[known]]
        logits[known] = clamped[known]
    norm = logsumexp(logits, axis=1)
    posteriors = np.exp(logits - norm[:, None])
    return posteriors.T, float(norm.sum()), (X.T @ posteriors).T


@needs_numba
@pytest.mark.parametrize(("k", "index_type", "repeats", "with_gold"),
                         [(3, np.int32, False, False), (3, np.int64, True, True), (4, np.int32, True, True)])
def test_compiled_e_step_equals_dense_and_numpy(k: int, index_type: type, repeats: bool, with_gold: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import stableval.aggregate.em as em

    X, priors, confusion = problem(3000, 40, k, seed=k, repeats=repeats)
    gold = np.where(np.random.default_rng(1).random(X.shape[0]) < 0.1, np.arange(X.shape[0]) % k, -1) if with_gold \
        else None
    expected_post, expected_ll, expected_counts = dense_e_step(X, priors, confusion, gold)
    monkeypatch.setattr(em, "BLOCK_NNZ", 1000)  # several blocks, on two threads
    results = {}
    for kernel in ("numba", "numpy"):
        blocks = ResponseBlocks(X, gold, threads=2, kernel=kernel)
        assert len(blocks.blocks) > 5
        out = np.full((k, X.shape[0]), np.nan)
        results[kernel] = (out, *blocks.e_step(priors, confusion, out))
    # the kernel itself on indices of either width, as one block (into a strided view, as the blocks write: the
    # same compiled specialisation, one compilation fewer)
    whole = np.full((k, X.shape[0] + 1), np.nan)[:, :-1]
    counts_rows, whole_mass = np.zeros((X.shape[1], k)), np.zeros(k)
    whole_ll = em_kernel.fused_e_step(X.indptr.astype(index_type), X.indices.astype(index_type), X.data,
                                      log_confusion_table(confusion), np.log(priors),
                                      np.empty(0, np.int64) if gold is None else gold.astype(np.int64), whole,
                                      counts_rows, whole_mass)
    np.testing.assert_allclose(whole, expected_post, rtol=1e-12, atol=1e-300)
    assert whole_ll == pytest.approx(expected_ll, rel=1e-13)
    np.testing.assert_allclose(counts_rows.T, expected_counts, rtol=1e-11)
    out, log_likelihood, mass, counts = results["numba"]
    np.testing.assert_allclose(out, expected_post, rtol=1e-12, atol=1e-300)  # double precision throughout
    assert log_likelihood == pytest.approx(expected_ll, rel=1e-13)
    np.testing.assert_allclose(counts, expected_counts, rtol=1e-11)
    np.testing.assert_allclose(mass, expected_post.sum(axis=1), rtol=1e-11)
    reference = results["numpy"]  # single-precision exponentials: ~1e-7
    np.testing.assert_allclose(out, reference[0], rtol=0, atol=1e-6)
    assert log_likelihood == pytest.approx(reference[1], rel=1e-9)
    np.testing.assert_allclose(counts, reference[3], rtol=1e-6)
    if gold is not None:
        known = gold >= 0
        np.testing.assert_array_equal(out[:, known], np.eye(k)[gold[known]].T)  # clamped exactly


@needs_numba
def test_compiled_exponential_is_exact_to_double_precision() -> None:
    # one response, one judgment of level 0 counted 80 times: log joint of class c = log(1/4) + 80 log pi[c, 0],
    # so the exponentials span e^0 .. e^-800 (below e^-708 they are floored to ~0)
    k, weight = 4, 80.0
    log_pi = np.array([0.0, -1e-5, -0.25, -3.75, -8.85, -8.8488, -8.856, -9.31, -10.0])
    X = sp.csr_matrix(np.array([[weight, 0.0, 0.0, 0.0]]))
    for start in range(0, log_pi.size - k + 1):
        confusion = np.zeros((1, k, k))
        confusion[0, :, 0] = np.exp(log_pi[start:start + k])
        confusion[0, :, 1] = 1.0 - confusion[0, :, 0]
        out = np.empty((k, 1))
        log_likelihood, _, _ = ResponseBlocks(X, kernel="numba").e_step(np.full(k, 1 / k), confusion, out)
        expected, expected_ll, _ = dense_e_step(X, np.full(k, 1 / k), confusion)
        big = expected > 1e-300
        np.testing.assert_allclose(out[big], expected[big], rtol=1e-13)  # |log joint| · 1e-16: its own rounding
        assert np.all(out[~big] < 1e-300)
        assert log_likelihood == pytest.approx(expected_ll, rel=1e-14)


@needs_numba
@pytest.mark.parametrize("method", ["ds", "stableval"])
def test_fits_through_either_kernel_agree(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both kernels reach one optimum. Issue 28: STABLEVAL's default prior is learnt from the flat fit run to
    convergence, so its strength moves with the last digits of that fit, and the log-likelihoods agree to 1e-8
    relative (measured 1.1e-9) instead of 1e-10; posteriors and confusion matrices still to 1e-5."""
    from stableval import example_path, read_any
    from stableval.aggregate.registry import REGISTRY

    table = read_any(example_path("mt_bench"), duplicates="keep")
    fits = {}
    for kernel in ("numba", "numpy"):
        monkeypatch.setenv("STABLEVAL_EM_KERNEL", kernel)
        fits[kernel] = REGISTRY[method].build(tol=1e-13, max_iter=3000).fit(table)  # both at the same optimum
    fast, reference = fits["numba"], fits["numpy"]
    np.testing.assert_allclose(fast.posteriors_, reference.posteriors_, atol=1e-5)
    np.testing.assert_allclose(fast.confusion_, reference.confusion_, atol=1e-5)
    rel = 1e-10 if method == "ds" else 1e-8
    assert fast.log_likelihood_[-1] == pytest.approx(reference.log_likelihood_[-1], rel=rel)
    assert fast.start_ == reference.start_


def test_kernel_choice_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "numpy")
    assert em_kernel.kernel_choice() == "numpy"
    assert ResponseBlocks(sp.csr_matrix(np.eye(2))).kernel == "numpy"
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "auto")  # compiled for large matrices only, when numba is there
    assert em_kernel.kernel_choice(em_kernel.COMPILED_FROM) == ("numba" if em_kernel.NUMBA else "numpy")
    assert em_kernel.kernel_choice(em_kernel.COMPILED_FROM - 1) == "numpy"
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "fastest")
    with pytest.raises(ValueError, match=r"STABLEVAL_EM_KERNEL='fastest'; allowed: auto, numpy, numba"):
        em_kernel.kernel_choice()
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "numba")
    monkeypatch.setattr(em_kernel, "NUMBA", False)
    with pytest.raises(ValueError, match=r"numba is not installed: pip install 'stableval\[fast\]'"):
        em_kernel.kernel_choice()
    monkeypatch.delenv("STABLEVAL_EM_KERNEL")
    assert em_kernel.kernel_choice() == "numpy"  # auto without numba: the numpy path
    with pytest.raises(ValueError, match=r"kernel='numbaa'; allowed: numpy, numba"):
        ResponseBlocks(sp.csr_matrix(np.eye(2)), kernel="numbaa")


@needs_numba
def test_screened_starts_run_on_the_kernel_of_the_whole_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    import stableval.aggregate.em as em
    import stableval.aggregate.em_fit as em_fit
    from stableval import Stableval, example_path, read_any

    table = read_any(example_path("mt_bench"), duplicates="keep")
    monkeypatch.setattr(em_fit, "SCREEN_SUBSET_ABOVE", 200)
    monkeypatch.setattr(em_fit, "SCREEN_RESPONSES", 300)
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "auto")
    monkeypatch.setattr(em_kernel, "COMPILED_FROM", table.response_matrix().nnz)  # the whole matrix, not the subset
    used: list[tuple[int, str]] = []
    original = em.ResponseBlocks.__init__

    def spy(self: ResponseBlocks, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        used.append((self.n_responses, self.kernel))

    monkeypatch.setattr(em.ResponseBlocks, "__init__", spy)
    model = Stableval().fit(table)
    assert {s["screened_responses"] for s in model.starts_} == {300}
    assert {n for n, _ in used} == {300, table.n_responses}
    assert {kernel for _, kernel in used} == {"numba"}


@pytest.mark.parametrize("nnz", [121, 1000, 1047])
def test_row_blocks_are_equal_not_a_full_length_and_a_remainder(nnz: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A matrix a little over one block long was cut into a full block and a short remainder, so one of two
    threads did nearly all of the E-step (the 200,000-response screening subset: 5.9 ms a step, 3.2 balanced)."""
    import stableval.aggregate.em as em

    monkeypatch.setattr(em, "BLOCK_NNZ", 100)
    X = sp.csr_matrix((np.ones(nnz), (np.arange(nnz), np.zeros(nnz, int))), shape=(nnz, 3))  # one judgment a row
    blocks = ResponseBlocks(X, threads=2, kernel="numpy")
    sizes = [Xb.nnz for _, _, Xb in blocks.blocks]
    assert sum(sizes) == nnz and len(sizes) == -(-nnz // 100)
    assert max(sizes) <= 100 and max(sizes) - min(sizes) <= 1
    assert [a for a, _, _ in blocks.blocks][1:] == [b for _, b, _ in blocks.blocks][:-1]  # contiguous, in order


@needs_numba
def test_preload_loads_the_entry_the_blocked_e_step_then_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    import stableval.aggregate.em as em

    monkeypatch.setattr(em_kernel, "_entries", {})
    thread = em_kernel.preload(3)
    assert thread is not None
    thread.join()
    assert len(em_kernel._entries) == 1
    loaded = next(iter(em_kernel._entries.values()))
    X, priors, confusion = problem(400, 10, 3, seed=5)
    monkeypatch.setattr(em, "BLOCK_NNZ", 200)  # several blocks, as in a fit large enough for the compiled kernel
    blocks = ResponseBlocks(X, threads=2, kernel="numba")
    assert len(blocks.blocks) > 2
    out = np.empty((3, X.shape[0]))
    log_likelihood, _, _ = blocks.e_step(priors, confusion, out)
    assert list(em_kernel._entries.values()) == [loaded]  # no second entry: the preloaded one ran
    assert log_likelihood == pytest.approx(dense_e_step(X, priors, confusion)[1], rel=1e-12)


def test_a_fit_on_the_compiled_kernel_preloads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from stableval import DawidSkene, example_path, read_any

    table = read_any(example_path("mt_bench"), duplicates="keep")
    asked: list[tuple[int, object]] = []
    monkeypatch.setattr(em_kernel, "preload", lambda k, dtype=np.int32: asked.append((k, dtype)))
    monkeypatch.setenv("STABLEVAL_EM_KERNEL", "numpy")
    DawidSkene().fit(table)
    assert asked == []  # the numpy kernel: nothing to load
    if em_kernel.NUMBA:
        monkeypatch.setenv("STABLEVAL_EM_KERNEL", "numba")
        DawidSkene().fit(table)
        assert asked == [(table.n_levels, table.response_matrix().indices.dtype)]
