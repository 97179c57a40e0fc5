"""Coverage of ``score``'s intervals in simulation (issue 30); the docs' table comes from
``stableval ablate --metric coverage --sweep score -n 1000`` (docs/scoring.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stableval.aggregate.registry import default_methods, method_label
from stableval.simulate.score_coverage import (
    ScoreCoverageCell,
    default_score_cells,
    run_score_coverage,
    score_coverage_table,
    score_coverage_trials,
    summarise_score_coverage,
)
from stableval.simulate.simulator import SimulationConfig

#: accurate raters, so every default method's consensus is (nearly) the truth and only sampling is left
ACCURATE = SimulationConfig(qualities=(0.7, 0.5, 0.3), items=60, raters=8, labels_per_response=3,
                            accuracy=(0.95, 1.0), strict=0, lenient=0, adversarial=0, hard=0)


def test_every_default_method_is_measured_and_covers_with_accurate_raters() -> None:
    trials = score_coverage_trials(ScoreCoverageCell("accurate", ACCURATE), 30, seed=0, bootstrap=200)
    summary = summarise_score_coverage(trials).set_index("method")
    assert list(summary.index) == [method_label(m) for m in default_methods()]
    assert (summary["trials"] == 30).all() and (summary["coverage"] > 0.85).all()  # 90 intervals per method
    assert (summary["rank_coverage"] > 0.9).all() and (summary["coverage_se"] < 0.05).all()


def test_noisy_raters_bias_the_consensus_and_coverage_falls() -> None:
    """The intervals hold the credits fixed: a consensus pulled towards the middle level is not covered."""
    noisy = ScoreCoverageCell("noisy", ACCURATE.replace(accuracy=(0.4, 0.6), items=300, labels_per_response=1))
    summary = summarise_score_coverage(score_coverage_trials(noisy, 10, seed=0, bootstrap=200)).set_index("method")
    assert summary.loc["MV", "coverage"] < 0.6 and summary.loc["MV", "max_bias"] > 0.05


def test_run_score_coverage_writes_the_table(tmp_path: Path) -> None:
    cells = [ScoreCoverageCell(c.name, c.config.replace(items=30)) for c in default_score_cells()[:2]]
    files = run_score_coverage(cells, 2, 0, tmp_path, bootstrap=50)
    assert [f.name for f in files] == ["score_coverage_trials.csv", "score_coverage.csv", "score_coverage.md"]
    assert len(pd.read_csv(files[0])) == 2 * 2 * len(default_methods()) * 4  # trials × cells × methods × agents
    text = files[2].read_text(encoding="utf-8")
    assert text.count("\n| low noise") == len(default_methods()) and "rank-interval coverage" in text
    assert score_coverage_table(pd.read_csv(files[1])).splitlines()[0].startswith("| design")


def test_refit_is_measured_beside_the_fixed_credits(tmp_path: Path) -> None:
    """Issue 30: ``score --refit``'s intervals in the same study: each method twice (fixed credits, `` --refit``),
    on the designs where the fixed-credit intervals under-cover; refit intervals are at least as wide."""
    from stableval.simulate.score_coverage import default_refit_cells, run_refit_coverage

    assert [c.name.split(":")[0] for c in default_refit_cells()] == ["base", "high noise", "mixed pool",
                                                                    "1 rater per response"]
    cells = [ScoreCoverageCell(c.name, c.config.replace(items=30)) for c in default_refit_cells()[:1]]
    files = run_refit_coverage(cells, 2, 0, tmp_path, bootstrap=20)
    assert [f.name for f in files] == ["score_refit_coverage_trials.csv", "score_refit_coverage.csv",
                                       "score_refit_coverage.md"]
    summary = pd.read_csv(files[1]).set_index("method")
    labels = [method_label(m) for m in default_methods()]
    assert list(summary.index) == [*labels, *(f"{label} --refit" for label in labels)]
    assert summary.loc["STABLEVAL --refit", "width"] > summary.loc["STABLEVAL", "width"]
    assert "--refit" in files[2].read_text(encoding="utf-8")
