"""Which ranking aggregation recovers the true ranking best, for a given rater budget? (``stableval ablate --metric
ranking-recovery``)

Each *cell* is a rater budget (rankings per item) on the base ranking study of :data:`RECOVERY_BASE`
(:func:`~stableval.simulate.rankings.simulate_rankings`: reliable, noisy and truncated partial-ranking raters).
Each trial draws one study (seed ``SeedSequence([seed, budget, trial])``), fits every ranking method of the registry
(:mod:`stableval.aggregate.rankings.registry`) with its defaults, and scores each item's plausibility against the
planted truth:

* **Kendall τ-b** between the item's plausibility over its options and its true scores (1 = the true order; options
  nobody named tie in the plausibility, so a method cannot order them), averaged over items;
* **top-1 accuracy**: the share of items whose most plausible option is the true best one (a tie for first
  counts as 1/size of the tie).

>>> frame = recovery_trials(budget=3, trials=1, seed=0, methods=["borda", "pl"], config=RECOVERY_BASE)
>>> sorted(frame["method"]), sorted(frame.columns)
(['borda', 'pl'], ['budget', 'method', 'seconds', 'tau', 'top1', 'trial'])
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.simulate.rankings import RankingStudyConfig, simulate_rankings
from stableval.simulate.study_runs import run_cells, write_study

__all__ = ["RECOVERY_BASE", "RECOVERY_BUDGETS", "recovery_table", "recovery_trials", "run_recovery",
           "summarise_recovery"]

#: the base study of every cell: 100 items of 8 options, a pool of 20 raters of whom 30% noisy (near-random) and
#: 20% truncated (name only their first choice); reliable and noisy raters name their best 3
RECOVERY_BASE = RankingStudyConfig(items=100, options=8, raters=20, depth=3, truncated_depth=1, noisy=0.3,
                                   truncated=0.2)
#: rankings per item compared (the rater budget)
RECOVERY_BUDGETS: tuple[int, ...] = (1, 2, 3, 5, 8)


def _kendall_rows(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Kendall τ-b of each row of ``estimate`` with the same row of ``truth`` (NaN where one row is all ties)."""
    own = np.sign(estimate[:, :, None] - estimate[:, None, :])
    true = np.sign(truth[:, :, None] - truth[:, None, :])
    concordance = (own * true).sum(axis=(1, 2))
    denominator = np.sqrt(np.abs(own).sum(axis=(1, 2)) * np.abs(true).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(denominator > 0, concordance / denominator, np.nan))


def _top1(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per row: 1/size of the estimate's tie for first when it holds the true best option, else 0."""
    first = estimate >= estimate.max(axis=1, keepdims=True) * (1 - 1e-9)
    hit = first[np.arange(len(truth)), truth.argmax(axis=1)]
    return np.asarray(hit / first.sum(axis=1))


def recovery_trials(budget: int, trials: int | Sequence[int], seed: int = 0, *,
                    methods: Sequence[str] | None = None,
                    config: RankingStudyConfig = RECOVERY_BASE) -> pd.DataFrame:
    """One row per (trial, method) at this budget: ``budget, trial, method, tau, top1, seconds`` (the fit's wall
    time). ``methods``: ranking method names (default: every registered one)."""
    from stableval.aggregate.rankings.registry import ranking_method_names, resolve_ranking_methods

    names = list(methods) if methods is not None else list(ranking_method_names())
    study_config = dataclasses.replace(config, budget=budget)
    rows: list[dict[str, Any]] = []
    for trial in (range(trials) if isinstance(trials, int) else trials):
        rng = np.random.default_rng(np.random.SeedSequence([seed, budget, trial]))
        study = simulate_rankings(study_config, seed=rng)
        for name, _, estimator in resolve_ranking_methods(names):
            started = time.perf_counter()
            fitted = estimator.fit(study.rankings)
            seconds = time.perf_counter() - started
            estimate = fitted.plausibility_matrix()
            rows.append({"budget": budget, "trial": int(trial), "method": name,
                         "tau": float(np.nanmean(_kendall_rows(estimate, study.scores))),
                         "top1": float(_top1(estimate, study.scores).mean()), "seconds": seconds})
    return pd.DataFrame(rows, columns=["budget", "trial", "method", "tau", "top1", "seconds"])


def summarise_recovery(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (budget, method): ``trials``, mean ``tau`` and ``top1`` with their standard errors over trials
    (``tau_se``, ``top1_se``), and the mean fit ``seconds``."""
    grouped = trials.groupby(["budget", "method"], sort=False)
    summary = grouped.agg(trials=("trial", "nunique"), tau=("tau", "mean"), tau_sd=("tau", "std"),
                          top1=("top1", "mean"), top1_sd=("top1", "std"), seconds=("seconds", "mean")).reset_index()
    root = np.sqrt(np.maximum(summary["trials"].to_numpy(float), 1))
    summary["tau_se"] = summary.pop("tau_sd").fillna(0.0) / root
    summary["top1_se"] = summary.pop("top1_sd").fillna(0.0) / root
    return summary


def recovery_table(summary: pd.DataFrame) -> str:
    """The summary as a markdown table: one row per budget; per method, Kendall τ-b and top-1 accuracy (± one
    standard error over trials); the best mean of each row (as shown, to 3 decimals) in bold."""
    from stableval.aggregate.rankings.registry import get_ranking_method

    methods = list(dict.fromkeys(summary["method"]))
    labels = [get_ranking_method(m).label for m in methods]
    lines = ["| rankings per item | " + " | ".join(f"{label} τ" for label in labels) + " | "
             + " | ".join(f"{label} top-1" for label in labels) + " |",
             "|---|" + "---|" * (2 * len(methods))]
    for budget, part in summary.groupby("budget", sort=True):
        row = part.set_index("method")
        cells = [f"{budget}"]
        for measure in ("tau", "top1"):
            best = max(round(float(row.loc[m, measure]), 3) for m in methods)
            for m in methods:
                mean, se = float(row.loc[m, measure]), float(row.loc[m, f"{measure}_se"])
                text = f"{mean:.3f} ± {se:.3f}"
                cells.append(f"**{text}**" if round(mean, 3) >= best else text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _run_budget(task: tuple[int, int, int, tuple[str, ...] | None]) -> pd.DataFrame:
    budget, trials, seed, methods = task
    return recovery_trials(budget, trials, seed, methods=methods)


def run_recovery(budgets: Sequence[int], trials: int, seed: int, outdir: str | os.PathLike[str], *,
                 methods: Sequence[str] | None = None, executor: Any = None) -> list[Path]:
    """Run ``trials`` trials at every budget (one task per budget on ``executor``, default serial) and write
    ``ranking_recovery_trials.csv`` (every trial), ``ranking_recovery.csv`` (:func:`summarise_recovery`) and
    ``ranking_recovery.md`` (:func:`recovery_table`) into ``outdir``; returns the files."""
    chosen = tuple(methods) if methods is not None else None
    frame = run_cells(_run_budget, [(budget, trials, seed, chosen) for budget in budgets], executor)
    summary = summarise_recovery(frame)
    base = RECOVERY_BASE
    return write_study(outdir, "ranking_recovery", frame, summary, (
        f"# Recovery of the true ranking\n\n{trials:,} trials per budget (seed {seed}); {base.items} items of "
        f"{base.options} options, a pool of {base.raters} raters ({base.noisy:.0%} noisy, {base.truncated:.0%} "
        f"truncated to their first choice, the rest reliable; depth {base.depth}).\n\n" + recovery_table(summary)))
