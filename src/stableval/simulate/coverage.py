"""Do the reported intervals cover? People-only, judge-only and PPI++ intervals against the simulated truth.

Each *cell* is a simulated study design (:class:`~stableval.simulate.SimulationConfig` for the people,
:class:`~stableval.simulate.judges.JudgeConfig` for the LLM judges and the human budget); each trial draws one study
(:func:`~stableval.simulate.judges.simulate_judged`, seed ``SeedSequence([seed, trial])``), scores it with
:func:`~stableval.evaluate.ppi.ppi_scores` (the people's and the judges' credit from ``method``) and records, per
estimator, the share of agents whose interval holds the true score (the exact expected credit), the mean interval
width and, with a bootstrap, whether every agent's true rank lies in its PPI rank interval.

A reported 95% must mean 95%: over many trials the people-only and PPI++ coverage should be near the nominal
level when the people's credit is unbiased for the truth (experts, or a consensus that recovers the true level),
and the judge-only coverage falls when the judge is biased.

>>> from stableval.simulate.judges import JudgeConfig
>>> from stableval.simulate.simulator import SimulationConfig
>>> cell = CoverageCell("lenient judge", SimulationConfig(qualities=(0.7, 0.5), items=200, raters=5,
...                     labels_per_response=1, accuracy=(1.0, 1.0), strict=0, lenient=0, adversarial=0, hard=0),
...                     JudgeConfig(leniency=0.3, human_share=0.25))
>>> trials = coverage_trials(cell, trials=3, seed=0)
>>> sorted(trials["estimator"].unique()), len(trials)
(['judge', 'people', 'ppi'], 9)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.simulate.judges import JudgeConfig, simulate_judged
from stableval.simulate.simulator import SimulationConfig
from stableval.simulate.study_runs import run_cells, write_study

__all__ = ["ESTIMATORS", "CoverageCell", "coverage_table", "coverage_trials", "default_cells", "run_coverage",
           "summarise_coverage"]

#: the intervals compared, in display order
ESTIMATORS: tuple[str, ...] = ("people", "judge", "ppi")


@dataclass(frozen=True)
class CoverageCell:
    """One design of the coverage table: a name, the people's study and the judges (with the human budget)."""

    name: str
    config: SimulationConfig
    judges: JudgeConfig


def default_cells(items: int = 400) -> list[CoverageCell]:
    """The docs' table: expert people (one exact judgment per rated response, so their credit is the truth's),
    a 0.8-accurate judge that is unbiased, lenient, or self-preferring with a length bias, and a 0.95-accurate
    lenient one, at human budgets of 10%, 25% and 50% of the responses; four agents, one of the judge's family."""
    people = SimulationConfig(qualities=(0.7, 0.6, 0.55, 0.45), agents=("gpt-a", "claude-b", "llama-c", "mistral-d"),
                              items=items, raters=5, labels_per_response=1, accuracy=(1.0, 1.0), strict=0.0,
                              lenient=0.0, adversarial=0.0, hard=0.0)
    judges = {"unbiased judge": JudgeConfig(accuracy=(0.8, 0.8)),
              "lenient judge (0.3)": JudgeConfig(accuracy=(0.8, 0.8), leniency=0.3),
              "accurate (0.95) lenient (0.15) judge": JudgeConfig(accuracy=(0.95, 0.95), leniency=0.15),
              "self-preference 0.4 + length 0.3": JudgeConfig(accuracy=(0.8, 0.8), family=("gpt-a",),
                                                              self_preference=0.4, length_bias=0.3)}
    return [CoverageCell(f"{name}, people on {share:.0%}", people,
                         JudgeConfig(**{**judge.__dict__, "human_share": share}))
            for name, judge in judges.items() for share in (0.1, 0.25, 0.5)]


def coverage_trials(cell: CoverageCell, trials: int | Sequence[int], seed: int = 0, *, method: str = "mv",
                    confidence: float = 0.95, bootstrap: int = 0) -> pd.DataFrame:
    """One row per (trial, estimator): ``cell, trial, estimator, coverage`` (share of agents covered), ``width``
    (mean interval width), ``error`` (mean absolute error), ``rank_coverage`` (PPI only, with a bootstrap: 1 if
    every agent's true rank is inside its rank interval) and ``rho`` (correlation of the judges' mean credit with
    the true credit over all responses)."""
    from stableval.evaluate.ppi import ppi_scores
    from stableval.evaluate.scores import competition_ranks

    rows = []
    for trial in (range(trials) if isinstance(trials, int) else trials):
        study = simulate_judged(cell.config, cell.judges, np.random.SeedSequence([seed, trial]))
        table = study.table()
        result = ppi_scores(table, study.rater_info(table), method, bootstrap=bootstrap, seed=trial,
                            confidence=confidence)
        board = result.scores.set_index("agent")
        truth = pd.Series(study.true_scores, index=list(cell.config.agent_names())).loc[board.index]
        true_rank = pd.Series(competition_ranks(truth.to_numpy()), index=board.index)
        credit = cell.config.credit_array()
        judged = np.bincount(study.judge_response, weights=credit[study.judge_label],
                             minlength=study.simulation.n_responses) / cell.judges.judges
        rho = float(np.corrcoef(credit[study.simulation.level], judged)[0, 1])
        for estimator in ESTIMATORS:
            low, high = board[f"{estimator}_ci_low"], board[f"{estimator}_ci_high"]
            rank_covered = float("nan")
            if estimator == "ppi" and bootstrap:
                rank_covered = float(((board["rank_low"] <= true_rank) & (true_rank <= board["rank_high"])).all())
            rows.append({"cell": cell.name, "trial": trial, "estimator": estimator,
                         "coverage": float(((low <= truth) & (truth <= high)).mean()),
                         "width": float((high - low).mean()),
                         "error": float((board[f"{estimator}_score"] - truth).abs().mean()),
                         "rank_coverage": rank_covered, "rho": rho})
    return pd.DataFrame(rows)


def summarise_coverage(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (cell, estimator): ``trials``, ``coverage`` (mean over trials and agents) with its binomial standard
    error ``coverage_se`` (agents counted as independent), ``width``, ``width_ratio`` (over people-only),
    ``error``, ``rank_coverage``."""
    grouped = trials.groupby(["cell", "estimator"], sort=False)
    summary = grouped.agg(trials=("trial", "nunique"), coverage=("coverage", "mean"), width=("width", "mean"),
                          error=("error", "mean"), rank_coverage=("rank_coverage", "mean"),
                          rho=("rho", "mean")).reset_index()
    agents = trials.groupby(["cell", "estimator"], sort=False).size().to_numpy()
    summary["coverage_se"] = np.sqrt(summary["coverage"] * (1 - summary["coverage"]) / np.maximum(agents, 1))
    people = summary[summary["estimator"] == "people"].set_index("cell")["width"]
    summary["width_ratio"] = summary["width"] / summary["cell"].map(people)
    return summary


def coverage_table(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: one row per cell; coverage and width ratio per estimator."""
    lines = ["| design | trials | judge–truth ρ | people-only coverage | judge-only coverage | PPI++ coverage | "
             "PPI++ width / people-only | PPI++ rank-interval coverage |", "|---|---|---|---|---|---|---|---|"]
    for cell, part in summary.groupby("cell", sort=False):
        row = part.set_index("estimator").astype({"trials": float})

        def value(estimator: str, column: str, frame: pd.DataFrame = row) -> float:
            return float(frame.loc[estimator, column])  # type: ignore[arg-type]

        rank = value("ppi", "rank_coverage")
        lines.append(f"| {cell} | {int(value('ppi', 'trials')):,} | {value('ppi', 'rho'):.2f} | "
                     f"{value('people', 'coverage'):.3f} | {value('judge', 'coverage'):.3f} | "
                     f"{value('ppi', 'coverage'):.3f} | {value('ppi', 'width_ratio'):.2f} | "
                     f"{'—' if np.isnan(rank) else f'{rank:.3f}'} |")
    return "\n".join(lines) + "\n"


def _run_cell(task: tuple[CoverageCell, int, int, int]) -> pd.DataFrame:
    cell, trials, seed, bootstrap = task
    return coverage_trials(cell, trials, seed, bootstrap=bootstrap)


def run_coverage(cells: Sequence[CoverageCell], trials: int, seed: int, outdir: str | os.PathLike[str], *,
                 bootstrap: int = 200, executor: Any = None) -> list[Path]:
    """Run ``trials`` trials of every cell (one task per cell on ``executor``, default serial) and write
    ``coverage_trials.csv`` (every trial), ``coverage.csv`` (:func:`summarise_coverage`) and ``coverage.md``
    (:func:`coverage_table`) into ``outdir``; returns the files."""
    frame = run_cells(_run_cell, [(cell, trials, seed, bootstrap) for cell in cells], executor)
    summary = summarise_coverage(frame)
    return write_study(outdir, "coverage", frame, summary, (
        f"# Coverage of 95% intervals\n\n{trials:,} trials per design (seed {seed}); rank intervals from {bootstrap} "
        "bootstrap replicates.\n\n" + coverage_table(summary)))
