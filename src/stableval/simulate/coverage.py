"""Do the reported intervals cover? People-only, judge-only and PPI++ intervals against the simulated truth.

Each *cell* is a simulated study design (:class:`~stableval.simulate.SimulationConfig` for the people,
:class:`~stableval.simulate.judges.JudgeConfig` for the LLM judges and the human budget); each trial draws one study
(:func:`~stableval.simulate.judges.simulate_judged`, seed ``SeedSequence([seed, trial])``), scores it with
:func:`~stableval.evaluate.ppi.ppi_agent_scores` (the people's and the judges' credit from ``method``) once per
interval kind (:data:`~stableval.evaluate.ppi_options.INTERVAL`: bootstrap-t, Student t, CLT) and records, per
estimator, the share of agents whose interval holds the true score (the exact expected credit), the share of
pairs of agents whose PPI++ difference interval holds the true difference, the mean interval width and, with a
bootstrap, whether every agent's true rank lies in its PPI rank interval.

A reported 95% must mean 95%: over many trials the people-only and PPI++ coverage should be near the nominal
level when the people's credit is unbiased for the truth (experts, or a consensus that recovers the true level),
and the judge-only coverage falls when the judge is biased.

>>> from stableval.simulate.judges import JudgeConfig
>>> from stableval.simulate.simulator import SimulationConfig
>>> cell = CoverageCell("lenient judge", SimulationConfig(qualities=(0.7, 0.5), items=200, raters=5,
...                     labels_per_response=1, accuracy=(1.0, 1.0), strict=0, lenient=0, adversarial=0, hard=0),
...                     JudgeConfig(leniency=0.3, human_share=0.25))
>>> trials = coverage_trials(cell, trials=3, seed=0, bootstrap=50)
>>> sorted(trials["estimator"].unique()), len(trials)
(['judge', 'people', 'ppi', 'ppi difference'], 12)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.evaluate.ppi_options import INTERVAL
from stableval.simulate.judges import JudgeConfig, simulate_judged
from stableval.simulate.simulator import SimulationConfig
from stableval.simulate.study_runs import run_cells, write_study

__all__ = ["DIFFERENCE", "ESTIMATORS", "CoverageCell", "coverage_table", "coverage_trials", "default_cells",
           "run_coverage", "summarise_coverage"]

#: the intervals compared, in display order
ESTIMATORS: tuple[str, ...] = ("people", "judge", "ppi")
#: the estimator name of the PPI++ differences between agents
DIFFERENCE = "ppi difference"


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
                    confidence: float = 0.95, bootstrap: int = 0,
                    intervals: Sequence[str] = (INTERVAL.default,)) -> pd.DataFrame:
    """One row per (trial, interval kind, estimator): ``cell, trial, interval, estimator`` (people, judge, ppi,
    and ``ppi difference``: the differences between every pair of agents), ``coverage`` (share of agents or pairs
    covered), ``width`` (mean interval width), ``error`` (mean absolute error), ``rank_coverage`` (PPI only, with a
    bootstrap: 1 if every agent's true rank is inside its rank interval) and ``rho`` (correlation of the judges'
    mean credit with the true credit over all responses). Every interval kind is computed from the same credits;
    only bootstrap-t draws the ``bootstrap`` replicates (seed ``trial``; without them it is the Student t
    interval), so the rank intervals are measured on its rows."""
    from stableval.evaluate.ppi import credits_by_kind, ppi_agent_scores
    from stableval.evaluate.scores import competition_ranks

    rows = []
    for trial in (range(trials) if isinstance(trials, int) else trials):
        study = simulate_judged(cell.config, cell.judges, np.random.SeedSequence([seed, trial]))
        table = study.table()
        credits = credits_by_kind(table, study.rater_info(table), method)
        credit = cell.config.credit_array()
        judged = np.bincount(study.judge_response, weights=credit[study.judge_label],
                             minlength=study.simulation.n_responses) / cell.judges.judges
        rho = float(np.corrcoef(credit[study.simulation.level], judged)[0, 1])
        truth_of = dict(zip(cell.config.agent_names(), study.true_scores, strict=True))
        for interval in intervals:
            replicates = bootstrap if interval == "bootstrap-t" else 0
            result = ppi_agent_scores(credits.people, credits.judge, table.response_agent,
                                      [str(a) for a in table.agents], bootstrap=replicates, seed=trial,
                                      confidence=confidence, interval=interval)
            board = result.scores.set_index("agent")
            truth = pd.Series([truth_of[a] for a in board.index], index=board.index)
            true_rank = pd.Series(competition_ranks(truth.to_numpy()), index=board.index)
            for estimator in ESTIMATORS:
                low, high = board[f"{estimator}_ci_low"], board[f"{estimator}_ci_high"]
                rank_covered = float("nan")
                if estimator == "ppi" and replicates:
                    rank_covered = float(((board["rank_low"] <= true_rank) & (true_rank <= board["rank_high"])).all())
                rows.append({"cell": cell.name, "trial": trial, "interval": interval, "estimator": estimator,
                             "coverage": float(((low <= truth) & (truth <= high)).mean()),
                             "width": float((high - low).mean()),
                             "error": float((board[f"{estimator}_score"] - truth).abs().mean()),
                             "rank_coverage": rank_covered, "rho": rho})
            pairs = result.differences
            true_difference = pairs["agent"].map(truth_of) - pairs["other"].map(truth_of)
            rows.append({"cell": cell.name, "trial": trial, "interval": interval, "estimator": DIFFERENCE,
                         "coverage": float(((pairs["ci_low"] <= true_difference)
                                            & (true_difference <= pairs["ci_high"])).mean()),
                         "width": float((pairs["ci_high"] - pairs["ci_low"]).mean()),
                         "error": float((pairs["difference"] - true_difference).abs().mean()),
                         "rank_coverage": float("nan"), "rho": rho})
    return pd.DataFrame(rows)


def summarise_coverage(trials: pd.DataFrame, agents: int = 4) -> pd.DataFrame:
    """Per (cell, interval kind, estimator): ``trials``, ``coverage`` (mean over trials and agents or pairs) with
    its binomial standard error ``coverage_se`` (the ``agents`` intervals per trial, or their pairs, counted as
    independent), ``width``, ``width_ratio`` (over people-only, same interval kind), ``error``,
    ``rank_coverage``."""
    keys = ["cell", "interval", "estimator"]
    grouped = trials.groupby(keys, sort=False)
    summary = grouped.agg(trials=("trial", "nunique"), coverage=("coverage", "mean"), width=("width", "mean"),
                          error=("error", "mean"), rank_coverage=("rank_coverage", "mean"),
                          rho=("rho", "mean")).reset_index()
    per_trial = np.where(summary["estimator"] == DIFFERENCE, agents * (agents - 1) // 2, agents)
    count = grouped.size().to_numpy() * per_trial
    summary["coverage_se"] = np.sqrt(summary["coverage"] * (1 - summary["coverage"]) / np.maximum(count, 1))
    people = summary[summary["estimator"] == "people"].set_index(["cell", "interval"])["width"]
    summary["width_ratio"] = summary["width"].to_numpy() / people.reindex(
        pd.MultiIndex.from_frame(summary[["cell", "interval"]])).to_numpy()
    return summary


def coverage_table(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: one row per cell; the coverage of each estimator under each interval kind
    (``a / b / c`` in the order of the header), judge-only coverage, PPI++ width ratio and rank-interval coverage
    under the default kind (or the first measured)."""
    kinds = list(dict.fromkeys(summary["interval"]))
    main = INTERVAL.default if INTERVAL.default in kinds else kinds[0]
    both = " / ".join(kinds)
    lines = [f"| design | trials | judge–truth ρ | people-only coverage ({both}) | judge-only coverage ({main}) | "
             f"PPI++ coverage ({both}) | PPI++ difference coverage ({both}) | PPI++ width / people-only ({main}) | "
             "PPI++ rank-interval coverage |", "|---|---|---|---|---|---|---|---|---|"]
    for cell, part in summary.groupby("cell", sort=False):
        row = part.set_index(["interval", "estimator"]).astype({"trials": float})

        def value(estimator: str, column: str, interval: str = main, frame: pd.DataFrame = row) -> float:
            return float(frame.loc[(interval, estimator), column])  # type: ignore[arg-type]

        def each(estimator: str) -> str:
            return " / ".join(f"{value(estimator, 'coverage', kind):.3f}" for kind in kinds)

        rank = value("ppi", "rank_coverage")
        lines.append(f"| {cell} | {int(value('ppi', 'trials')):,} | {value('ppi', 'rho'):.2f} | {each('people')} | "
                     f"{value('judge', 'coverage'):.3f} | {each('ppi')} | {each(DIFFERENCE)} | "
                     f"{value('ppi', 'width_ratio'):.2f} | {'—' if np.isnan(rank) else f'{rank:.3f}'} |")
    return "\n".join(lines) + "\n"


def _run_cell(task: tuple[CoverageCell, int, int, int]) -> pd.DataFrame:
    cell, trials, seed, bootstrap = task
    return coverage_trials(cell, trials, seed, bootstrap=bootstrap, intervals=INTERVAL.choices or ())


def run_coverage(cells: Sequence[CoverageCell], trials: int, seed: int, outdir: str | os.PathLike[str], *,
                 bootstrap: int = 1000, executor: Any = None) -> list[Path]:
    """Run ``trials`` trials of every cell under every interval kind (one task per cell on ``executor``, default
    serial) and write ``coverage_trials.csv`` (every trial), ``coverage.csv`` (:func:`summarise_coverage`) and
    ``coverage.md`` (:func:`coverage_table`) into ``outdir``; returns the files. ``bootstrap``: replicates per trial
    (``score --combine ppi``'s default), for the bootstrap-t and the rank intervals."""
    frame = run_cells(_run_cell, [(cell, trials, seed, bootstrap) for cell in cells], executor)
    summary = summarise_coverage(frame, agents=len(cells[0].config.agent_names()) if cells else 4)
    return write_study(outdir, "coverage", frame, summary, (
        f"# Coverage of 95% intervals\n\n{trials:,} trials per design (seed {seed}); bootstrap-t and rank intervals "
        f"from {bootstrap:,} bootstrap replicates.\n\n" + coverage_table(summary)))
