"""Do ``score``'s intervals cover? Every default method's score and rank intervals against the simulated truth.

Each *cell* is a simulated study (:class:`~stableval.simulate.SimulationConfig`); each trial draws one study
(:func:`~stableval.simulate.simulate`, seed ``SeedSequence([seed, trial])``), scores it exactly as
``stableval score`` does (:func:`~stableval.evaluate.scores.score_agents` with the registry's default methods,
bootstrap seed ``trial``) and records, per method, the share of agents whose score interval holds the true score
(the exact expected credit of the agent's latent levels), the mean width, the share of agents whose rank interval
holds the true rank and whether every agent's does. The methods, their labels and their order come from the
method registry (:func:`~stableval.aggregate.registry.default_methods`), so a newly registered default method is
measured without a change here.

The intervals resample the agents' responses with each method's fitted credits held fixed: they carry the
sampling of responses, not the error of the consensus. Where the consensus is biased for the truth (noisy raters
pulling a majority vote towards the middle level) the bias does not shrink with more responses while the interval
does, so coverage falls as items grow; that is what the table shows. ``refit=True`` measures ``score --refit``
instead (every aggregation re-run on every replicate, so the rater model's uncertainty enters the interval; the
method's label gets `` --refit``): :func:`run_refit_coverage` compares both on the designs of
:func:`default_refit_cells`, where the fixed-credit intervals under-cover.

>>> cell = ScoreCoverageCell("tiny", SimulationConfig(qualities=(0.7, 0.4), items=40, raters=6,
...                                                    labels_per_response=3))
>>> trials = score_coverage_trials(cell, 2, seed=0, bootstrap=50)
>>> trials["method"].unique().tolist(), len(trials)
(['MV', 'DS', 'STABLEVAL'], 12)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.simulate.simulator import SimulationConfig, simulate
from stableval.simulate.study_runs import run_cells, write_study

__all__ = ["REFIT_BOOTSTRAP", "ScoreCoverageCell", "default_refit_cells", "default_score_cells", "run_refit_coverage",
           "run_score_coverage", "score_coverage_table", "score_coverage_trials", "summarise_score_coverage"]

#: bootstrap replicates per trial of the refit comparison (a refit costs one fit of every method per replicate)
REFIT_BOOTSTRAP = 100


@dataclass(frozen=True)
class ScoreCoverageCell:
    """One design of the score-coverage table: a name and the simulated study."""

    name: str
    config: SimulationConfig


def default_score_cells() -> list[ScoreCoverageCell]:
    """The docs' table: four agents (qualities 0.7, 0.6, 0.55, 0.45, three levels), a pool of 20 reliable raters
    (accuracy 0.65–0.95), 3 judgments per response and 200 items per agent as the base, then one setting changed at
    a time: rater noise (accuracy 0.85–0.95 or 0.45–0.75, or the simulator's mixed pool with 10% strict, lenient
    and adversarial raters and 5% hard items), raters per response (1 or 7) and items per agent (50 or 800)."""
    base = SimulationConfig(qualities=(0.7, 0.6, 0.55, 0.45), items=200, raters=20, labels_per_response=3,
                            strict=0.0, lenient=0.0, adversarial=0.0, hard=0.0)
    changes: dict[str, dict[str, Any]] = {
        "base: accuracy 0.65–0.95, 3 raters per response, 200 items": {},
        "low noise: accuracy 0.85–0.95": {"accuracy": (0.85, 0.95)},
        "high noise: accuracy 0.45–0.75": {"accuracy": (0.45, 0.75)},
        "mixed pool: 10% strict, lenient, adversarial; 5% hard": {"strict": 0.1, "lenient": 0.1,
                                                                    "adversarial": 0.1, "hard": 0.05},
        "1 rater per response": {"labels_per_response": 1},
        "7 raters per response": {"labels_per_response": 7},
        "50 items per agent": {"items": 50},
        "800 items per agent": {"items": 800},
    }
    return [ScoreCoverageCell(name, base.replace(**change)) for name, change in changes.items()]


def default_refit_cells() -> list[ScoreCoverageCell]:
    """The designs of :func:`default_score_cells` where the fixed-credit intervals under-cover at 200 items per
    agent (the base, high noise, the mixed pool and one rater per response): where ``score --refit`` could help.

    >>> [cell.name.split(":")[0] for cell in default_refit_cells()]
    ['base', 'high noise', 'mixed pool', '1 rater per response']
    """
    wanted = ("base", "high noise", "mixed pool", "1 rater per response")
    return [cell for cell in default_score_cells() if cell.name.split(":")[0] in wanted]


def score_coverage_trials(cell: ScoreCoverageCell, trials: int | Sequence[int], seed: int = 0, *,
                          methods: Sequence[str] | None = None, bootstrap: int = 1000,
                          confidence: float = 0.95, refit: bool = False) -> pd.DataFrame:
    """One row per (trial, method, agent): ``cell, trial, method`` (its label), ``agent``, ``covered`` (1 if the
    score interval holds the true score), ``width`` (the interval's width), ``error`` (score − truth),
    ``rank_covered`` (1 if the rank interval holds the true rank) and ``ranking_covered`` (1 if every agent's rank
    interval holds its true rank in this trial). ``methods``: default the registry's defaults; ``refit``: re-run
    every aggregation on each replicate, as ``score --refit`` (the method labels get `` --refit``)."""
    from stableval.aggregate.registry import default_methods, method_label
    from stableval.evaluate.scores import competition_ranks, score_agents

    chosen = list(methods) if methods is not None else list(default_methods())
    suffix = " --refit" if refit else ""
    parts = []
    for trial in (range(trials) if isinstance(trials, int) else trials):
        study = simulate(cell.config, np.random.SeedSequence([seed, trial]))
        truth = pd.Series(study.true_scores, index=list(cell.config.agent_names()))
        result = score_agents(study.table(), methods=chosen, bootstrap=bootstrap, seed=trial, confidence=confidence,
                              refit=refit)
        for key, board in result.scores.groupby("method", sort=False):
            true = truth.loc[board["agent"]].to_numpy()
            true_rank = competition_ranks(true)
            ranked = (board["rank_low"].to_numpy() <= true_rank) & (true_rank <= board["rank_high"].to_numpy())
            parts.append(pd.DataFrame({
                "cell": cell.name, "trial": trial, "method": method_label(str(key)) + suffix,
                "agent": board["agent"].to_numpy(),
                "covered": ((board["ci_low"].to_numpy() <= true) & (true <= board["ci_high"].to_numpy())).astype(float),
                "width": (board["ci_high"] - board["ci_low"]).to_numpy(), "error": board["score"].to_numpy() - true,
                "rank_covered": ranked.astype(float), "ranking_covered": float(ranked.all())}))
    return pd.concat(parts, ignore_index=True)


def summarise_score_coverage(trials: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per (cell, method): ``trials``, ``coverage`` (share of all agents' intervals holding the truth) with its
    binomial standard error ``coverage_se`` (intervals counted as independent), ``width`` (mean), ``max_bias``
    (the largest |mean error over trials| of an agent: a bias no interval over responses accounts for),
    ``width_ratio`` (mean width over the width a normal interval of the scores' spread over trials would have,
    averaged over agents: below 1 the intervals are too narrow), ``rank_coverage`` (per agent) and
    ``ranking_covered`` (share of trials in which every agent's rank interval holds its true rank)."""
    from stableval.evaluate.ppi import normal_quantile

    keys = ["cell", "method"]
    per_agent = trials.groupby([*keys, "agent"], sort=False).agg(
        bias=("error", "mean"), spread=("error", "std"), width=("width", "mean")).reset_index()
    per_agent["ratio"] = per_agent["width"] / (2 * normal_quantile(confidence) * per_agent["spread"])
    per_agent["abs_bias"] = per_agent["bias"].abs()
    grouped = trials.groupby(keys, sort=False)
    summary = grouped.agg(trials=("trial", "nunique"), coverage=("covered", "mean"), width=("width", "mean"),
                          rank_coverage=("rank_covered", "mean")).reset_index()
    summary["ranking_covered"] = trials.drop_duplicates([*keys, "trial"]).groupby(keys, sort=False)[
        "ranking_covered"].mean().to_numpy()
    by_method = per_agent.groupby(keys, sort=False)
    summary["max_bias"] = by_method["abs_bias"].max().to_numpy()
    summary["width_ratio"] = by_method["ratio"].mean().to_numpy()
    summary["coverage_se"] = np.sqrt(summary["coverage"] * (1 - summary["coverage"]) / grouped.size().to_numpy())
    return summary


def score_coverage_table(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: one row per (cell, method)."""
    lines = ["| design | method | trials | score-CI coverage | mean CI width | width / spread | largest agent bias "
             "| rank-interval coverage (per agent) | whole ranking covered |", "|---|---|---|---|---|---|---|---|---|"]
    for row in summary.to_dict("records"):
        lines.append(f"| {row['cell']} | {row['method']} | {int(row['trials']):,} | {row['coverage']:.3f} | "
                     f"{row['width']:.3f} | {row['width_ratio']:.2f} | {row['max_bias']:.3f} | "
                     f"{row['rank_coverage']:.3f} | {row['ranking_covered']:.3f} |")
    return "\n".join(lines) + "\n"


def _run_cell(task: tuple[ScoreCoverageCell, int, int, int, bool]) -> pd.DataFrame:
    cell, trials, seed, bootstrap, refit = task
    return score_coverage_trials(cell, trials, seed, bootstrap=bootstrap, refit=refit)


def run_score_coverage(cells: Sequence[ScoreCoverageCell], trials: int, seed: int, outdir: str | os.PathLike[str],
                       *, bootstrap: int = 1000, executor: Any = None, refit: Sequence[bool] = (False,),
                       stem: str = "score_coverage") -> list[Path]:
    """Run ``trials`` trials of every cell for each ``refit`` variant (one task per cell and variant on
    ``executor``, default serial) and write ``STEM_trials.csv`` (every trial), ``STEM.csv``
    (:func:`summarise_score_coverage`) and ``STEM.md`` (:func:`score_coverage_table`) into ``outdir``; returns the
    files."""
    tasks = [(cell, trials, seed, bootstrap, variant) for cell in cells for variant in refit]
    frame = run_cells(_run_cell, tasks, executor)
    summary = summarise_score_coverage(frame)
    how = " and ".join("refitting every method per replicate (--refit)" if variant else "over fixed credits"
                       for variant in refit)
    return write_study(outdir, stem, frame, summary, (
        f"# Coverage of `score`'s 95% intervals\n\n{trials:,} trials per design (seed {seed}), {bootstrap:,} "
        f"bootstrap replicates each, {how}.\n\n" + score_coverage_table(summary)))


def run_refit_coverage(cells: Sequence[ScoreCoverageCell], trials: int, seed: int, outdir: str | os.PathLike[str],
                       *, bootstrap: int = REFIT_BOOTSTRAP, executor: Any = None) -> list[Path]:
    """:func:`run_score_coverage` of ``cells`` with the fixed-credit and the refit bootstrap side by side, written
    as ``score_refit_coverage_trials.csv``, ``score_refit_coverage.csv`` and ``score_refit_coverage.md``."""
    return run_score_coverage(cells, trials, seed, outdir, bootstrap=bootstrap, executor=executor,
                              refit=(False, True), stem="score_refit_coverage")
