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
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import records
from stableval.aggregate import Aggregator
from stableval.aggregate.registry import Chosen, method_label, resolve_methods
from stableval.console import Displayed
from stableval.data.table import AnnotationTable, JudgmentTable
from stableval.evaluate.credit import credits_by_method
from stableval.evaluate.intervals import nan_quantile, t_interval
from stableval.evaluate.rank_correlation import SCORE_DECIMALS
from stableval.evaluate.scores import agent_means, competition_ranks
from stableval.parallel import make_executor
from stableval.progress import progress_bar
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

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
        resolved.setdefault(m, SubsetSize(label=label, raters=m,
                                          fraction=fraction if fraction is not None else m / n_raters))
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


def _agent_scores(table: JudgmentTable, methods: Sequence[Chosen]) -> np.ndarray:
    """(A, methods) mean item credit per agent, every method fit on ``table`` (on its Dask cluster for a
    partitioned table: :meth:`Chosen.fit <stableval.aggregate.registry.Chosen.fit>`); NaN for agents without
    responses."""
    fitted = {chosen.key: chosen.fit(table) for chosen in methods}
    credits = credits_by_method(fitted, table.credit)
    return np.round(agent_means(credits, table.response_agent, table.n_agents), SCORE_DECIMALS)


#: one repetition's outcome: the drawn rater codes, the (A, methods) agent scores, the responses kept
Outcome = tuple[np.ndarray, np.ndarray, int]


@dataclass(frozen=True, eq=False)
class _SubsetTask:
    """Repetitions of one subset size, run by one worker (picklable: the table travels once per task)."""

    table: AnnotationTable
    methods: tuple[Chosen, ...]
    entropy: int | Sequence[int]
    raters: int
    repetitions: tuple[int, ...]


def _run_subsets(task: _SubsetTask) -> list[Outcome]:
    """Draw m raters for each repetition of the task and refit every method on their judgments."""
    table = task.table
    out: list[Outcome] = []
    for repetition in task.repetitions:
        out.append(_one_subset(table, task.methods, task.entropy, task.raters, repetition))
    return out


def _rater_order(table: JudgmentTable) -> np.ndarray:
    """The raters in the order of what they said (their count of each level; ties in table order), so the subsets
    drawn do not depend on the raters' names (in memory and on Dask alike).

    >>> import pandas as pd
    >>> t = AnnotationTable.from_frame(pd.DataFrame({"item": [1, 1, 2], "agent": "A", "rater": ["a", "b", "b"],
    ...                                              "label": [1, 0, 0]}), levels=("0", "1"))
    >>> _rater_order(t).tolist()
    [0, 1]
    """
    counts = table.rater_level_counts()
    return np.lexsort(tuple(counts[:, j] for j in reversed(range(counts.shape[1]))))


def _one_subset(table: JudgmentTable, methods: Sequence[Chosen], entropy: int | Sequence[int],
                raters: int, repetition: int) -> Outcome:
    """Draw the m raters of one repetition and refit every method on their judgments."""
    rng = np.random.default_rng(_subset_seed(entropy, raters, repetition))
    drawn = np.sort(_rater_order(table)[rng.choice(table.n_raters, size=raters, replace=False)])
    chosen = np.zeros(table.n_raters, dtype=bool)
    chosen[drawn] = True
    sub = table.keep_raters(chosen)
    return drawn, _agent_scores(sub, methods), sub.n_responses


def _partitioned_subsets(table: JudgmentTable, methods: Sequence[Chosen], sizes: Sequence[SubsetSize],
                         repetitions: int, entropy: int | Sequence[int], progress: bool) -> list[list[Outcome]]:
    """Every repetition of every size on a partitioned table, one after another: each subset is filtered on the
    workers and each fit is spread over the partitions (the judgments never come to this process)."""
    out: list[list[Outcome]] = []
    with progress_bar("rater subsets (dask)", total=len(sizes) * repetitions, enabled=progress,
                      lines=True) as bar:
        for size in sizes:
            block = []
            for repetition in range(repetitions):
                block.append(_one_subset(table, methods, entropy, size.raters, repetition))
                bar.advance()
            out.append(block)
    return out


def _all_subsets(table: AnnotationTable, methods: Sequence[Chosen], sizes: Sequence[SubsetSize], repetitions: int,
                 entropy: int | Sequence[int], jobs: int, progress: bool) -> list[list[Outcome]]:
    """Every repetition of every size (outer list: sizes), on ``jobs`` processes via :mod:`stableval.parallel`.

    Serially each task is one repetition; in parallel the repetitions are cut into a few chunks per worker so the
    table is sent to the workers a few times, not once per repetition.
    """
    chunk = 1 if jobs == 1 else max(1, math.ceil(len(sizes) * repetitions / (4 * jobs)))
    tasks = [_SubsetTask(table, tuple(methods), entropy, size.raters, tuple(range(start, min(repetitions,
                                                                                              start + chunk))))
             for size in sizes for start in range(0, repetitions, chunk)]
    results: list[list[Outcome]] = [[] for _ in tasks]
    with progress_bar("rater subsets", total=len(sizes) * repetitions, enabled=progress, lines=True) as bar, \
            make_executor(jobs=min(jobs, len(tasks)), preload=("stableval.evaluate.stability",)) as executor:
        for index, outcome in executor.map_unordered(_run_subsets, tasks):
            results[index] = outcome
            bar.advance(len(outcome))
    per_size = len(tasks) // len(sizes)
    return [[o for part in results[s * per_size:(s + 1) * per_size] for o in part] for s in range(len(sizes))]


# ====================================================================================== result
@dataclass(frozen=True)
class StabilityResult(Displayed):
    """Result of :func:`ranking_stability`.

    Attributes:
        summary: one row per (method, size): ``method, size, raters, fraction`` (the size as a fraction, as its
            label says: ``25%`` is 0.25 even where round(0.25 · R) raters are a slightly different share; a count
            gives raters / all raters), ``repetitions, tau_mean,
            tau_ci_low, tau_ci_high`` (Student-t interval for the mean over repetitions), ``tau_sd, tau_p025,
            tau_p975`` (spread of tau-b across subsets), ``tau_undefined`` (repetitions where tau-b is not
            defined: fewer than 2 agents scored, or all scores tied on one side), ``mean_rank_sd,
            mean_rank_range`` (per-agent rank SD and max − min over repetitions, averaged over agents),
            ``p_top_change`` (share of repetitions whose set of rank-1 agents differs from the full data's),
            ``responses_dropped_mean, responses_dropped_max`` (responses left without judgments),
            ``agents_missing`` (repetitions × agents with no response left in the subset), ``trivial`` (2 agents,
            or every rater: the tau-b says nothing; why in ``settings["trivial"]``).
        agents: one row per (method, size, agent): ``method, size, raters, agent, full_score, full_rank,
            mean_rank, rank_sd, rank_min, rank_max, rank_range, missing``.
        repetitions: one row per (method, size, repetition): ``method, size, raters, repetition, tau_b,
            top_changed, agents_missing, responses_dropped``.
        subsets: one row per (size, repetition): ``size, raters, repetition, drawn`` (tuple of rater names).
        full_scores: one row per (method, agent): ``method, agent, score, rank`` from all raters.
        dataset: counts from :meth:`AnnotationTable.summary`.
        settings: method labels, sizes, repetitions, seed, jobs, confidence and ``params`` (every method's
            hyper-parameters).
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
            "full_scores": records(self.full_scores),
            "summary": records(self.summary),
            "agents": records(self.agents),
            "repetitions": records(self.repetitions),
            "subsets": records(subsets),
        }

    def to_frame(self) -> pd.DataFrame:
        """The summary: one row per (method, size)."""
        return self.summary

    def render(self, console: Console) -> None:
        """Per subset size and method: mean tau-b with its interval, rank spread, P(top agent changes)."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        data, settings = self.dataset, self.settings
        console.print(f"[bold]{literal(data['source'])}[/]: {plural(data['judgments'], 'judgment')} of "
                      f"{plural(data['responses'], 'response')} ({plural(data['agents'], 'agent')}) by "
                      f"{plural(data['raters'], 'rater')}")
        for note in data["notes"]:
            console.print(f"  note: {literal(note)}")
        level = round(settings["confidence"] * 100)
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title=f"Ranking stability: Kendall tau-b against all {plural(data['raters'], 'rater')} "
                            f"({settings['repetitions']} subsets per size)")
        table.add_column("Subset")
        table.add_column("Measure")
        methods = self.methods
        for method in methods:
            table.add_column(method_label(method), justify="right")
        summary = self.summary.set_index(["raters", "method"])
        for size in settings["sizes"]:
            m = size["raters"]
            rows = {method: summary.loc[(m, method)] for method in methods}
            first = next(iter(rows.values()))
            label = f"{size['size']} ({_raters(m)})" if size["size"].endswith("%") else _raters(m)
            dropped = f"{first['responses_dropped_mean']:.1f} (max {int(first['responses_dropped_max'])})"
            table.add_row(label, f"tau-b [{level}% CI]", *[_tau_cell(rows[method]) for method in methods])
            table.add_row("", "mean rank SD", *[f"{rows[method]['mean_rank_sd']:.2f}" for method in methods])
            table.add_row("", "mean rank range", *[f"{rows[method]['mean_rank_range']:.2f}" for method in methods])
            table.add_row("", "P(top agent changes)", *[f"{rows[method]['p_top_change']:.2f}" for method in methods])
            table.add_row("", "responses dropped", *([dropped] * len(methods)), end_section=True)
        console.print(table)
        console.print(f"tau-b: scipy's Kendall tau-b between agent scores from all raters and from the subset; "
                      f"{level}% Student-t interval for the mean over repetitions. Rank SD and range (max − min) are "
                      f"per agent over repetitions, averaged over agents. Seed {settings['seed']}.")
        for row in self.summary[self.summary["tau_undefined"] > 0].itertuples(index=False):
            console.print(f"[yellow]note:[/] {method_label(str(row.method))} at {_raters(int(str(row.raters)))}: "
                          f"tau-b undefined in {row.tau_undefined} of {row.repetitions} subsets (all scores tied or "
                          f"< 2 agents scored); left out of the mean.")
        for note in settings.get("trivial", []):
            console.print(f"[bold yellow]trivial:[/] {note}.")
        missing = self.summary[self.summary["agents_missing"] > 0].drop_duplicates("raters")
        for row in missing.itertuples(index=False):
            console.print(f"[yellow]note:[/] at {_raters(int(str(row.raters)))}, {row.agents_missing} (subset, agent) "
                          f"cases had no response left; those agents are left out of tau-b and ranks in those subsets.")


def _raters(count: int) -> str:
    """'1 rater', '3 raters'."""
    return f"{count:,} rater" + ("" if count == 1 else "s")


def _tau_cell(row: Any) -> str:
    mean, low, high = row["tau_mean"], row["tau_ci_low"], row["tau_ci_high"]
    if mean != mean:
        return "undefined"
    if low != low:
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


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


# ====================================================================================== the analysis
def ranking_stability(
    table: JudgmentTable,
    methods: Iterable[str | Aggregator | Chosen] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    sizes: Sequence[float | int | str] = DEFAULT_SIZES,
    repetitions: int = 50,
    seed: int | None = 0,
    jobs: int = 1,
    confidence: float = 0.95,
    progress: bool = False,
) -> StabilityResult:
    """Expected Kendall tau-b between the full-data ranking and rankings from random rater subsets.

    Args:
        table: the annotation table, or a :class:`~stableval.data.partitioned.PartitionedTable` whose judgments
            stay on a Dask cluster (every subset is filtered and refit there, one after another; majority vote,
            Dawid–Skene and STABLEVAL only; ``jobs`` is not used).
        methods: method names and/or estimator instances (default: the registry's default methods); each is
            refit on every subset.
        params: hyper-parameters per method name, e.g. ``{"stableval": {"alpha_pi": 2.0}}``.
        sizes: subset sizes: fractions of the raters (floats in (0, 1], or strings like ``"25%"``) and/or whole
            rater counts (ints). Default 25%, 50% and 75%.
        repetitions: subsets drawn per size (R, default 50).
        seed: seed; the subset of repetition r at size m is drawn from ``SeedSequence(seed, spawn_key=(m, r))``,
            so results do not depend on ``jobs`` nor on which other sizes are asked for.
        jobs: worker processes (1 = in this process; 0 or less = one per CPU core).
        confidence: level of the interval for the mean tau-b.
        progress: show a progress bar over the repetitions on stderr.

    Agents with no response left in a subset are left out of that repetition's tau-b (computed over the agents
    scored in both rankings), get no rank in it, and are counted in ``agents_missing``.
    """
    chosen = resolve_methods(methods, params)
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
        raise ValueError(f"seed must be a whole number >= 0 or None, got {seed!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    resolved = resolve_sizes(sizes, table.n_raters)
    entropy: int | Sequence[int] = np.random.SeedSequence(seed).entropy  # type: ignore[assignment]
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    if not isinstance(table, AnnotationTable):  # refused before the first fit, not after it
        for method in chosen:
            method.method.check_distributed()
    full = _agent_scores(table, chosen)  # (A, methods)
    if isinstance(table, AnnotationTable):
        outcomes = _all_subsets(table, chosen, resolved, repetitions, entropy, jobs, progress)
    else:  # every subset filtered and every fit spread over the cluster, one after another
        outcomes = _partitioned_subsets(table, chosen, resolved, repetitions, entropy, progress)
        jobs = 1
    agents = [str(a) for a in table.agents]
    raters = np.asarray(table.raters, dtype=object)
    summary_rows: list[dict[str, Any]] = []
    agent_frames: list[pd.DataFrame] = []
    rep_frames: list[pd.DataFrame] = []
    subset_rows: list[dict[str, Any]] = []
    replicates: dict[tuple[str, int], np.ndarray] = {}
    for size, block in zip(resolved, outcomes, strict=True):
        dropped = np.array([table.n_responses - kept for _, _, kept in block])
        subset_rows += [{"size": size.label, "raters": size.raters, "repetition": rep,
                         "drawn": tuple(str(name) for name in raters[drawn])}
                        for rep, (drawn, _, _) in enumerate(block)]
        for j, method in enumerate(chosen):
            scores = np.stack([outcome[1][:, j] for outcome in block])  # (reps, A)
            replicates[(method.key, size.raters)] = scores
            summary, per_agent, per_rep = _size_tables(method.key, size, full[:, j], scores, dropped, agents,
                                                       confidence, table.n_raters)
            summary_rows.append(summary)
            agent_frames.append(per_agent)
            rep_frames.append(per_rep)
    full_frame = pd.concat([
        pd.DataFrame({"method": method.key, "agent": agents, "score": full[:, j],
                      "rank": competition_ranks(full[:, j])})
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
            "methods": [method.label for method in chosen],
            "sizes": [{"size": s.label, "raters": s.raters} for s in resolved],
            "repetitions": repetitions,
            "seed": seed,
            "jobs": jobs,
            "confidence": confidence,
            "interval": "Student-t interval for the mean tau-b over repetitions",
            "params": {method.key: method.estimator.get_params() for method in chosen},
            "trivial": trivial_results(table.n_agents, table.n_raters, resolved),
        },
        replicates=replicates,
    )


def trivial_results(n_agents: int, n_raters: int, sizes: Sequence[SubsetSize]) -> list[str]:
    """Why some stability numbers say nothing: 2 agents (tau-b can only be +1 or -1), or a subset size that takes
    every rater (each subset is the full data, so tau-b is 1 by construction).

    >>> trivial_results(2, 4, [SubsetSize("100%", 4, 1.0)])  # doctest: +NORMALIZE_WHITESPACE
    ['only 2 agents: tau-b can only be +1 (same order) or -1 (swapped), so its mean is the share of subsets that
    keep the order, rescaled to -1..1', 'subset size 100% takes all 4 raters: every subset is the full data and
    tau-b is 1 by construction']
    """
    notes = []
    if n_agents == 2:
        notes.append("only 2 agents: tau-b can only be +1 (same order) or -1 (swapped), so its mean is the share of "
                     "subsets that keep the order, rescaled to -1..1")
    notes += [f"subset size {size.label} takes all {n_raters} raters: every subset is the full data and tau-b is 1 "
              "by construction" for size in sizes if size.raters >= n_raters]
    return notes


def _size_tables(method: str, size: SubsetSize, reference: np.ndarray, scores: np.ndarray, dropped: np.ndarray,
                 agents: list[str], confidence: float, n_raters: int
                 ) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """One method at one subset size: its summary row, its per-agent rank table and its per-repetition table,
    from the all-rater scores ``reference`` (A,) and the subsets' scores (repetitions, A)."""
    taus = np.round([kendall_tau_b(reference, row) for row in scores], SCORE_DECIMALS)
    ranks = competition_ranks(scores).astype(float)
    ranks[np.isnan(scores)] = np.nan
    missing_per_rep = np.isnan(scores).sum(axis=1)
    full_top = reference == np.nanmax(reference)
    sub_top = scores == np.nanmax(np.where(np.isnan(scores), -np.inf, scores), axis=1, keepdims=True)
    top_changed = (sub_top != full_top[None, :]).any(axis=1)
    stats = _masked_stats(ranks)
    rank_range = stats["max"] - stats["min"]
    interval = t_interval(taus, confidence)
    summary = {
        "method": method, "size": size.label, "raters": size.raters, "fraction": size.fraction,
        "repetitions": len(scores), "tau_mean": interval.mean,
        "tau_ci_low": max(-1.0, interval.low) if interval.n > 1 else np.nan,
        "tau_ci_high": min(1.0, interval.high) if interval.n > 1 else np.nan,
        "tau_sd": interval.sd, "tau_p025": nan_quantile(taus, 0.025), "tau_p975": nan_quantile(taus, 0.975),
        "tau_undefined": int((~np.isfinite(taus)).sum()),
        "mean_rank_sd": _nanmean(stats["sd"]), "mean_rank_range": _nanmean(rank_range),
        "p_top_change": float(top_changed.mean()),
        "responses_dropped_mean": float(dropped.mean()), "responses_dropped_max": int(dropped.max()),
        "agents_missing": int(missing_per_rep.sum()),
        "trivial": size.raters >= n_raters or len(agents) == 2,
    }
    per_agent = pd.DataFrame({
        "method": method, "size": size.label, "raters": size.raters, "agent": agents,
        "full_score": reference, "full_rank": competition_ranks(reference),
        "mean_rank": stats["mean"], "rank_sd": stats["sd"], "rank_min": stats["min"],
        "rank_max": stats["max"], "rank_range": rank_range, "missing": stats["missing"],
    })
    per_rep = pd.DataFrame({
        "method": method, "size": size.label, "raters": size.raters, "repetition": np.arange(len(scores)),
        "tau_b": taus, "top_changed": top_changed, "agents_missing": missing_per_rep,
        "responses_dropped": dropped,
    })
    return summary, per_agent, per_rep
