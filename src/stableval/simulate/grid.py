"""The ablation grid: aggregation methods under controlled rater populations (stress tests).

Reproduces the synthetic experiments of Bonagiri et al. (2026), arXiv:2605.02122, Sections 5–6: each *sweep*
varies one setting of the simulator (:class:`~stableval.simulate.SimulationConfig`) while the others stay at the
base configuration; every setting runs ``trials`` independent simulated studies, and each study is scored by every
method (majority vote, hard Dawid–Skene, STABLEVAL). Metrics per trial (:mod:`stableval.simulate.metrics`): MSE of
the agent scores against the exact true scores, ranking accuracy, Kendall tau-b against the true ranking, and
ranking stability (mean tau-b between the all-rater ranking and ``subsamples`` rankings from a random
``subsample_fraction`` of the raters, Section 4.1). Summaries give the mean and a 95% Student-t interval over
trials per setting and method.

Trial t of every setting uses the seed ``SeedSequence([seed, t])`` (common random numbers across settings), so a
setting's results depend only on its own definition: settings shared by several sweeps (the base values) are
computed once, and the executor and job count never change a number.

>>> grid = default_grid().select(["gap"]).with_trials(2)
>>> grid.base.replace(items=20).items, [s.name for s in grid.sweeps], grid.trials
(20, ['gap'], 2)
>>> frame = run_trials(TrialTask(grid.base.replace(items=20, raters=10), trials=(0,), seed=0,
...                              methods=("mv", "stableval"), subsamples=3, subsample_fraction=0.5))
>>> frame[["trial", "method"]].values.tolist()
[[0, 'mv'], [0, 'stableval']]
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.evaluate.credit import METHOD_LABELS, METHODS, MethodOptions, check_methods
from stableval.simulate.batch_em import ProblemBatch, batch_credit_distributions
from stableval.simulate.metrics import (
    METRICS,
    kendall_tau_b,
    mean_squared_error,
    rank_accuracy,
    ranking_stability,
)
from stableval.simulate.simulator import NARROW_GAP, WIDE_GAP, SimulationConfig, simulate, true_scores

#: how each metric is described on plots and in tables
METRIC_LABELS: dict[str, str] = {
    "mse": "MSE of agent scores (credit units²)",
    "rank_accuracy": "ranking accuracy (share of agent pairs)",
    "kendall_tau": "Kendall τ_b vs true ranking",
    "stability": "ranking stability (mean τ_b, rater subsets)",
}

#: y-axis label (with units) of each metric on the plots
METRIC_UNITS: dict[str, str] = {
    "mse": "MSE (credit units²)",
    "rank_accuracy": "share of agent pairs in true order",
    "kendall_tau": "Kendall τ_b (−1 to 1)",
    "stability": "mean Kendall τ_b (−1 to 1)",
}

#: axis label of each simulator setting a sweep can vary
PARAMETER_LABELS: dict[str, str] = {
    "adversarial": "adversarial raters (fraction of the pool)",
    "strict": "strict raters (fraction of the pool)",
    "lenient": "lenient raters (fraction of the pool)",
    "hard": "hard responses (probability per response)",
    "hard_noise": "random judgments on hard responses (probability)",
    "labels_per_response": "labels per response (judgments)",
    "qualities": "agent qualities (profile)",
    "items": "items per agent (count)",
    "raters": "rater pool (raters)",
    "levels": "levels K (count)",
    "accuracy": "reliable accuracy range (probability)",
    "shift": "strict/lenient shift range (probability)",
    "neighbour": "errors to adjacent levels (share)",
    "adversarial_mode": "adversarial behaviour (mode)",
}

_TUPLE_FIELDS = {"qualities", "agents", "level_names", "credit", "accuracy", "shift"}
_TASK_TRIALS = 10  # trials per task: a fixed batch, so results never depend on the executor or job count


@dataclass(frozen=True)
class Sweep:
    """One sweep: ``parameter`` of the simulator takes each of ``values`` (display names in ``labels``)."""

    name: str
    parameter: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]

    @property
    def axis_label(self) -> str:
        return PARAMETER_LABELS.get(self.parameter, self.parameter)


@dataclass(frozen=True)
class GridConfig:
    """A whole ablation: base configuration, sweeps, trials per setting, methods and metric settings."""

    base: SimulationConfig
    sweeps: tuple[Sweep, ...]
    trials: int = 100
    seed: int = 0
    methods: tuple[str, ...] = ("mv", "ds", "stableval")
    subsamples: int = 10
    subsample_fraction: float = 0.5
    options: MethodOptions = field(default_factory=MethodOptions)

    def select(self, names: Sequence[str]) -> GridConfig:
        """Only the named sweeps (in the given order)."""
        by_name = {sweep.name: sweep for sweep in self.sweeps}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise InputError("no such sweep", column="sweep", value=unknown[0], allowed=", ".join(by_name))
        return dataclasses.replace(self, sweeps=tuple(by_name[name] for name in names))

    def with_trials(self, trials: int) -> GridConfig:
        return dataclasses.replace(self, trials=trials)

    def settings(self) -> list[tuple[Sweep, int, SimulationConfig]]:
        """Every (sweep, value index, simulator config) of the grid."""
        return [(sweep, i, self.base.replace(**{sweep.parameter: value}))
                for sweep in self.sweeps for i, value in enumerate(sweep.values)]

    def setting_id(self, config: SimulationConfig) -> str:
        """Short hash of everything that determines a setting's trials (resumable runs key on it)."""
        payload = {"config": config.to_dict(), "trials": self.trials, "seed": self.seed, "methods": self.methods,
                   "subsamples": self.subsamples, "fraction": self.subsample_fraction,
                   "options": {k: v for k, v in dataclasses.asdict(self.options).items() if k != "extra"},
                   "version": 1}
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_grid() -> GridConfig:
    """The spec's grid: adversarial, strict and lenient fractions 0–40%, hard responses 0–20%, 3/5/7/9 labels per
    response, and a wide vs narrow agent-quality gap; everything else at the base :class:`SimulationConfig`
    (6 agents × 100 items, 30 raters, 5 labels per response, K = 3, 10% each strict / lenient / adversarial,
    5% hard responses), 100 trials per setting, stability over 10 subsets of half the raters."""
    fractions = (0.0, 0.1, 0.2, 0.3, 0.4)
    hard = (0.0, 0.05, 0.1, 0.15, 0.2)
    labels = (3, 5, 7, 9)

    def numeric(name: str, values: tuple[Any, ...]) -> Sweep:
        return Sweep(name, name, values, tuple(f"{v:g}" for v in values))

    return GridConfig(
        base=SimulationConfig(),
        sweeps=(
            numeric("adversarial", fractions),
            numeric("strict", fractions),
            numeric("lenient", fractions),
            numeric("hard", hard),
            Sweep("labels", "labels_per_response", labels, tuple(str(v) for v in labels)),
            Sweep("gap", "qualities", (WIDE_GAP, NARROW_GAP), ("wide", "narrow")),
        ),
    )


# ---------------------------------------------------------------------- configuration files
def _as_setting(name: str, value: Any) -> Any:
    return tuple(value) if name in _TUPLE_FIELDS and isinstance(value, list) else value


def load_grid(path: str | os.PathLike[str]) -> GridConfig:
    """Read a grid from a TOML file (see ``examples/ablation/*.toml``); every key is checked.

    Top level: ``trials``, ``seed``, ``methods``, ``subsamples``, ``subsample_fraction``; ``[base]``: any
    :class:`SimulationConfig` setting; ``[options]``: ``alpha_mu``, ``alpha_pi``, ``epsilon``, ``max_iter``,
    ``tol``; ``[[sweep]]``: ``name``, ``parameter``, ``values`` and optional ``labels``. Without any
    ``[[sweep]]`` the default sweeps are used on the given base.
    """
    source = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("config file not found", file=source) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML ({error})", file=source) from None
    top = {"trials", "seed", "methods", "subsamples", "subsample_fraction", "base", "options", "sweep"}
    _check_keys(data, top, source, "top level")
    setting_names = {f.name for f in dataclasses.fields(SimulationConfig)}
    base_data = data.get("base", {})
    _check_keys(base_data, setting_names, source, "[base]")
    try:
        base = SimulationConfig(**{k: _as_setting(k, v) for k, v in base_data.items()})
    except InputError as error:
        raise InputError(error.problem, file=source, column=f"base.{error.column}", value=error.value,
                         allowed=error.allowed) from None
    except TypeError as error:
        raise InputError(f"a [base] setting has the wrong type ({error})", file=source) from None
    option_names = {"alpha_mu", "alpha_pi", "epsilon", "max_iter", "tol"}
    options_data = data.get("options", {})
    _check_keys(options_data, option_names, source, "[options]")
    options = MethodOptions(**options_data)
    try:
        options.build("stableval")
    except ValueError as error:
        raise InputError(str(error), file=source, column="options") from None
    sweeps_data = data.get("sweep")
    sweeps = default_grid().sweeps if sweeps_data is None else tuple(
        _parse_sweep(entry, base, setting_names, source, n) for n, entry in enumerate(sweeps_data, 1))
    if len({s.name for s in sweeps}) != len(sweeps):
        raise InputError("sweep names must be distinct", file=source, column="sweep.name",
                         value=[s.name for s in sweeps])
    try:
        methods = tuple(check_methods(data.get("methods", ["mv", "ds", "stableval"])))
    except ValueError as error:
        raise InputError(str(error), file=source, column="methods", value=data.get("methods")) from None
    grid = GridConfig(base=base, sweeps=sweeps, trials=data.get("trials", 100), seed=data.get("seed", 0),
                      methods=methods, subsamples=data.get("subsamples", 10),
                      subsample_fraction=data.get("subsample_fraction", 0.5), options=options)
    check_grid(grid, source)
    return grid


def _check_keys(data: dict[str, Any], allowed: set[str], source: str, where: str) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{where} must be a table", file=source, value=data)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"unknown key in {where}", file=source, column=unknown[0], value=data[unknown[0]],
                         allowed=", ".join(sorted(allowed)))


def _parse_sweep(entry: dict[str, Any], base: SimulationConfig, setting_names: set[str], source: str,
                 number: int) -> Sweep:
    _check_keys(entry, {"name", "parameter", "values", "labels"}, source, f"sweep #{number}")
    parameter = entry.get("parameter", entry.get("name"))
    if parameter not in setting_names:
        raise InputError(f"sweep #{number}: unknown parameter", file=source, column="sweep.parameter",
                         value=parameter, allowed=", ".join(sorted(setting_names)))
    values = entry.get("values")
    if not isinstance(values, list) or not values:
        raise InputError(f"sweep #{number}: values must be a non-empty list", file=source, column="sweep.values",
                         value=values)
    values_t = tuple(_as_setting(parameter, v) for v in values)
    for value in values_t:
        try:
            base.replace(**{parameter: value})
        except InputError as error:
            raise InputError(f"sweep #{number} ({parameter}): {error.problem}", file=source,
                             column=f"sweep.values ({error.column})", value=value, allowed=error.allowed) from None
    labels = entry.get("labels")
    if labels is None:
        labels = [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    if not isinstance(labels, list) or len(labels) != len(values):
        raise InputError(f"sweep #{number}: one label per value", file=source, column="sweep.labels", value=labels,
                         allowed=f"a list of {len(values)} names")
    return Sweep(str(entry.get("name", parameter)), parameter, values_t, tuple(str(x) for x in labels))


def check_grid(grid: GridConfig, source: str | None = None) -> None:
    """Validate the run settings of a grid (trials, subsamples, methods)."""
    checks = [
        ("trials", isinstance(grid.trials, int) and grid.trials >= 2, "an integer >= 2 (a CI needs two trials)"),
        ("seed", isinstance(grid.seed, int) and grid.seed >= 0, "an integer >= 0"),
        ("subsamples", isinstance(grid.subsamples, int) and grid.subsamples >= 1, "an integer >= 1"),
        ("subsample_fraction", isinstance(grid.subsample_fraction, int | float)
         and 0 < grid.subsample_fraction < 1, "a number strictly between 0 and 1"),
    ]
    for name, ok, allowed in checks:
        if not ok:
            raise InputError("invalid grid setting", file=source, column=name, value=getattr(grid, name),
                             allowed=allowed)
    if grid.options.ties != "split":
        raise InputError("the ablation's majority vote splits ties", file=source, column="options.ties",
                         value=grid.options.ties, allowed="split")


# ---------------------------------------------------------------------- one batch of trials
@dataclass(frozen=True)
class TrialTask:
    """Trials ``trials`` of one setting: the unit of work an executor runs (picklable)."""

    config: SimulationConfig
    trials: tuple[int, ...]
    seed: int
    methods: tuple[str, ...] = ("mv", "ds", "stableval")
    subsamples: int = 10
    subsample_fraction: float = 0.5
    options: MethodOptions = field(default_factory=MethodOptions)


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
    distributions, fits = batch_credit_distributions(batch, task.methods, task.options)
    key = batch.response_problem * n_agents + np.concatenate(agents)
    counts = np.bincount(key, minlength=batch.n_problems * n_agents).astype(float)
    credit = config.credit_array()
    truth = true_scores(config)
    slots = np.flatnonzero(present.ravel())  # problem p sits in slot slots[p] of the (trial, subset) grid
    frames = []
    for method in task.methods:
        sums = np.bincount(key, weights=distributions[method] @ credit, minlength=batch.n_problems * n_agents)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_problem = (sums / counts).reshape(batch.n_problems, n_agents)
        flat = np.full((len(task.trials) * per_trial, n_agents), np.nan)
        flat[slots] = per_problem
        scores = flat.reshape(len(task.trials), per_trial, n_agents)
        full = scores[:, 0]
        if method in fits:
            fit = fits[method]
            problem_trial = slots // per_trial
            failures = np.bincount(problem_trial, weights=(~fit.converged).astype(float), minlength=len(task.trials))
            all_converged = failures == 0
            n_iter = fit.n_iter[np.flatnonzero(slots % per_trial == 0)]
        else:
            all_converged = np.ones(len(task.trials), dtype=bool)
            n_iter = np.zeros(len(task.trials), dtype=np.int64)
        frames.append(pd.DataFrame({
            "trial": np.asarray(task.trials, dtype=np.int64),
            "method": method,
            "mse": mean_squared_error(full, truth),
            "rank_accuracy": rank_accuracy(full, truth),
            "kendall_tau": kendall_tau_b(full, truth),
            "stability": ranking_stability(full, scores[:, 1:]),
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
             progress: bool = False, plots: bool = True) -> GridResult:
    """Run every setting of ``grid`` not already finished in ``outdir``, then write the tidy trials table,
    per-sweep summaries (CSV + markdown, best method marked) and plots.

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
                        grid.methods, grid.subsamples, grid.subsample_fraction, grid.options))
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
        if plots:
            plot_sweep(part, sweep, out / f"{sweep.name}.png", trials=grid.trials)
            files.append(out / f"{sweep.name}.png")
    _write_atomic(out / "summary.md", "\n".join(markdown))
    return GridResult(trials=trials, summary=summary, computed=len(todo), skipped=len(unique) - len(todo),
                      files=files)


# ---------------------------------------------------------------------- summaries
def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float, float, int]:
    """Mean, standard deviation, Student-t interval and count of the finite ``values``.

    >>> mean, sd, low, high, n = t_interval(np.array([1.0, 2.0, 3.0]))
    >>> round(low, 4), round(high, 4), n
    (-0.4841, 4.4841, 3)
    """
    from scipy.special import stdtrit  # Student-t quantile (lighter to import than scipy.stats)

    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return (np.nan, np.nan, np.nan, np.nan, 0)
    mean = float(finite.mean())
    if n == 1:
        return (mean, np.nan, np.nan, np.nan, 1)
    sd = float(finite.std(ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * sd / float(np.sqrt(n))
    return (mean, sd, mean - half, mean + half, n)


def summarise(trials: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Mean and Student-t interval per (sweep, value, method, metric), with the best method marked."""
    keys = ["sweep", "parameter", "value", "index", "method"]
    rows = []
    ordered = trials.sort_values([*keys, "trial"], kind="stable")
    for key, group in ordered.groupby(keys, sort=False):  # one group per setting × method: tiny, not a hot path
        for metric in METRICS:
            mean, sd, low, high, n = t_interval(group[metric].to_numpy(dtype=float), confidence)
            rows.append((*key, metric, mean, sd, n, low, high))
    summary = pd.DataFrame(rows, columns=[*keys, "metric", "mean", "sd", "n", "ci_low", "ci_high"])
    larger = summary["metric"].map(METRICS)
    signed = np.where(larger, summary["mean"], -summary["mean"])
    summary["_signed"] = signed
    best = summary.groupby(["sweep", "index", "metric"])["_signed"].transform("max")
    summary["best"] = np.isclose(summary["_signed"], best, rtol=0, atol=1e-12)
    order = {method: i for i, method in enumerate(METHODS)}
    summary["_order"] = summary["method"].map(order)
    return summary.sort_values(["sweep", "index", "metric", "_order"], kind="stable", ignore_index=True).drop(
        columns=["_signed", "_order"])


def sweep_markdown(summary: pd.DataFrame, sweep: Sweep) -> str:
    """One markdown table per metric: rows = the sweep's values, columns = methods, best in bold."""
    lines = [f"## Sweep `{sweep.name}`: {sweep.axis_label}\n"]
    methods = list(dict.fromkeys(summary["method"]))
    for metric, larger in METRICS.items():
        part = summary[summary["metric"] == metric]
        better = "higher" if larger else "lower"
        lines.append(f"### {METRIC_LABELS[metric]} ({better} is better)\n")
        lines.append("| " + " | ".join([sweep.name, *[METHOD_LABELS.get(m, m) for m in methods]]) + " |")
        lines.append("|" + "---|" * (len(methods) + 1))
        for index, label in enumerate(sweep.labels):
            cells = [label]
            for method in methods:
                row = part[(part["index"] == index) & (part["method"] == method)]
                if row.empty:
                    cells.append("")
                    continue
                r = row.iloc[0]
                digits = 4 if metric == "mse" else 3
                text = f"{r['mean']:.{digits}f} [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]"
                cells.append(f"**{text}**" if r["best"] else text)
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def plot_sweep(summary: pd.DataFrame, sweep: Sweep, path: Path, *, trials: int) -> None:
    """One PNG per sweep: each metric against the setting, one line per method with its 95% CI band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in sweep.values)
    x = np.asarray(sweep.values, dtype=float) if numeric else np.arange(len(sweep.values), dtype=float)
    figure, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.08, top=0.87, wspace=0.28, hspace=0.38)
    for ax, metric in zip(axes.ravel(), METRICS, strict=True):
        part = summary[summary["metric"] == metric]
        for method in dict.fromkeys(part["method"]):
            rows = part[part["method"] == method].sort_values("index")
            xs = x[rows["index"].to_numpy()]
            line = ax.plot(xs, rows["mean"], marker="o", label=METHOD_LABELS.get(method, method))[0]
            ax.fill_between(xs, rows["ci_low"], rows["ci_high"], color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_title(METRIC_LABELS[metric], fontsize=10)
        ax.set_xlabel(sweep.axis_label)
        ax.set_ylabel(METRIC_UNITS[metric])
        if not numeric:
            ax.set_xticks(x, list(sweep.labels))
        ax.grid(alpha=0.3)
    axes[0, 0].legend(title="method")
    figure.suptitle(f"Ablation sweep '{sweep.name}': metrics vs {sweep.axis_label}\n"
                    f"(mean over {trials} trials per setting, bands = 95% CI)")
    figure.savefig(path, dpi=110)
    plt.close(figure)
