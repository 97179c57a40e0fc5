"""One leaderboard across several conversions of the same ratings: agents × (conversion, method).

The STABLEVAL paper (Bonagiri et al. 2026, appendix C) scores the MT-Bench votes under six ways of turning a vote
into levels and credit, and compares majority vote with STABLEVAL under each. :func:`score_across` scores every
agent under every method on each table it is given (e.g. ``stableval.datasets.load_mt_bench`` under each of
``MAPPINGS``), and :class:`ScoresAcross` puts the agent scores in one table, with the paper-style comparison of
the headline method against majority vote (:func:`~stableval.evaluate.scores.compare_methods`) per conversion.

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> frame = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "agent": list("AABBAB"), "rater": list("ababcc"),
...                       "label": [2, 1, 0, 0, 2, 1]})
>>> tables = {"three": AnnotationTable.from_frame(frame, levels=("0", "1", "2")),
...           "two": AnnotationTable.from_frame(frame.assign(label=frame["label"].clip(upper=1)), levels=("0", "1"))}
>>> result = score_across(tables, ["mv"])  # A: (2,1 tie → 0.75, 2 → 1) / 2; B: (0 → 0, 0,1 tie → 0.25) / 2
>>> result.table().round(3).to_dict("list")
{'agent': ['A', 'B'], 'three_mv': [0.875, 0.125], 'two_mv': [1.0, 0.25]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import records
from stableval.aggregate import Aggregator
from stableval.aggregate.registry import Chosen, method_label, primary_method, resolve_methods
from stableval.console import Displayed
from stableval.data.labels import credit_text
from stableval.data.table import AnnotationTable
from stableval.evaluate.scores import AgentScores, score_agents

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["ScoresAcross", "score_across"]


@dataclass(frozen=True)
class ScoresAcross(Displayed):
    """Result of :func:`score_across`.

    Attributes:
        results: conversion name → its :class:`~stableval.evaluate.scores.AgentScores`, in the order given.
        title: what the conversions are of (for the table's heading).
        notes: lines for people (e.g. what the source file holds).
    """

    results: dict[str, AgentScores]
    title: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def conversions(self) -> list[str]:
        return list(self.results)

    @property
    def methods(self) -> list[str]:
        return next(iter(self.results.values())).methods

    def agents(self) -> list[str]:
        """Every agent, best first by the headline method under the first conversion (then any agent missing
        there, by name)."""
        first = next(iter(self.results.values())).leaderboard()["agent"].astype(str).tolist()
        rest = sorted({a for r in self.results.values() for a in r.agents} - set(first))
        return first + rest

    def table(self) -> pd.DataFrame:
        """One row per agent (:meth:`agents` order), one score column per (conversion, method):
        ``CONVERSION_METHOD`` (e.g. ``baseline_mv``)."""
        out = pd.DataFrame({"agent": self.agents()})
        for name, result in self.results.items():
            for method in result.methods:
                scores = result.scores[result.scores["method"] == method].set_index("agent")["score"]
                out[f"{name}_{method}"] = scores.reindex(out["agent"]).to_numpy()
        return out

    def summary(self) -> pd.DataFrame:
        """One row per conversion: its size and levels, and the comparison of the headline method with majority
        vote (``method, baseline, pearson, spearman, largest_agent, largest_change, rank_changes,
        swapped_pairs``; empty when the methods do not hold both)."""
        rows = []
        for name, result in self.results.items():
            data = result.dataset
            row: dict[str, Any] = {"conversion": name, "judgments": data["judgments"],
                                   "responses": data["responses"], "levels": " < ".join(data["levels"]),
                                   "credit": credit_text(data["credit"])}
            comparison = result.comparison()
            if comparison is not None:
                row.update(method=comparison.method, baseline=comparison.baseline, pearson=comparison.pearson,
                           spearman=comparison.spearman, largest_agent=comparison.largest_agent,
                           largest_change=comparison.largest_change, rank_changes=comparison.rank_changes,
                           swapped_pairs=comparison.swapped_pairs)
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the one table, the per-conversion summary, and each conversion's scores and comparison."""
        per: dict[str, Any] = {}
        for name, result in self.results.items():
            entry: dict[str, Any] = {"dataset": result.dataset, "fits": result.fits,
                                     "scores": records(result.scores)}
            comparison = result.comparison()
            if comparison is not None:
                entry["comparison"] = comparison.to_dict()
            per[name] = entry
        first = next(iter(self.results.values()))
        return {"title": self.title, "notes": list(self.notes), "conversions": self.conversions,
                "methods": self.methods, "settings": first.settings, "table": records(self.table()),
                "summary": records(self.summary()), "results": per}

    def to_frame(self) -> pd.DataFrame:
        """The one table (:meth:`table`) with, per conversion that has the comparison, the column
        ``CONVERSION_METHOD_minus_BASELINE`` (e.g. ``baseline_stableval_minus_mv``)."""
        out = self.table()
        for name, result in self.results.items():
            comparison = result.comparison()
            if comparison is not None:
                change = comparison.agents.set_index("agent")["change"]
                out[f"{name}_{comparison.method}_minus_{comparison.baseline}"] = change.reindex(
                    out["agent"]).to_numpy()
        return out

    def render(self, console: Console) -> None:
        """The agents × (conversion, method) table, then one line per conversion comparing the headline method
        with majority vote."""
        from rich import box
        from rich.table import Table

        if self.title:
            console.print(f"[bold]{self.title}[/]")
        for note in self.notes:
            console.print(f"  note: {note}")
        main = primary_method(self.methods)
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title=f"Agent scores per conversion and method (best first by {method_label(main)} under "
                            f"{self.conversions[0]})")
        table.add_column("Agent", style="bold")
        frame = self.table()
        columns = [(name, method) for name, result in self.results.items() for method in result.methods]
        for k, (name, method) in enumerate(columns):  # the conversion's name heads its first method's column
            first_of_group = k == 0 or columns[k - 1][0] != name
            table.add_column(f"{name if first_of_group else ''}\n{method_label(method)}", justify="right",
                             no_wrap=True)
        for _, row in frame.iterrows():
            table.add_row(str(row["agent"]), *(_cell(row[f"{n}_{m}"]) for n, m in columns))
        console.print(table)
        summary = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                        title="Per conversion: the headline method against majority vote")
        for header in ("conversion", "levels (credit)", "judgments", "compared", "Pearson r", "Spearman ρ",
                       "largest change", "rank changes"):
            summary.add_column(header, justify="left" if header in ("conversion", "levels (credit)", "compared",
                                                                    "largest change") else "right")
        for name, result in self.results.items():
            data = result.dataset
            levels = f"{' < '.join(data['levels'])} ({credit_text(data['credit'])})"
            comparison = result.comparison()
            if comparison is None:
                summary.add_row(name, levels, f"{data['judgments']:,}", "—", "", "", "", "")
                continue
            summary.add_row(name, levels, f"{data['judgments']:,}",
                            f"{method_label(comparison.method)} − {method_label(comparison.baseline)}",
                            _cell(comparison.pearson), _cell(comparison.spearman),
                            f"{comparison.largest_agent} {comparison.largest_change:+.3f}",
                            f"{comparison.rank_changes} ({comparison.swapped_pairs} "
                            f"pair{'' if comparison.swapped_pairs == 1 else 's'})")
        console.print(summary)
        console.print("Rank changes: agents ranked differently by the two methods (pairs of agents in the opposite "
                      "order in parentheses).")


def _cell(value: Any) -> str:
    return "" if value is None or not np.isfinite(value) else f"{float(value):.3f}"


def score_across(
    tables: Mapping[str, AnnotationTable],
    methods: Iterable[str | Aggregator | Chosen] | None = None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    bootstrap: int = 0,
    seed: int | None = 0,
    title: str = "",
    notes: Iterable[str] = (),
    progress: bool = False,
) -> ScoresAcross:
    """Score every agent under each method on each table (:func:`~stableval.evaluate.scores.score_agents`).

    Args:
        tables: conversion name → annotation table (the same agents, converted differently).
        methods, params: as for :func:`~stableval.evaluate.scores.score_agents` (default: the registry's default
            methods); the same methods run on every table.
        bootstrap: bootstrap replicates per table (0 = point scores only; intervals are in each result).
        seed: seed of the bootstrap and of any random tie-break.
        title, notes: shown above the table.
    """
    if not tables:
        raise ValueError("no tables to score")
    chosen = resolve_methods(methods, params)
    results = {str(name): score_agents(table, chosen, bootstrap=bootstrap, seed=seed, progress=progress)
               for name, table in tables.items()}
    return ScoresAcross(results=results, title=title, notes=tuple(notes))
