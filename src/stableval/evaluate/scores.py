"""Agent scores with bootstrap confidence intervals, rank intervals and pairwise win probabilities.

The score of an agent is the mean item credit over its responses (Bonagiri et al. 2026, Section 3.5). Its
uncertainty comes from the percentile bootstrap over the agent's responses (Efron & Tibshirani 1993, ch. 13;
Algorithm 1, lines 18–21): every replicate resamples each agent's responses with replacement. By default the
fitted credits are resampled (fast, fully vectorised); ``refit=True`` re-runs each aggregation on every
replicate's judgments, so the uncertainty of the rater model is included too.

Bootstrap draws are reproducible from ``seed`` and do not depend on row order or on the names of items and
raters: each agent's responses are put in the order of their credits before drawing.

When majority vote (the registry's first method) and the headline method (STABLEVAL) are both scored,
:meth:`AgentScores.comparison` compares them as the STABLEVAL paper's tables do (:func:`compare_methods`): the
change per agent, the Pearson and Spearman correlation of their agent scores, the largest change and the rank
changes.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 2, 2, 1, 1, 2, 2], "agent": list("AABBCCDD"), "rater": list("abababab"),
...                       "label": [1, 1, 0, 0, 1, 0, 1, 1]})
>>> result = score_agents(AnnotationTable.from_frame(frame, levels=("no", "yes")), methods=["mv"], bootstrap=200)
>>> result.scores[["agent", "score", "rank"]].to_dict("list")
{'agent': ['A', 'B', 'C', 'D'], 'score': [1.0, 0.0, 0.5, 1.0], 'rank': [1, 4, 3, 1]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import matrix, records
from stableval.aggregate import Aggregator
from stableval.aggregate.registry import (
    Chosen,
    convergence_warnings,
    method_base,
    method_label,
    method_names,
    primary_method,
    resolve_methods,
    spell_setting,
)
from stableval.console import Displayed
from stableval.data.labels import credit_text
from stableval.data.table import AnnotationTable, JudgmentTable
from stableval.errors import StableValError
from stableval.evaluate.credit import credits_by_method
from stableval.evaluate.intervals import nan_quantile
from stableval.evaluate.resample import DEFAULT_BINS, bin_credits_by_group, multinomial_means
from stableval.progress import progress_bar
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.table import Table

#: upper bound on resampled indices held in memory at once (per chunk of replicates)
_CHUNK_CELLS = 4_000_000
#: agents with more responses than this are resampled as multinomial draws over their (binned) credits
MULTINOMIAL_ABOVE = 5_000
#: how many more E-steps a fit that stopped at its cap is run, to show how far its scores would still move
EXTRA_ITERATIONS = 50
#: why ``refit=True`` needs the judgments in memory (a partitioned table refuses it with this reason)
REFIT_IN_MEMORY = ("a refit per bootstrap replicate would fit every method on the cluster again B times; the "
                   "bootstrap over the fitted credits is used instead")


@dataclass(frozen=True)
class AgentScores(Displayed):
    """Result of :func:`score_agents`.

    Attributes:
        scores: one row per (method, agent): ``method, agent, score, ci_low, ci_high, rank, rank_low,
            rank_high, responses, judgments``. Rank 1 is best; tied scores share the best rank; the rank
            interval is the central ``confidence`` interval of the agent's rank over bootstrap replicates.
        win_probability: per method, an agents × agents frame: P(row agent scores above column agent) over
            the bootstrap replicates (exact ties count one half).
        replicates: per method, the (B, A) bootstrap scores (columns in ``agents`` order).
        item_credit: one row per response: ``item, agent, judgments`` and a credit column per method.
        agents: agent names, in the column order of ``replicates``.
        dataset: counts from :meth:`AnnotationTable.summary`.
        fits: per EM method: ``n_iter``, ``converged``, final ``log_likelihood`` and ``objective``.
        settings: method labels, bootstrap size, seed, confidence, refit flag, and ``params``: every method's
            hyper-parameters (``{method: estimator.get_params()}``).
        posteriors: per method, the (N, K) distribution over levels per response that the method reports
            (its ``posteriors_``: for majority vote the tie-broken hard vote, one-hot or split over a tie; for
            Dawid–Skene and STABLEVAL the posteriors), rows in ``item_credit`` order — what accuracy against
            gold labels scores (argmax level) and "expected accuracy" averages (the probability of the gold
            level), the same way for every method.
    """

    scores: pd.DataFrame
    win_probability: dict[str, pd.DataFrame]
    replicates: dict[str, np.ndarray]
    item_credit: pd.DataFrame
    agents: list[str]
    dataset: dict[str, Any]
    fits: dict[str, dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    posteriors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def methods(self) -> list[str]:
        return list(self.replicates)

    def leaderboard(self) -> pd.DataFrame:
        """Wide table: one row per agent, ``score/ci_low/ci_high/rank`` per method, best first."""
        wide = self.scores.pivot(index="agent", columns="method",
                                 values=["score", "ci_low", "ci_high", "rank", "rank_low", "rank_high"])
        wide.columns = pd.Index([f"{pair[1]}_{pair[0]}" for pair in wide.columns.to_flat_index()])
        counts = self.scores.drop_duplicates("agent").set_index("agent")[["responses", "judgments"]]
        wide = counts.join(wide)
        sort_method = primary_method(self.methods)
        ordered = wide.sort_values([f"{sort_method}_score"], ascending=False, kind="stable")
        return ordered.reset_index()

    def display_frame(self) -> pd.DataFrame:
        """The leaderboard as text cells for people: ``Agent, Responses``, then per method
        ``"0.804 [0.733, 0.861]"`` and ``"1 (1–2)"`` (rank and rank interval), best first."""
        board = self.leaderboard()
        confidence = round(self.settings.get("confidence", 0.95) * 100)
        boot = bool(self.settings.get("bootstrap"))
        out = pd.DataFrame({"Agent": board["agent"].astype(str), "Responses": board["responses"].map("{:,}".format)})
        for method in self.methods:
            label = method_label(method)
            score = board[f"{method}_score"].map("{:.3f}".format)
            if boot:
                score = score + " [" + board[f"{method}_ci_low"].map("{:.3f}".format) + ", " + board[
                    f"{method}_ci_high"].map("{:.3f}".format) + "]"
            out[f"{label} [{confidence}% CI]" if boot else label] = score
            rank, low, high = (board[f"{method}_{k}"].astype(int) for k in ("rank", "rank_low", "rank_high"))
            interval = " (" + low.astype(str) + "–" + high.astype(str) + ")"
            out[f"{label} rank"] = rank.astype(str) + interval.where(boot & (low != high), "")
        return out

    def comparison(self) -> MethodComparison | None:
        """The headline method against the baseline, paper-style (:func:`compare_methods`), or ``None`` when the
        results do not hold both (:func:`comparison_pair`)."""
        pair = comparison_pair(self.methods)
        return None if pair is None else compare_methods(self.scores, *pair, order=self.leaderboard()["agent"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary of everything but the raw replicates and item credits; ``comparison`` (the
        headline method against majority vote, :meth:`comparison`) when both are among the methods; ``warnings``:
        one sentence per EM fit that stopped at its iteration cap (:func:`convergence_warnings`), else empty."""
        out = {
            "dataset": self.dataset,
            "settings": self.settings,
            "warnings": convergence_warnings(self.fits),
            "fits": self.fits,
            "scores": records(self.scores),
            "win_probability": {method: matrix(frame) for method, frame in self.win_probability.items()},
        }
        comparison = self.comparison()
        if comparison is not None:
            out["comparison"] = comparison.to_dict()
        return out

    def to_frame(self) -> pd.DataFrame:
        """The long table: one row per (method, agent); when the results hold the comparison pair
        (:meth:`comparison`), two more columns compare every row with the baseline's row of the same agent:
        ``score_minus_BASELINE`` (score − the baseline's score) and ``rank_change_vs_BASELINE`` (the baseline's
        rank − this rank: positive = ranked higher than by the baseline), e.g. ``score_minus_mv``. The last column,
        ``converged``, says whether the row's EM fit converged (empty for methods without one)."""
        pair = comparison_pair(self.methods)
        frame = self.scores.copy()
        if pair is not None:
            baseline = pair[1]
            own = self.scores[self.scores["method"] == baseline].set_index("agent")
            agents = frame["agent"]
            frame[f"score_minus_{baseline}"] = frame["score"].to_numpy() - own["score"].reindex(agents).to_numpy()
            frame[f"rank_change_vs_{baseline}"] = own["rank"].reindex(agents).to_numpy() - frame["rank"].to_numpy()
        frame["converged"] = frame["method"].map(
            {method: fit["converged"] for method, fit in self.fits.items() if "converged" in fit}).astype(object)
        return frame

    def render(self, console: Console) -> None:
        """The dataset line, the leaderboard with every method side by side, the headline method against majority
        vote (:meth:`comparison`), and how sure the ranking is."""
        from stableval.markup import literal

        data = self.dataset
        credit = credit_text(data["credit"])
        console.print(
            f"[bold]{literal(data['source'])}[/]: {plural(data['judgments'], 'judgment')} of "
            f"{plural(data['responses'], 'response')} ({plural(data['items'], 'item')} × "
            f"{plural(data['agents'], 'agent')}) by {plural(data['raters'], 'rater')}; "
            f"{data['mean_judgments_per_response']:.2f} judgments per response; levels "
            f"{' < '.join(data['levels'])} (credit {credit})"
        )
        for note in data["notes"]:
            console.print(f"  note: {literal(note)}")
        for table in self._leaderboard_tables(console):
            console.print(table)
        comparison = self.comparison()
        if comparison is not None:
            for line in comparison.lines():
                console.print(literal(line))
        for line in self._footnotes():
            console.print(line)

    def _leaderboard_tables(self, console: Console) -> list[str | Table]:
        """The leaderboard as wide as the console allows: every column side by side (in a file or a pipe, always);
        on a narrow terminal the compact layout, each method's interval under its score and the responses under the
        agent's name; if even that is too wide, a few methods per table."""
        from rich import box
        from rich.table import Table

        from stableval.markup import literal

        def new_table(title: str | None, leading: int = 0) -> Table:
            return Table(box=box.SIMPLE_HEAVY, title=title, title_justify="left", show_edge=False, leading=leading)

        display = self.display_frame()
        full = new_table("Leaderboard (best first)")
        for k, column in enumerate(display.columns):
            full.add_column("rank" if column.endswith(" rank") else column, justify="left" if k == 0 else "right",
                            style="bold" if k == 0 else None)
        for row in display.itertuples(index=False):
            full.add_row(*(literal(cell) for cell in row))

        def fits(table: Table) -> bool:  # its natural width (every cell on one line) fits the console
            return console.measure(table, options=console.options.update_width(10**6)).maximum <= console.width

        if fits(full):
            return [full]
        groups: list[list[str]] = [[]]
        for method in self.methods:  # as many methods per table as fit (at least one)
            trial = self._compact_table(new_table(None), display, [*groups[-1], method])
            if groups[-1] and not fits(trial):
                groups.append([])
            groups[-1].append(method)
        under = f"; {round(self.settings.get('confidence', 0.95) * 100)}% CI under each score" if self.settings.get(
            "bootstrap") else ""
        shown: list[str | Table] = []
        for n, group in enumerate(groups, start=1):  # the title above the table: a narrow table would wrap it
            shown.append(f"Leaderboard (best first{under}{'' if len(groups) == 1 else f'; part {n} of {len(groups)}'})")
            shown.append(self._compact_table(new_table(None, leading=1), display, group))
        return shown

    def _compact_table(self, table: Table, display: pd.DataFrame, methods: list[str]) -> Table:
        """The compact leaderboard of ``methods``: per agent its name over its responses, per method the score and
        rank over the interval."""
        from stableval.markup import literal

        table.add_column("Agent", style="bold")
        for method in methods:
            table.add_column(method_label(method))
        columns = [str(column) for column in display.columns]
        for row in display.to_dict("records"):
            cells = [f"{literal(row['Agent'])}\n[dim]{row['Responses']} responses[/]"]
            for method in methods:
                rank = f"{method_label(method)} rank"
                score, _, interval = str(row[columns[columns.index(rank) - 1]]).partition(" ")
                cells.append(f"{score}  {row[rank]}" + (f"\n{interval}" if interval else ""))
            table.add_row(*cells)
        return table

    def _footnotes(self) -> list[str]:
        from stableval.markup import literal

        settings = self.settings
        lines = []
        if settings["bootstrap"]:
            how = "refitting every method per replicate" if settings["refit"] else "over each agent's responses"
            lines.append(f"{round(settings['confidence'] * 100)}% percentile bootstrap intervals {how} "
                         f"(B={settings['bootstrap']:,}, seed {settings['seed']}); rank intervals in parentheses.")
            if settings.get("bootstrap_se_shortfall"):
                lines.append(f"Agents with over {MULTINOMIAL_ABOVE:,} responses resampled as multinomial draws over "
                             "binned credits: replicate spread within "
                             f"{settings['bootstrap_se_shortfall']:.0e} (relative) of the exact bootstrap's.")
            main = primary_method(self.methods)
            board = self.leaderboard()
            if len(board) >= 2:
                first, second = str(board["agent"].iloc[0]), str(board["agent"].iloc[1])
                p = float(self.win_probability[main].loc[[first], [second]].to_numpy(dtype=float)[0, 0])
                lines.append(f"P({literal(first)} scores above {literal(second)}) = {p:.2f} under "
                             f"{method_label(main)}.")
        for method, fit in self.fits.items():
            raise_cap = spell_setting(method_base(method), "max_iter", "N")
            state = "converged" if fit["converged"] else f"[bold red]did NOT converge[/] (raise {raise_cap})"
            lines.append(f"{method_label(method)}: EM {state} in {fit['n_iter']} iterations, "
                         f"log-likelihood {fit['log_likelihood']:.2f}.")
        lines.extend(f"[bold red]warning:[/] {text}" for text in convergence_warnings(self.fits))
        shown = [f"{method_label(key)} " + ", ".join(f"{name}={value}" for name, value in params.items())
                 for key, params in settings.get("params", {}).items() if params]
        if shown:
            lines.append("Parameters: " + "; ".join(shown) + ".")
        return lines


@dataclass(frozen=True)
class MethodComparison:
    """Two methods' agent scores side by side, as the STABLEVAL paper's tables compare STABLEVAL with majority
    vote (:func:`compare_methods`).

    Attributes:
        method, baseline: the result keys compared (``method − baseline``).
        agents: one row per agent (``order`` given, else the method's best first): ``agent, baseline_score,
            score, change`` (score − baseline_score), ``baseline_rank, rank, rank_change`` (baseline_rank − rank:
            positive = the method ranks the agent higher).
        pearson, spearman: correlation of the two methods' agent scores (Spearman: of their ranks, ties
            averaged); NaN with fewer than 2 agents or when either method gives every agent the same score.
        largest_agent, largest_change: the agent whose score changes most (largest ``|change|``; the first in
            ``agents`` order on ties) and its signed change.
        rank_changes: how many agents the two methods rank differently.
        swapped_pairs: how many pairs of agents the two methods order oppositely (a strict order both ways).
    """

    method: str
    baseline: str
    agents: pd.DataFrame
    pearson: float
    spearman: float
    largest_agent: str
    largest_change: float
    rank_changes: int
    swapped_pairs: int

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "baseline": self.baseline, "pearson": self.pearson,
                "spearman": self.spearman,
                "largest_change": {"agent": self.largest_agent, "change": self.largest_change},
                "rank_changes": self.rank_changes, "swapped_pairs": self.swapped_pairs,
                "agents": records(self.agents)}

    def lines(self) -> list[str]:
        """The comparison for people (printed after the leaderboard): the change per agent, then (with two or more
        agents) the correlations, the largest change and the rank changes."""
        label, base = method_label(self.method), method_label(self.baseline)
        n = len(self.agents)
        changes = ", ".join(f"{agent} {change:+.3f}" for agent, change
                            in zip(self.agents["agent"], self.agents["change"], strict=True))
        lines = [f"{label} − {base} per agent: {changes}."]
        if n >= 2:
            pairs = f"{self.swapped_pairs} pair{'' if self.swapped_pairs == 1 else 's'} swapped"
            lines.append(f"{label} vs {base}: Pearson r = {_fmt(self.pearson)}, Spearman ρ = {_fmt(self.spearman)}; "
                         f"largest change {self.largest_agent} {self.largest_change:+.3f}; {self.rank_changes} of {n} "
                         f"agents ranked differently ({pairs}).")
        return lines


def _fmt(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.3f}"


def comparison_pair(keys: Iterable[str]) -> tuple[str, str] | None:
    """(method, baseline) of the paper-style comparison among result keys: the headline method
    (:func:`~stableval.aggregate.registry.primary_method`, STABLEVAL) against the registry's first method
    (majority vote, the baseline every evaluation starts from); ``None`` when the baseline is missing or is itself
    the headline method.

    >>> comparison_pair(["mv", "ds", "stableval"]), comparison_pair(["ds", "stableval"]), comparison_pair(["mv", "ds"])
    (('stableval', 'mv'), None, None)
    """
    keys = list(keys)
    baseline = method_names()[0]
    if not keys or baseline not in keys:
        return None
    method = primary_method(keys)
    return None if method == baseline else (method, baseline)


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def compare_methods(scores: pd.DataFrame, method: str, baseline: str,
                    order: Sequence[str] | pd.Series | None = None) -> MethodComparison:
    """Compare two methods' agent scores from a long score table (``method, agent, score, rank`` per row, e.g.
    :attr:`AgentScores.scores`): per agent ``method − baseline``, the Pearson and Spearman correlation of the two
    score vectors, the largest change and the rank changes. Agents a method did not score (NaN) are left out.

    >>> frame = pd.DataFrame({"method": ["mv"] * 3 + ["sv"] * 3, "agent": list("ABC") * 2,
    ...                       "score": [0.5, 0.6, 0.1, 0.7, 0.6, 0.2], "rank": [2, 1, 3, 1, 2, 3]})
    >>> c = compare_methods(frame, "sv", "mv")
    >>> c.agents["change"].round(3).tolist(), c.largest_agent, round(c.largest_change, 3), c.rank_changes
    ([0.2, 0.0, 0.1], 'A', 0.2, 2)
    >>> round(c.pearson, 4), c.spearman, c.swapped_pairs  # r = 0.13 / 0.14; rho = 1 - 6 * 2 / (3 * 8)
    (0.9286, 0.5, 1)
    """
    def of(key: str) -> pd.DataFrame:
        rows = scores[scores["method"] == key].set_index("agent")
        if rows.empty:
            raise ValueError(f"no scores of method {key!r}; methods: {', '.join(map(str, scores['method'].unique()))}")
        return rows

    mine, base = of(method), of(baseline)
    agents = [str(a) for a in (order if order is not None else mine.sort_values("score", ascending=False,
                                                                                 kind="stable").index)]
    agents = [a for a in agents if a in mine.index and a in base.index]
    scored = (np.isfinite(base["score"].reindex(agents).to_numpy(dtype=float))
              & np.isfinite(mine["score"].reindex(agents).to_numpy(dtype=float)))
    agents = [a for a, keep in zip(agents, scored, strict=True) if keep]
    x = base["score"].reindex(agents).to_numpy(dtype=float)
    y = mine["score"].reindex(agents).to_numpy(dtype=float)
    base_rank = base["rank"].reindex(agents).to_numpy(dtype=np.int64)
    rank = mine["rank"].reindex(agents).to_numpy(dtype=np.int64)
    change = y - x
    table = pd.DataFrame({"agent": agents, "baseline_score": x, "score": y, "change": change,
                          "baseline_rank": base_rank, "rank": rank, "rank_change": base_rank - rank})
    size = np.abs(change)
    largest = int(np.argmax(size >= size.max() - 1e-12)) if len(agents) else -1  # the first of equal changes
    swapped = int((np.triu(np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :]), 1) < 0).sum())
    return MethodComparison(
        method=method, baseline=baseline, agents=table,
        pearson=_correlation(x, y), spearman=_correlation(average_ranks(x), average_ranks(y)),
        largest_agent=agents[largest] if largest >= 0 else "", largest_change=float(change[largest])
        if largest >= 0 else float("nan"),
        rank_changes=int((rank != base_rank).sum()), swapped_pairs=swapped)


def agent_means(credits: np.ndarray, agent: np.ndarray, n_agents: int) -> np.ndarray:
    """(A, m) mean credit per agent for an (N, m) credit matrix; NaN for agents without responses."""
    counts = np.bincount(agent, minlength=n_agents).astype(float)
    sums = np.stack([np.bincount(agent, weights=credits[:, j], minlength=n_agents)
                     for j in range(credits.shape[1])], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(sums / counts[:, None])


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of a 1-D array in increasing order, tied values sharing the mean of their ranks (the ranks of
    Spearman's rho; ``scipy.stats.rankdata``'s default, without importing scipy.stats: a second on start-up).

    >>> average_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist()
    [2.5, 4.0, 2.5, 1.0]
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]  # the first of each run of equal values
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(first) - 1]  # run i holds ranks starts+1 .. ends
    return ranks


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """Rank 1 = highest score along the last axis; ties share the best rank; NaN scores share the last rank.

    >>> competition_ranks(np.array([0.5, 0.9, 0.5, np.nan])).tolist()
    [2, 1, 2, 4]
    """
    filled = np.where(np.isnan(scores), -np.inf, scores)
    ranks = np.ones(filled.shape, dtype=np.int64)
    for a in range(filled.shape[-1]):  # one vectorised comparison per agent: 1 + how many score higher
        ranks[..., a] += (filled > filled[..., a:a + 1]).sum(axis=-1)
    return ranks


def _agent_rows(agent: np.ndarray, n_agents: int) -> list[np.ndarray]:
    """For each agent, its response indices in table order."""
    small = np.int16 if n_agents <= np.iinfo(np.int16).max else np.int64  # 16-bit keys: a radix sort
    order = np.argsort(agent.astype(small, copy=False), kind="stable")
    bounds = np.searchsorted(agent[order], np.arange(n_agents + 1))
    return [order[bounds[a]:bounds[a + 1]] for a in range(n_agents)]


def _by_credit(rows: np.ndarray, credits: np.ndarray) -> np.ndarray:
    """``rows`` ordered by their credits (so draws ignore names and row order; ties keep table order)."""
    values = credits[rows]
    keys = [np.round(values[:, j], 12) for j in reversed(range(values.shape[1]))]
    return rows[np.lexsort(keys)] if len(rows) else rows


def _agent_streams(seed: int | None, point_scores: np.ndarray) -> list[np.random.Generator]:
    """One independent random stream per agent, assigned in order of the agents' point scores."""
    order = np.lexsort(tuple(np.nan_to_num(point_scores[:, j], nan=-1.0)
                             for j in reversed(range(point_scores.shape[1]))))
    children = np.random.SeedSequence(seed).spawn(len(order))
    streams: list[np.random.Generator] = [np.random.default_rng(0)] * len(order)
    for position, agent in enumerate(order):
        streams[agent] = np.random.default_rng(children[position])
    return streams


def _draw_indices(stream: np.random.Generator, n: int, rows: int) -> np.ndarray:
    return stream.integers(0, n, size=(rows, n), dtype=np.int32 if n < 2**31 else np.int64)


def _resampled_means(stream: np.random.Generator, values: np.ndarray, rows: int) -> np.ndarray:
    """(rows, m) means of ``rows`` with-replacement resamples of ``values`` (n, m), via draw counts."""
    n = len(values)
    idx = _draw_indices(stream, n, rows).astype(np.int64)
    idx += np.arange(rows, dtype=np.int64)[:, None] * n
    counts = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
    return np.asarray(counts @ values) / n


def bootstrap_fixed(credits: np.ndarray, agent: np.ndarray, n_agents: int, n_boot: int,
                    seed: int | None, *, progress: bool = False, multinomial_above: int = MULTINOMIAL_ABOVE,
                    max_bins: int = DEFAULT_BINS) -> tuple[np.ndarray, float]:
    """(B, A, m) replicate agent means, resampling each agent's response credits with replacement, and the largest
    relative shortfall of a replicate standard deviation against the exact bootstrap's (0 when every replicate is
    an exact bootstrap draw).

    An agent with at most ``multinomial_above`` responses is resampled row by row: each chunk of replicates is one
    bincount of the draws and one BLAS product of the draw counts with the credits, so no (B, n, m) array is ever
    built. A larger agent is resampled per method as multinomial draws over its distinct (or binned) credits
    (:mod:`stableval.evaluate.resample`): O(B · bins) whatever n is.
    """
    m = credits.shape[1]
    point = agent_means(credits, agent, n_agents)
    streams = _agent_streams(seed, point)
    out = np.full((n_boot, n_agents, m), np.nan)
    sizes = np.bincount(agent, minlength=n_agents)
    large = sizes > multinomial_above
    binned = [bin_credits_by_group(credits[:, j], agent, n_agents, max_bins) for j in range(m)] if large.any() else []
    rows = _agent_rows(agent, n_agents) if (~large & (sizes > 0)).any() else []
    shortfall = max((binned[j][a].se_shortfall for j in range(m) for a in np.flatnonzero(large)), default=0.0)
    with progress_bar("bootstrap", total=n_agents * n_boot, enabled=progress) as bar:
        for a in range(n_agents):
            if large[a]:
                for j in range(m):
                    chunk = max(1, _CHUNK_CELLS // len(binned[j][a].values))
                    for start in range(0, n_boot, chunk):
                        stop = min(n_boot, start + chunk)
                        out[start:stop, a, j] = multinomial_means(streams[a], binned[j][a], stop - start)
                        if j == m - 1:
                            bar.advance(stop - start)
            elif sizes[a]:
                values = credits[_by_credit(rows[a], credits)]
                chunk = max(1, _CHUNK_CELLS // len(values))
                for start in range(0, n_boot, chunk):
                    stop = min(n_boot, start + chunk)
                    out[start:stop, a, :] = _resampled_means(streams[a], values, stop - start)
                    bar.advance(stop - start)
            else:
                bar.advance(n_boot)
    return out, shortfall


def bootstrap_refit(table: AnnotationTable, methods: Sequence[Chosen], credits: np.ndarray, n_boot: int,
                    seed: int | None, *, progress: bool = False) -> np.ndarray:
    """(B, A, m) replicate agent means, re-fitting every method on each replicate's resampled responses.

    A per-response method (registry ``batch="stacked"``, e.g. majority vote) gives every response the same label
    whichever other responses are drawn, so its replicates reuse the point fit's credits (refitting a bare matrix
    would lose what only the table knows, such as the file order behind ``ties="first"``).
    """
    n_agents = table.n_agents
    point = agent_means(credits, table.response_agent, n_agents)
    orders = [_by_credit(rows, credits) for rows in _agent_rows(table.response_agent, n_agents)]
    streams = _agent_streams(seed, point)
    X = table.response_matrix()
    refitted = [j for j, chosen in enumerate(methods) if chosen.method.batch != "stacked"]
    out = np.full((n_boot, n_agents, len(methods)), np.nan)
    with progress_bar("bootstrap (refit)", total=n_boot, enabled=progress) as bar:
        for b in range(n_boot):
            rows = np.concatenate([orders[a][_draw_indices(streams[a], len(orders[a]), 1)[0]]
                                   for a in range(n_agents)])
            X_b = X[rows]
            replicate_credit = credits[rows].copy()
            if refitted:
                fitted = {methods[j].key: methods[j].build().fit_matrix(X_b, table.n_raters, table.n_levels)
                          for j in refitted}
                replicate_credit[:, refitted] = credits_by_method(fitted, table.credit)
            out[b] = agent_means(replicate_credit, table.response_agent[rows], n_agents)
            bar.advance()
    return out


def score_agents(
    table: JudgmentTable,
    methods: Iterable[str | Aggregator | Chosen] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    bootstrap: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    refit: bool = False,
    progress: bool = False,
) -> AgentScores:
    """Score every agent under each method, with bootstrap CIs, rank intervals and win probabilities.

    Args:
        table: the annotation table, or a table partitioned over a Dask cluster
            (:class:`~stableval.data.partitioned.PartitionedTable`: every method is fitted there, and only its
            per-response results come back; see :data:`REFIT_IN_MEMORY`).
        methods: method names (``"mv"``, ``"ds"``, ``"stableval"``, ... see
            :func:`stableval.aggregate.method_names`) and/or estimator instances such as
            ``MajorityVote(ties="lowest")``; default: the registry's default methods.
        params: hyper-parameters per method name, e.g. ``{"stableval": {"alpha_pi": 2.0}}``.
        bootstrap: number of bootstrap replicates B (0 = no intervals).
        seed: seed of the bootstrap.
        confidence: level of the percentile intervals.
        refit: re-run the aggregation on every replicate (slower; includes rater-model uncertainty).
        progress: show progress bars on stderr.
    """
    chosen = resolve_methods(methods, params)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be a whole number >= 0 or None, got {seed}")
    in_memory = isinstance(table, AnnotationTable)
    if refit and bootstrap and not in_memory:
        raise StableValError(f"refit=True is not supported on a partitioned table: {REFIT_IN_MEMORY}")
    credits, posteriors, fits = _fit_all(table, chosen, progress)
    n_agents = table.n_agents
    point = agent_means(credits, table.response_agent, n_agents)
    se_shortfall = 0.0
    if not bootstrap:
        reps = np.full((0, n_agents, len(chosen)), np.nan)
    elif refit:
        assert isinstance(table, AnnotationTable)
        reps = bootstrap_refit(table, chosen, credits, bootstrap, seed, progress=progress)
    else:
        reps, se_shortfall = bootstrap_fixed(credits, table.response_agent, n_agents, bootstrap, seed,
                                                 progress=progress)
    agents = [str(a) for a in table.agents]
    rows, win_probability, replicates = _summarise_replicates(table, list(fits), point, reps, confidence)
    item_frame = table.response_frame()
    for j, key in enumerate(fits):
        item_frame[key] = credits[:, j]
    return AgentScores(
        scores=pd.concat(rows, ignore_index=True),
        win_probability={key: pd.DataFrame(win, index=agents, columns=agents) for key, win in win_probability.items()},
        replicates=replicates,
        item_credit=item_frame,
        agents=agents,
        dataset=table.summary(),
        fits=_fit_summaries(table, fits, point),
        posteriors=posteriors,
        settings={
            "methods": [c.label for c in chosen],
            "bootstrap": bootstrap,
            "seed": seed,
            "confidence": confidence,
            "refit": refit,
            "bootstrap_se_shortfall": se_shortfall,
            "params": {c.key: c.estimator.get_params() for c in chosen},
            **({} if in_memory else {"executor": "dask"}),
        },
    )


@dataclass(frozen=True)
class _Fitted:
    """What scoring keeps of a fitted method: its fit summary and the method as chosen (to fit again with more
    iterations); the fitted model itself, which may hold several (N, K) arrays, is let go."""

    summary: dict[str, Any]
    chosen: Chosen


def _fit_all(table: JudgmentTable, chosen: Sequence[Chosen], progress: bool
             ) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, _Fitted]]:
    """Every method fitted on the whole table, one after another, keyed like the results: the (N, m) credits, each
    method's posteriors and what :func:`_fit_summaries` needs.

    Each model is dropped before the next one is fitted, so only its posteriors stay in memory (majority vote's
    vote shares and labels, for one, do not), and the methods are fitted last first: the registry lists the
    heavier EM fits (STABLEVAL's several starts) after the simple ones, so they run while the least is held
    (at 1e8 judgments this keeps ~1.6 GB of other methods' posteriors out of STABLEVAL's peak). Each fit is
    independent of the others, so the order changes no number."""
    columns: dict[str, np.ndarray] = {}
    posteriors: dict[str, np.ndarray] = {}
    fits: dict[str, _Fitted] = {}
    with progress_bar("fitting", total=len(chosen), enabled=progress) as bar:
        for method in reversed(chosen):
            model = method.fit(table)
            columns[method.key] = credits_by_method({method.key: model}, table.credit)[:, 0]
            posteriors[method.key] = np.asarray(model.posteriors_)
            fits[method.key] = _Fitted(summary=model.fit_summary(), chosen=method)
            del model
            bar.advance()
    keys = [method.key for method in chosen]
    credits = np.column_stack([columns.pop(key) for key in keys]) if keys else np.zeros((table.n_responses, 0))
    return credits, {key: posteriors[key] for key in keys}, {key: fits[key] for key in keys}


def _fit_summaries(table: JudgmentTable, fitted: Mapping[str, _Fitted], point: np.ndarray
                   ) -> dict[str, dict[str, Any]]:
    """Every iterative fit's summary; a fit that stopped at its iteration cap also gets ``score_change``: how far
    its agents' scores move when the same fit runs :data:`EXTRA_ITERATIONS` more E-steps (how much the missing
    convergence matters), on either kind of table."""
    fits = {key: fit.summary for key, fit in fitted.items() if fit.summary}
    for j, (key, fit) in enumerate(fitted.items()):
        params = fit.chosen.estimator.get_params()
        if key not in fits or fits[key].get("converged", True) or "max_iter" not in params:
            continue
        longer = fit.chosen.method.fit(table, fit.chosen.build().set_params(max_iter=params["max_iter"]
                                                                             + EXTRA_ITERATIONS))
        change = agent_means(credits_by_method({key: longer}, table.credit), table.response_agent,
                             table.n_agents)[:, 0] - point[:, j]
        largest = int(np.nanargmax(np.abs(change))) if np.isfinite(change).any() else 0
        fits[key]["score_change"] = {"extra_iterations": EXTRA_ITERATIONS,
                                     "max_abs_change": float(np.nan_to_num(np.abs(change[largest]))),
                                     "agent": str(table.agents[largest])}
    return fits


def _summarise_replicates(table: JudgmentTable, keys: Sequence[str], point: np.ndarray, reps: np.ndarray,
                          confidence: float
                          ) -> tuple[list[pd.DataFrame], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per method: the score table (point, percentile interval, rank and rank interval), the win-probability
    matrix and the (B, A) replicates."""
    n_agents = table.n_agents
    agents = [str(a) for a in table.agents]
    responses = table.responses_per_agent()
    judgments = table.judgments_per_agent()
    tail = (1.0 - confidence) / 2.0
    rows: list[pd.DataFrame] = []
    wins: dict[str, np.ndarray] = {}
    replicates: dict[str, np.ndarray] = {}
    for j, key in enumerate(keys):
        rep = reps[:, :, j]
        replicates[key] = rep
        ranks = competition_ranks(point[:, j])
        if len(rep):
            low, high = nan_quantile(rep, tail), nan_quantile(rep, 1 - tail)
            rank_low, rank_high = np.quantile(competition_ranks(rep), [tail, 1 - tail], axis=0, method="nearest")
            wins[key] = win_probabilities(rep)
        else:
            low = high = np.full(n_agents, np.nan)
            rank_low = rank_high = ranks
            wins[key] = np.full((n_agents, n_agents), np.nan)
        rows.append(pd.DataFrame({
            "method": key, "agent": agents, "score": point[:, j], "ci_low": low, "ci_high": high,
            "rank": ranks, "rank_low": np.asarray(rank_low, dtype=np.int64),
            "rank_high": np.asarray(rank_high, dtype=np.int64), "responses": responses, "judgments": judgments,
        }))
    return rows, wins, replicates


def win_probabilities(replicates: np.ndarray) -> np.ndarray:
    """(A, A) share of replicates in which row agent scores above column agent (ties count 1/2; NaN diagonal).

    >>> win_probabilities(np.array([[1.0, 0.0], [1.0, 1.0]])).tolist()
    [[nan, 0.75], [0.25, nan]]
    """
    n_agents = replicates.shape[1]
    win = np.empty((n_agents, n_agents))
    for a in range(n_agents):
        column = replicates[:, [a]]
        win[a] = (column > replicates).mean(axis=0) + 0.5 * (column == replicates).mean(axis=0)
    np.fill_diagonal(win, np.nan)
    return win
