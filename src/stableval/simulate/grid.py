"""The ablation grid: aggregation methods under controlled rater populations (stress tests).

Reproduces the synthetic experiments of Bonagiri et al. (2026), arXiv:2605.02122, Sections 5–6: each *sweep*
varies one setting of the simulator (:class:`~stableval.simulate.SimulationConfig`) while the others stay at the
base configuration; every setting runs ``trials`` independent simulated studies, and each study is scored by every
chosen method of the registry (by default MV, hard Dawid–Skene, STABLEVAL). Metrics per trial
(:mod:`stableval.simulate.metrics`): MSE of the agent scores against the exact true scores, ranking accuracy,
Kendall tau-b against the true ranking, and ranking stability (mean tau-b between the all-rater ranking and
``subsamples`` rankings from a random ``subsample_fraction`` of the raters, Section 4.1). Summaries give the mean
and a 95% Student-t interval over trials per setting and method.

Trial t of every setting uses the seed ``SeedSequence([seed, t])`` (common random numbers across settings), so a
setting's results depend only on its own definition: settings shared by several sweeps (the base values) are
computed once, and the executor and job count never change a number.

>>> frame = run_trials(TrialTask(SimulationConfig(items=20, raters=10), trials=(0,), seed=0,
...                              methods=("mv", "stableval"), subsamples=3, subsample_fraction=0.5))
>>> frame[["trial", "method"]].values.tolist()
[[0, 'mv'], [0, 'stableval']]
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.aggregate.batch_em import ProblemBatch, batch_fit
from stableval.aggregate.registry import default_methods, resolve_methods
from stableval.simulate.grid_config import GridConfig, Sweep, check_grid, default_grid, load_grid
from stableval.simulate.grid_summary import summarise, sweep_markdown
from stableval.simulate.metrics import kendall_tau_b, mean_squared_error, mean_subset_tau, rank_accuracy
from stableval.simulate.simulator import SimulationConfig, simulate, true_scores

__all__ = ["GridConfig", "GridResult", "Sweep", "TrialTask", "default_grid", "load_grid", "run_grid", "run_trials",
           "subsample_size", "summarise"]

_TASK_TRIALS = 10  # trials per task: a fixed batch, so results never depend on the executor or job count


@dataclass(frozen=True)
class TrialTask:
    """Trials ``trials`` of one setting: the unit of work an executor runs (picklable)."""

    config: SimulationConfig
    trials: tuple[int, ...]
    seed: int
    methods: tuple[str, ...] = field(default_factory=default_methods)
    subsamples: int = 10
    subsample_fraction: float = 0.5
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def subsample_size(n_raters: int, fraction: float) -> int:
    """Raters kept in a stability subset: ``floor(fraction · R + 1/2)`` (halves round up, as in
    :func:`stableval.evaluate.stability.resolve_sizes`), at least 1.

    >>> subsample_size(30, 0.5), subsample_size(5, 0.5), subsample_size(3, 0.1)
    (15, 3, 1)
    """
    return int(min(n_raters, max(1, np.floor(fraction * n_raters + 0.5))))


def run_trials(task: TrialTask) -> pd.DataFrame:
    """Simulate and score ``task.trials``; one row per (trial, method) with the four metrics.

    Columns: ``trial, method, mse, rank_accuracy, kendall_tau, stability, n_iter`` (EM iterations of the
    all-rater fit; 0 for MV), ``converged`` (every EM fit of the trial, subsets included, converged),
    ``subsets_used`` (subsets with at least one judgment).
    """
    config = task.config
    n_raters, n_agents = config.raters, config.n_agents
    keep_n = subsample_size(n_raters, task.subsample_fraction)
    per_trial = 1 + task.subsamples
    problems = []
    agents = []
    present = np.zeros((len(task.trials), per_trial), dtype=bool)
    for t, trial in enumerate(task.trials):
        sim_seed, subset_seed = np.random.SeedSequence([task.seed, trial]).spawn(2)
        sim = simulate(config, np.random.default_rng(sim_seed))
        problems.append((sim.response, sim.rater, sim.label, sim.n_responses))
        agents.append(sim.response_agent)
        present[t, 0] = True
        rng = np.random.default_rng(subset_seed)
        for s in range(task.subsamples):
            kept = np.zeros(n_raters, dtype=bool)
            kept[rng.choice(n_raters, keep_n, replace=False)] = True
            keep = kept[sim.rater]
            used, code = np.unique(sim.response[keep], return_inverse=True)
            if used.size:
                problems.append((code, sim.rater[keep], sim.label[keep], int(used.size)))
                agents.append(sim.response_agent[used])
                present[t, 1 + s] = True
    batch = ProblemBatch.from_problems(problems, n_raters, config.levels)
    fits = {c.key: batch_fit(batch, c.estimator, c.method) for c in resolve_methods(task.methods, task.params)}
    key = batch.response_problem * n_agents + np.concatenate(agents)
    counts = np.bincount(key, minlength=batch.n_problems * n_agents).astype(float)
    credit = config.credit_array()
    truth = true_scores(config)
    slots = np.flatnonzero(present.ravel())  # problem p sits in slot slots[p] of the (trial, subset) grid
    frames = []
    for method, fit in fits.items():
        sums = np.bincount(key, weights=fit.distribution @ credit, minlength=batch.n_problems * n_agents)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_problem = (sums / counts).reshape(batch.n_problems, n_agents)
        flat = np.full((len(task.trials) * per_trial, n_agents), np.nan)
        flat[slots] = per_problem
        scores = flat.reshape(len(task.trials), per_trial, n_agents)
        full = scores[:, 0]
        if fit.em is not None:
            problem_trial = slots // per_trial
            failures = np.bincount(problem_trial, weights=(~fit.em.converged).astype(float),
                                   minlength=len(task.trials))
            all_converged = failures == 0
            n_iter = fit.em.n_iter[np.flatnonzero(slots % per_trial == 0)]
        else:
            all_converged = np.ones(len(task.trials), dtype=bool)
            n_iter = np.zeros(len(task.trials), dtype=np.int64)
        frames.append(pd.DataFrame({
            "trial": np.asarray(task.trials, dtype=np.int64),
            "method": method,
            "mse": mean_squared_error(full, truth),
            "rank_accuracy": rank_accuracy(full, truth),
            "kendall_tau": kendall_tau_b(full, truth),
            "stability": mean_subset_tau(full, scores[:, 1:]),
            "n_iter": n_iter,
            "converged": all_converged,
            "subsets_used": present[:, 1:].sum(axis=1),
        }))
    return pd.concat(frames, ignore_index=True).sort_values(["trial", "method"], kind="stable",
                                                            ignore_index=True)


# ---------------------------------------------------------------------- the whole grid
@dataclass(frozen=True)
class GridResult:
    """Result of :func:`run_grid`.

    Attributes:
        trials: tidy table, one row per (sweep, value, trial, method): ``sweep, parameter, value, index,
            setting, trial, method`` and the metrics of :func:`run_trials`.
        summary: one row per (sweep, value, method, metric): ``mean, sd, n, ci_low, ci_high`` (95% Student-t
            interval over trials) and ``best`` (the best mean of the methods at that setting; ties all marked).
        computed, skipped: settings run now / found finished in the output folder.
        files: every file written.
    """

    trials: pd.DataFrame
    summary: pd.DataFrame
    computed: int
    skipped: int
    files: list[Path]


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def run_grid(grid: GridConfig, outdir: str | os.PathLike[str], *, executor: Any = None,
             progress: bool = False) -> GridResult:
    """Run every setting of ``grid`` not already finished in ``outdir``, then write the tidy trials table and
    per-sweep summaries (CSV + markdown, best method marked); ``stableval ablate`` adds one figure per sweep
    (:func:`stableval.report.figures.ablation.sweep_figure`).

    Each finished setting is saved at once as ``settings/<id>.csv`` (with ``<id>.json`` describing it), so an
    interrupted run resumes where it stopped. ``executor`` is a :mod:`stableval.parallel` executor (default:
    serial).
    """
    from stableval.parallel import SerialExecutor
    from stableval.progress import progress_bar

    check_grid(grid)
    out = Path(outdir)
    settings_dir = out / "settings"
    settings_dir.mkdir(parents=True, exist_ok=True)
    unique: dict[str, SimulationConfig] = {}
    for _, _, config in grid.settings():
        unique.setdefault(grid.setting_id(config), config)
    todo = [sid for sid in unique if not (settings_dir / f"{sid}.csv").exists()]
    tasks: list[tuple[str, TrialTask]] = [
        (sid, TrialTask(unique[sid], tuple(range(start, min(grid.trials, start + _TASK_TRIALS))), grid.seed,
                        grid.methods, grid.subsamples, grid.subsample_fraction, grid.params))
        for sid in todo for start in range(0, grid.trials, _TASK_TRIALS)
    ]
    remaining = {sid: 0 for sid in todo}
    for sid, _ in tasks:
        remaining[sid] += 1
    parts: dict[str, list[pd.DataFrame]] = {sid: [] for sid in todo}
    executor = executor or SerialExecutor()
    with progress_bar("simulated trials", total=len(todo) * grid.trials, enabled=progress) as bar:
        for index, frame in executor.map_unordered(run_trials, [task for _, task in tasks]):
            sid, task = tasks[index]
            parts[sid].append(frame)
            remaining[sid] -= 1
            bar.advance(len(task.trials))
            if remaining[sid] == 0:
                done = pd.concat(parts.pop(sid), ignore_index=True).sort_values(["trial", "method"],
                                                                                 ignore_index=True)
                meta = {"config": unique[sid].to_dict(), "trials": grid.trials, "seed": grid.seed,
                        "methods": list(grid.methods), "subsamples": grid.subsamples,
                        "subsample_fraction": grid.subsample_fraction}
                _write_atomic(settings_dir / f"{sid}.json", json.dumps(meta, indent=2) + "\n")
                _write_atomic(settings_dir / f"{sid}.csv", done.to_csv(index=False))

    frames = []
    for sweep, index, config in grid.settings():
        sid = grid.setting_id(config)
        frame = pd.read_csv(settings_dir / f"{sid}.csv")
        frame.insert(0, "setting", sid)
        frame.insert(0, "index", index)
        frame.insert(0, "value", sweep.labels[index])
        frame.insert(0, "parameter", sweep.parameter)
        frame.insert(0, "sweep", sweep.name)
        frames.append(frame)
    trials = pd.concat(frames, ignore_index=True)
    summary = summarise(trials)
    files = [out / "trials.csv", out / "summary.csv", out / "summary.md"]
    _write_atomic(out / "trials.csv", trials.to_csv(index=False))
    _write_atomic(out / "summary.csv", summary.to_csv(index=False))
    markdown = [f"# Ablation summary\n\n{grid.trials} trials per setting; mean [95% CI] over trials; "
                "**bold** = best method at that setting.\n"]
    for sweep in grid.sweeps:
        part = summary[summary["sweep"] == sweep.name]
        text = sweep_markdown(part, sweep)
        markdown.append(text)
        _write_atomic(out / f"{sweep.name}.md", text)
        _write_atomic(out / f"{sweep.name}.csv", part.to_csv(index=False))
        files += [out / f"{sweep.name}.md", out / f"{sweep.name}.csv"]
    _write_atomic(out / "summary.md", "\n".join(markdown))
    return GridResult(trials=trials, summary=summary, computed=len(todo), skipped=len(unique) - len(todo),
                      files=files)
