"""Ranking stability under rater subsampling: how much does the leaderboard depend on *who* rated?

Stability(S) = E_{R'}[ tau_b(rank(S_R), rank(S_R')) ]: the expected Kendall tau-b between the agent ranking from
all raters R and the ranking from a subset R' of m raters drawn uniformly without replacement (Bonagiri et al.
2026, "STABLEVAL: Disagreement-Aware and Stable Evaluation of AI Systems", arXiv:2605.02122, Section 4.1 and
Section 5.3; Kendall 1945, "The treatment of ties in ranking problems", Biometrika 33(3):239–251, for tau-b).

For every subset size and repetition, the judgments of the drawn raters are kept (``table.subset``), every method
is refit on them from scratch, and the agents are scored as in :func:`stableval.evaluate.score_agents` (mean
item credit). Responses left without any judgment drop out of that subset (counted per repetition).

>>> from stableval.data import read_any, example_path
>>> table = read_any(example_path("mt_bench"), duplicates="keep")
>>> result = ranking_stability(table, ["mv"], sizes=[0.5], repetitions=3, seed=0)
>>> result.summary[["method", "raters", "repetitions"]].to_dict("records")
[{'method': 'mv', 'raters': 33, 'repetitions': 3}]
>>> bool(-1.0 <= result.summary["tau_mean"].iloc[0] <= 1.0)
True
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval.data.table import AnnotationTable
from stableval.evaluate.credit import METHOD_LABELS, MethodOptions, check_methods, credits_by_method
from stableval.evaluate.rank_correlation import SCORE_DECIMALS
from stableval.evaluate.scores import agent_means, competition_ranks
from stableval.progress import progress_bar

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: default subset sizes, as fractions of the raters
DEFAULT_SIZES: tuple[float, ...] = (0.25, 0.5, 0.75)


# ====================================================================================== sizes
@dataclass(frozen=True)
class SubsetSize:
    """One requested subset size: ``label`` as asked (``"25%"`` or ``"10"``) and ``raters`` = m it resolves to."""

    label: str
    raters: int
    fraction: float


def resolve_sizes(sizes: Sequence[float | int | str], n_raters: int) -> list[SubsetSize]:
    """Turn fractions (floats in (0, 1], or ``"25%"``) and counts (ints >= 1) into rater counts m.

    A fraction f becomes m = round(f · R) (halves round up), at least 1. Sizes that resolve to the same m are
    kept once; the result is sorted by m.

    >>> [(s.label, s.raters) for s in resolve_sizes([0.25, 0.5, "75%", 2], 10)]
    [('2', 2), ('25%', 3), ('50%', 5), ('75%', 8)]
    """
    if n_raters < 1:
        raise ValueError("the table has no raters")
    resolved: dict[int, SubsetSize] = {}
    if not sizes:
        raise ValueError("no subset size given; give fractions in (0, 1] (e.g. 0.5 or 50%) or rater counts")
    for size in sizes:
        label, fraction, count = parse_size(size)
        if fraction is not None:
            m = max(1, min(n_raters, math.floor(fraction * n_raters + 0.5)))
        else:
            assert count is not None
            if count > n_raters:
                raise ValueError(f"subset size {size!r} is more than the {n_raters} raters in the table; "
                                 f"allowed: counts 1..{n_raters} or fractions in (0, 1]")
            m = count
        resolved.setdefault(m, SubsetSize(label=label, raters=m, fraction=m / n_raters))
    return [resolved[m] for m in sorted(resolved)]


def parse_size(size: float | int | str) -> tuple[str, float | None, int | None]:
    allowed = "fractions in (0, 1] such as 0.25 or 25%, or whole rater counts >= 1 such as 10"
    if isinstance(size, str):
        text = size.strip()
        try:
            if text.endswith("%"):
                value: float | int = float(text[:-1]) / 100.0
            elif any(ch in text for ch in ".eE"):
                value = float(text)
            else:
                value = int(text)
        except ValueError:
            raise ValueError(f"subset size {size!r} is not a number; allowed: {allowed}") from None
        return parse_size(value) if not text.endswith("%") else _fraction(value, text, allowed)
    if isinstance(size, bool):
        raise ValueError(f"subset size {size!r}; allowed: {allowed}")
    if isinstance(size, int | np.integer):
        if size < 1:
            raise ValueError(f"subset size {size!r} is not a positive count; allowed: {allowed}")
        return str(int(size)), None, int(size)
    return _fraction(float(size), None, allowed)


def _fraction(value: float, label: str | None, allowed: str) -> tuple[str, float | None, int | None]:
    if not (0.0 < value <= 1.0) or not math.isfinite(value):
        raise ValueError(f"subset size {label or value!r} is not a fraction in (0, 1]; allowed: {allowed}")
    return label or f"{value * 100:g}%", value, None


# ====================================================================================== one repetition
def _subset_seed(entropy: int | Sequence[int], raters: int, repetition: int) -> np.random.SeedSequence:
    """The seed of one (size, repetition): depends only on the seed, m and the repetition number."""
    return np.random.SeedSequence(entropy, spawn_key=(raters, repetition))


def _agent_scores(table: AnnotationTable, methods: Sequence[str], options: MethodOptions) -> np.ndarray:
    """(A, methods) mean item credit per agent, every method fit on ``table``; NaN for agents without responses."""
    fitted = {method: options.build(method).fit(table) for method in methods}
    credits = credits_by_method(fitted, table.credit)
    return np.round(agent_means(credits, table.response_agent, table.n_agents), SCORE_DECIMALS)


def _one_subset(table: AnnotationTable, methods: Sequence[str], options: MethodOptions,
                entropy: int | Sequence[int], raters: int, repetition: int
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Draw m raters and refit every method on their judgments.

    Returns the drawn rater codes, the (A, methods) agent scores and the number of responses kept.
    """
    rng = np.random.default_rng(_subset_seed(entropy, raters, repetition))
    drawn = np.sort(rng.choice(table.n_raters, size=raters, replace=False))
    chosen = np.zeros(table.n_raters, dtype=bool)
    chosen[drawn] = True
    sub = table.subset(chosen[table.rater])
    return drawn, _agent_scores(sub, methods, options), sub.n_responses


_WORKER: dict[str, Any] = {}


def _init_worker(table: AnnotationTable, methods: Sequence[str], options: MethodOptions) -> None:
    _WORKER.update(table=table, methods=methods, options=options)


def _worker_task(task: tuple[int | Sequence[int], int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    entropy, raters, repetition = task
    return _one_subset(_WORKER["table"], _WORKER["methods"], _WORKER["options"], entropy, raters, repetition)


def _pool_context() -> Any:
    """Fresh interpreters for the workers (never ``fork`` a process whose EM thread pools may be running)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


# ====================================================================================== result
@dataclass(frozen=True)
class StabilityResult:
    """Result of :func:`ranking_stability`.

    Attributes:
        summary: one row per (method, size): ``method, size, raters, fraction, repetitions, tau_mean,
            tau_ci_low, tau_ci_high`` (Student-t interval for the mean over repetitions), ``tau_sd, tau_p025,
            tau_p975`` (spread of tau-b across subsets), ``tau_undefined`` (repetitions where tau-b is not
            defined: fewer than 2 agents scored, or all scores tied on one side), ``mean_rank_sd,
            mean_rank_range`` (per-agent rank SD and max − min over repetitions, averaged over agents),
            ``p_top_change`` (share of repetitions whose set of rank-1 agents differs from the full data's),
            ``responses_dropped_mean, responses_dropped_max`` (responses left without judgments),
            ``agents_missing`` (repetitions × agents with no response left in the subset).
        agents: one row per (method, size, agent): ``method, size, raters, agent, full_score, full_rank,
            mean_rank, rank_sd, rank_min, rank_max, rank_range, missing``.
        repetitions: one row per (method, size, repetition): ``method, size, raters, repetition, tau_b,
            top_changed, agents_missing, responses_dropped``.
        subsets: one row per (size, repetition): ``size, raters, repetition, drawn`` (tuple of rater names).
        full_scores: one row per (method, agent): ``method, agent, score, rank`` from all raters.
        dataset: counts from :meth:`AnnotationTable.summary`.
        settings: methods, sizes, repetitions, seed, jobs, confidence and method options.
        replicates: per (method, m), the (repetitions, A) subset scores (NaN = agent missing).
    """

    summary: pd.DataFrame
    agents: pd.DataFrame
    repetitions: pd.DataFrame
    subsets: pd.DataFrame
    full_scores: pd.DataFrame
    dataset: dict[str, Any]
    settings: dict[str, Any]
    replicates: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        return list(dict.fromkeys(self.summary["method"]))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of every table (subset scores left out)."""
        subsets = self.subsets.assign(drawn=self.subsets["drawn"].map(list))
        return {
            "dataset": self.dataset,
            "settings": self.settings,
            "full_scores": _records(self.full_scores),
            "summary": _records(self.summary),
            "agents": _records(self.agents),
            "repetitions": _records(self.repetitions),
            "subsets": _records(subsets),
        }


def _finite(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): _finite(v) for k, v in row.items()} for row in frame.to_dict("records")]


# ====================================================================================== statistics
def kendall_tau_b(full: np.ndarray, subset: np.ndarray) -> float:
    """Kendall tau-b over the agents scored in both (:mod:`stableval.evaluate.rank_correlation`); NaN when it is
    not defined (fewer than 2 agents, or one side constant).

    >>> kendall_tau_b(np.array([3.0, 2.0, 1.0]), np.array([2.0, 3.0, np.nan]))
    -1.0
    >>> round(kendall_tau_b(np.array([1.0, 0.5, 0.0]), np.array([0.75, 0.75, 0.0])), 4)
    0.8165
    """
    from stableval.evaluate.rank_correlation import kendall_tau_b as tau_b

    both = ~np.isnan(full) & ~np.isnan(subset)
    if both.sum() < 2:
        return float("nan")
    return float(tau_b(full[both], subset[both]))


def _mean_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean and Student-t interval for the mean of the finite ``values``, clipped to [-1, 1]."""
    from scipy.stats import t as student_t

    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan"), float("nan")
    half = float(student_t.ppf(0.5 + confidence / 2.0, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
    return mean, max(-1.0, mean - half), min(1.0, mean + half)


def _masked_stats(ranks: np.ndarray) -> dict[str, np.ndarray]:
    """Per-column mean, SD (ddof 0), min, max of a (reps, A) array whose NaNs mark missing agents; no warnings."""
    present = ~np.isnan(ranks)
    count = present.sum(axis=0)
    filled = np.where(present, ranks, 0.0)
    safe = np.maximum(count, 1)
    mean = filled.sum(axis=0) / safe
    sd = np.sqrt((np.where(present, (ranks - mean) ** 2, 0.0)).sum(axis=0) / safe)
    low = np.where(present, ranks, np.inf).min(axis=0, initial=np.inf)
    high = np.where(present, ranks, -np.inf).max(axis=0, initial=-np.inf)
    none = count == 0
    for array in (mean, sd, low, high):
        array[none] = np.nan
    return {"mean": mean, "sd": sd, "min": low, "max": high, "missing": ranks.shape[0] - count}


def _nanmean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


def _percentile(values: np.ndarray, q: float) -> float:
    finite = values[np.isfinite(values)]
    return float(np.quantile(finite, q)) if finite.size else float("nan")


# ====================================================================================== the analysis
def ranking_stability(
    table: AnnotationTable,
    methods: Sequence[str] = ("mv", "ds", "stableval"),
    *,
    sizes: Sequence[float | int | str] = DEFAULT_SIZES,
    repetitions: int = 50,
    seed: int | None = 0,
    jobs: int = 1,
    confidence: float = 0.95,
    options: MethodOptions | None = None,
    progress: bool = False,
) -> StabilityResult:
    """Expected Kendall tau-b between the full-data ranking and rankings from random rater subsets.

    Args:
        table: the annotation table.
        methods: any of ``"mv"``, ``"ds"``, ``"stableval"``; each is refit on every subset.
        sizes: subset sizes: fractions of the raters (floats in (0, 1], or strings like ``"25%"``) and/or whole
            rater counts (ints). Default 25%, 50% and 75%.
        repetitions: subsets drawn per size (R, default 50).
        seed: seed; the subset of repetition r at size m is drawn from ``SeedSequence(seed, spawn_key=(m, r))``,
            so results do not depend on ``jobs`` nor on which other sizes are asked for.
        jobs: worker processes (1 = in this process; 0 or less = one per CPU core).
        confidence: level of the interval for the mean tau-b.
        options: hyper-parameters of the methods.
        progress: show a progress bar over the repetitions on stderr.

    Agents with no response left in a subset are left out of that repetition's tau-b (computed over the agents
    scored in both rankings), get no rank in it, and are counted in ``agents_missing``.
    """
    chosen = check_methods(methods)
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    options = options or MethodOptions()
    resolved = resolve_sizes(sizes, table.n_raters)
    entropy: int | Sequence[int] = np.random.SeedSequence(seed).entropy  # type: ignore[assignment]
    if jobs <= 0:
        jobs = os.cpu_count() or 1

    full = _agent_scores(table, chosen, options)  # (A, methods)
    tasks = [(entropy, size.raters, rep) for size in resolved for rep in range(repetitions)]
    outcomes: list[tuple[np.ndarray, np.ndarray, int] | None] = [None] * len(tasks)
    with progress_bar("rater subsets", total=len(tasks), enabled=progress) as bar:
        if jobs == 1 or len(tasks) == 1:
            for index, task in enumerate(tasks):
                outcomes[index] = _one_subset(table, chosen, options, *task)
                bar.advance()
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=_pool_context(),
                                     initializer=_init_worker, initargs=(table, chosen, options)) as pool:
                futures = {pool.submit(_worker_task, task): index for index, task in enumerate(tasks)}
                for future in as_completed(futures):
                    outcomes[futures[future]] = future.result()
                    bar.advance()

    agents = [str(a) for a in table.agents]
    raters = np.asarray(table.raters, dtype=object)
    summary_rows: list[dict[str, Any]] = []
    agent_frames: list[pd.DataFrame] = []
    rep_frames: list[pd.DataFrame] = []
    subset_rows: list[dict[str, Any]] = []
    replicates: dict[tuple[str, int], np.ndarray] = {}
    for s, size in enumerate(resolved):
        block = [outcome for outcome in outcomes[s * repetitions:(s + 1) * repetitions] if outcome is not None]
        dropped = np.array([table.n_responses - kept for _, _, kept in block])
        for rep, (drawn, _, _) in enumerate(block):
            subset_rows.append({"size": size.label, "raters": size.raters, "repetition": rep,
                                "drawn": tuple(str(name) for name in raters[drawn])})
        for j, method in enumerate(chosen):
            scores = np.stack([outcome[1][:, j] for outcome in block])  # (reps, A)
            replicates[(method, size.raters)] = scores
            reference = full[:, j]
            taus = np.round([kendall_tau_b(reference, row) for row in scores], SCORE_DECIMALS)
            ranks = competition_ranks(scores).astype(float)
            ranks[np.isnan(scores)] = np.nan
            missing_per_rep = np.isnan(scores).sum(axis=1)
            full_top = reference == np.nanmax(reference)
            sub_top = scores == np.nanmax(np.where(np.isnan(scores), -np.inf, scores), axis=1, keepdims=True)
            top_changed = (sub_top != full_top[None, :]).any(axis=1)
            stats = _masked_stats(ranks)
            rank_range = stats["max"] - stats["min"]
            mean, low, high = _mean_interval(taus, confidence)
            summary_rows.append({
                "method": method, "size": size.label, "raters": size.raters, "fraction": size.fraction,
                "repetitions": repetitions, "tau_mean": mean, "tau_ci_low": low, "tau_ci_high": high,
                "tau_sd": float(taus[np.isfinite(taus)].std(ddof=1)) if np.isfinite(taus).sum() > 1 else np.nan,
                "tau_p025": _percentile(taus, 0.025), "tau_p975": _percentile(taus, 0.975),
                "tau_undefined": int((~np.isfinite(taus)).sum()),
                "mean_rank_sd": _nanmean(stats["sd"]), "mean_rank_range": _nanmean(rank_range),
                "p_top_change": float(top_changed.mean()),
                "responses_dropped_mean": float(dropped.mean()), "responses_dropped_max": int(dropped.max()),
                "agents_missing": int(missing_per_rep.sum()),
            })
            agent_frames.append(pd.DataFrame({
                "method": method, "size": size.label, "raters": size.raters, "agent": agents,
                "full_score": reference, "full_rank": competition_ranks(reference),
                "mean_rank": stats["mean"], "rank_sd": stats["sd"], "rank_min": stats["min"],
                "rank_max": stats["max"], "rank_range": rank_range, "missing": stats["missing"],
            }))
            rep_frames.append(pd.DataFrame({
                "method": method, "size": size.label, "raters": size.raters, "repetition": np.arange(len(block)),
                "tau_b": taus, "top_changed": top_changed, "agents_missing": missing_per_rep,
                "responses_dropped": dropped,
            }))

    full_frame = pd.concat([
        pd.DataFrame({"method": method, "agent": agents, "score": full[:, j], "rank": competition_ranks(full[:, j])})
        for j, method in enumerate(chosen)
    ], ignore_index=True)
    return StabilityResult(
        summary=pd.DataFrame(summary_rows),
        agents=pd.concat(agent_frames, ignore_index=True),
        repetitions=pd.concat(rep_frames, ignore_index=True),
        subsets=pd.DataFrame(subset_rows, columns=["size", "raters", "repetition", "drawn"]),
        full_scores=full_frame,
        dataset=table.summary(),
        settings={
            "methods": [METHOD_LABELS[m] for m in chosen],
            "sizes": [{"size": s.label, "raters": s.raters} for s in resolved],
            "repetitions": repetitions,
            "seed": seed,
            "jobs": jobs,
            "confidence": confidence,
            "interval": "Student-t interval for the mean tau-b over repetitions",
            "ties": options.ties,
            "alpha_mu": options.alpha_mu,
            "alpha_pi": options.alpha_pi,
            "epsilon": options.epsilon,
            "tol": options.tol,
            "max_iter": options.max_iter,
        },
        replicates=replicates,
    )


# ====================================================================================== plot
def stability_figure(result: StabilityResult) -> Figure:
    """Mean tau-b against subset size (raters), one line per method with its confidence band."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.2), dpi=120)
    axes = figure.add_subplot()
    level = round(float(result.settings["confidence"]) * 100)
    for method in result.methods:
        rows = result.summary[result.summary["method"] == method].sort_values("raters")
        x = rows["raters"].to_numpy()
        line = axes.plot(x, rows["tau_mean"], marker="o", label=METHOD_LABELS[method])[0]
        axes.fill_between(x, rows["tau_ci_low"].to_numpy(dtype=float), rows["tau_ci_high"].to_numpy(dtype=float),
                          color=line.get_color(), alpha=0.2, linewidth=0)
    total = result.dataset["raters"]
    axes.set_title(f"Ranking stability under rater subsampling\n({result.settings['repetitions']} subsets per size, "
                   f"{level}% CI of the mean)")
    axes.set_xlabel(f"raters in subset (count, of {total})")
    axes.set_ylabel("Kendall τ-b with the all-rater ranking (unitless)")
    lows = result.summary[["tau_mean", "tau_ci_low"]].to_numpy(dtype=float)
    lows = lows[np.isfinite(lows)]
    axes.set_ylim(max(-1.05, (float(lows.min()) if lows.size else 0.0) - 0.05), 1.02)
    axes.grid(alpha=0.3)
    axes.legend(title="method")
    figure.tight_layout()
    return figure


def plot_stability(result: StabilityResult, path: str | os.PathLike[str]) -> Path:
    """Save :func:`stability_figure` to ``path`` (format from the suffix: .png, .svg, .pdf)."""
    target = Path(path)
    suffix = target.suffix.lower().lstrip(".")
    if suffix not in ("png", "svg", "pdf"):
        raise ValueError(f"plot file {str(target)!r} has an unsupported suffix; allowed: .png, .svg, .pdf")
    stability_figure(result).savefig(target, format=suffix)
    return target
