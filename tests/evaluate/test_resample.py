"""The multinomial bootstrap path gives the same replicate distribution as resampling rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from stableval.evaluate.resample import bin_credits, multinomial_means
from stableval.evaluate.scores import bootstrap_fixed

ROW_PATH = 10**12  # multinomial_above so large that every agent is resampled row by row


def _credits(n: int, kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "hard":
        return rng.choice([0.0, 0.5, 1.0], size=n, p=[0.2, 0.3, 0.5])
    return rng.beta(0.6, 0.4, size=n)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hard", "soft"])
@pytest.mark.parametrize("n", [40, 3_000, 60_000])
def test_multinomial_and_row_bootstraps_agree(n: int, kind: str) -> None:
    """Two-sample Kolmogorov–Smirnov test on 2,000 replicates of each path, per agent, at three sizes.
    Issue 14: bootstrap means at scale."""
    credits = np.stack([_credits(n, kind, 1), _credits(n, kind, 2)], axis=1)
    agent = np.repeat([0, 1], n // 2)
    fast, shortfall = bootstrap_fixed(credits, agent, 2, 2_000, seed=3, multinomial_above=0)
    slow, exact = bootstrap_fixed(credits, agent, 2, 2_000, seed=4, multinomial_above=ROW_PATH)
    assert exact == 0.0
    if kind == "hard":
        assert shortfall == 0.0  # one bin per credit value: the same distribution exactly
    else:
        assert 0.0 < shortfall < 1e-4
    for a in range(2):
        for j in range(2):
            assert ks_2samp(fast[:, a, j], slow[:, a, j]).pvalue > 1e-3
            assert fast[:, a, j].std() == pytest.approx(slow[:, a, j].std(), rel=0.12)


def test_replicates_centre_on_the_exact_mean() -> None:
    """Issue 14: bootstrap means at scale."""
    credits = _credits(200_000, "soft", 5)[:, None]
    reps, _ = bootstrap_fixed(credits, np.zeros(len(credits), dtype=np.int64), 1, 400, seed=0)
    standard_error = credits.std() / np.sqrt(len(credits))
    assert abs(reps.mean() - credits.mean()) < 4 * standard_error / np.sqrt(400) + 1e-12
    assert reps.std() == pytest.approx(standard_error, rel=0.15)


def test_binning_keeps_every_bin_sum_and_bounds_the_error() -> None:
    """Issue 14: bootstrap means at scale."""
    credits = _credits(10_000, "soft", 6)
    binned = bin_credits(credits, max_bins=16)
    assert binned.n == len(credits)
    assert float(binned.values @ binned.counts) == pytest.approx(credits.sum(), rel=1e-12)
    assert binned.max_error == pytest.approx((credits.max() - credits.min()) / 16)
    assert 0 < binned.rms_error <= binned.max_error


def test_binned_replicate_variance_is_the_exact_one_less_the_within_bin_part() -> None:
    """Var(binned replicate) = (s² − e²)/n, checked against the exact multinomial covariance (no simulation).
    Issue 14: bootstrap means at scale."""
    credits = _credits(400, "soft", 9)
    binned = bin_credits(credits, max_bins=4)
    n, p = binned.n, binned.counts / binned.n
    covariance = n * (np.diag(p) - np.outer(p, p))  # of the draw counts per bin
    variance = binned.values @ covariance @ binned.values / n**2
    assert variance == pytest.approx((credits.var() - binned.rms_error**2) / n, rel=1e-10)
    assert binned.se_shortfall == pytest.approx(1 - np.sqrt(variance * n / credits.var()), rel=1e-10)


def test_a_coupled_replicate_is_within_the_stated_error() -> None:
    """Same draw counts per bin: the binned replicate and the exact one differ by at most ``max_error``.
    Issue 14: bootstrap means at scale."""
    credits = _credits(5_000, "soft", 7)
    binned = bin_credits(credits, max_bins=32)
    width = (credits.max() - credits.min()) / 32
    bins = np.minimum(((credits - credits.min()) / width).astype(np.int64), 31)
    kept = np.unique(bins)
    rng = np.random.default_rng(8)
    for _ in range(20):
        drawn = rng.integers(0, len(credits), size=len(credits))
        per_bin = np.bincount(np.searchsorted(kept, bins[drawn]), minlength=len(kept))
        exact = credits[drawn].mean()
        assert abs(per_bin @ binned.values / len(credits) - exact) <= binned.max_error


def test_multinomial_means_are_reproducible_and_refuse_bad_bins() -> None:
    """Issue 14: bootstrap means at scale."""
    binned = bin_credits(np.array([0.0, 1.0, 1.0]))
    first = multinomial_means(np.random.default_rng(1), binned, rows=5)
    assert np.array_equal(first, multinomial_means(np.random.default_rng(1), binned, rows=5))
    with pytest.raises(ValueError, match="max_bins must be >= 1, got 0"):
        bin_credits(np.array([0.5]), max_bins=0)


def test_score_agents_states_the_resampling_error_for_large_agents() -> None:
    """Issue 14: bootstrap means at scale."""
    import pandas as pd
    from rich.console import Console

    from stableval.data.table import AnnotationTable
    from stableval.evaluate.scores import score_agents

    n = 60_000
    rng = np.random.default_rng(0)
    raters = rng.integers(0, 20, size=(n, 3))  # 20 raters: many distinct posteriors, so credits are binned
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), 3), "agent": "A", "rater": raters.ravel(),
                          "label": rng.integers(0, 3, size=3 * n)}).drop_duplicates(["item", "rater"])
    result = score_agents(AnnotationTable.from_frame(frame, levels=("0", "1", "2")), ["mv", "stableval"],
                          bootstrap=50, seed=0, progress=False)
    assert 0 < result.settings["bootstrap_se_shortfall"] < 1e-4
    console = Console(record=True, width=200)
    result.render(console)
    assert "multinomial draws over binned credits" in console.export_text()


def test_the_bootstrap_bar_counts_replicates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: the bar advanced once per agent (it sat still, then jumped); it now counts replicates, chunk by
    chunk, on both paths, and ends at agents × B."""
    from contextlib import contextmanager

    import stableval.evaluate.scores as scores

    steps: list[int] = []

    class Recorder:
        def advance(self, n: int = 1) -> None:
            steps.append(n)

    @contextmanager
    def recording(description: str, total: int, *, enabled: bool = True):  # type: ignore[no-untyped-def]
        steps.append(-total)
        yield Recorder()

    monkeypatch.setattr(scores, "progress_bar", recording)
    credits = np.stack([_credits(9_000, "soft", 1), _credits(9_000, "hard", 2)], axis=1)
    agent = np.repeat([0, 1, 2], 3_000)
    agent[:10] = 3  # a small agent on the row path beside large ones on the multinomial path
    scores.bootstrap_fixed(credits, agent, 5, 300, seed=0, multinomial_above=100)  # agent 4 has no responses
    assert -steps[0] == 5 * 300 and sum(steps[1:]) == 5 * 300 and len(steps) > 5
