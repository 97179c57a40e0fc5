"""Dermatology DDx annotations: per case, several experts' partial rankings of conditions, and their IRN aggregate.

Data: the Dermatology DDx dataset (Stutz et al. 2023, "Evaluating AI systems under uncertain ground truth: a case
study in dermatology", arXiv:2307.02191; github.com/google-deepmind/uncertain_ground_truth, annotations CC BY 4.0).
Each case has several expert annotations; each is a *partial ranking*: ordered groups of condition indices, ties
inside a group (``dermatology_selectors.json``), with condition names and risk categories (0 low, 1 medium, 2 high)
in ``dermatology_conditions.txt`` and ``dermatology_risks.txt``. :func:`load_ddx` reads them; :func:`load_scores`
reads a model's N × C score matrix.

Aggregation rule (inverse rank normalisation, IRN, as ``irn.aggregate_irn`` of the authors' code): every ranking
gives each condition in its g-th group (g = 1, 2, ...) a score of 1/g — tied conditions each get the group's full
1/g — and the scores are summed over the rankings (:meth:`DDxAnnotations.aggregate`). The ground truth is the
top-scoring condition; several conditions may tie for it (:meth:`DDxAnnotations.top1`). Scores are exact integers
(1/g scaled by lcm(1..G)), so ties are exact. The rater-bootstrap study is :mod:`stableval.studies.ddx`.

>>> ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[1], [0, 2]]]], conditions=["a", "b", "c"])
>>> ann.aggregate().tolist()          # case 1: a and b tie (1 each); case 2: b 1, a and c 1/2 each
[[1.0, 1.0, 0.0], [0.5, 1.0, 0.5]]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stableval.data.rankings import Rankings
from stableval.errors import InputError

__all__ = ["RISK_NAMES", "DDxAnnotations", "load_ddx", "load_scores"]

#: The risk categories 0, 1, 2 of ``dermatology_risks.txt``.
RISK_NAMES = ("low", "medium", "high")


@dataclass(frozen=True, eq=False)
class DDxAnnotations:
    """Partial rankings per case, flattened.

    Attributes:
        case_offsets: (N+1,) rankings of case ``i`` are ``case_offsets[i]:case_offsets[i+1]``.
        ranking_offsets: (R+1,) mentions of ranking ``r`` are ``ranking_offsets[r]:ranking_offsets[r+1]``.
        condition: (mentions,) condition index of each mention, 0..C-1.
        group: (mentions,) 1-based position of the mention's group in its ranking.
        conditions: the C condition names. risks: (C,) risk category 0/1/2 per condition, or None.
        source: the selectors file. notes: what loading found.
    """

    case_offsets: np.ndarray
    ranking_offsets: np.ndarray
    condition: np.ndarray
    group: np.ndarray
    conditions: tuple[str, ...]
    risks: np.ndarray | None = None
    source: str = "<memory>"
    notes: tuple[str, ...] = field(default=())

    @property
    def n_cases(self) -> int:
        return int(self.case_offsets.size - 1)

    @property
    def n_rankings(self) -> int:
        return int(self.ranking_offsets.size - 1)

    @property
    def n_conditions(self) -> int:
        return len(self.conditions)

    @property
    def rankings_per_case(self) -> np.ndarray:
        return np.diff(self.case_offsets)

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_selectors(cls, selectors: Any, *, conditions: Sequence[str] | None = None,
                       risks: Sequence[int] | np.ndarray | None = None, source: str = "<memory>") -> DDxAnnotations:
        """From the parsed JSON: a list of cases; a case is a list of rankings; a ranking is a list of groups;
        a group is a list of condition indices. Every problem is an :class:`InputError` naming the case (1-based),
        ranking and group."""
        if not isinstance(selectors, list) or not selectors:
            raise InputError("expected a non-empty JSON list of cases", file=source, value=type(selectors).__name__,
                             allowed="[[ranking, ...], ...] with ranking = [[condition, ...], ...]")
        n_conditions = None if conditions is None else len(conditions)
        case_sizes, ranking_sizes, flat_cond, flat_group = [], [], [], []
        for c, case in enumerate(selectors, start=1):
            if not isinstance(case, list) or not case:
                raise InputError(f"case {c} has no rankings", file=source, row=c, value=case,
                                 allowed="a non-empty list of rankings")
            case_sizes.append(len(case))
            for r, ranking in enumerate(case, start=1):
                if not isinstance(ranking, list) or not ranking:
                    raise InputError(f"case {c}, ranking {r} is empty or not a list", file=source, row=c,
                                     value=ranking, allowed="a non-empty list of groups of condition indices")
                seen: set[int] = set()
                count = 0
                for g, group in enumerate(ranking, start=1):
                    if not isinstance(group, list) or not group:
                        raise InputError(f"case {c}, ranking {r}, group {g} is empty or not a list", file=source,
                                         row=c, value=group, allowed="a non-empty list of condition indices")
                    for cond in group:
                        if isinstance(cond, bool) or not isinstance(cond, int) or cond < 0 or (
                                n_conditions is not None and cond >= n_conditions):
                            raise InputError(f"case {c}, ranking {r}, group {g}: not a condition index",
                                             file=source, row=c, value=cond,
                                             allowed="integers 0.." + (str(n_conditions - 1)
                                                                       if n_conditions else "C-1"))
                        if cond in seen:
                            raise InputError(f"case {c}, ranking {r}: condition listed twice", file=source,
                                             row=c, value=cond, allowed="each condition at most once per ranking")
                        seen.add(cond)
                        flat_cond.append(cond)
                        flat_group.append(g)
                        count += 1
                ranking_sizes.append(count)
        condition = np.asarray(flat_cond, dtype=np.int32)
        if conditions is None:
            conditions = [str(i) for i in range(int(condition.max()) + 1)]
        risk_array = None
        if risks is not None:
            risk_array = np.asarray(risks, dtype=np.int64)
            if risk_array.shape != (len(conditions),):
                raise InputError("need one risk category per condition", file=source,
                                 value=f"{risk_array.size} risks", allowed=f"{len(conditions)} (one per condition)")
            if np.any((risk_array < 0) | (risk_array > 2)):
                bad = int(np.flatnonzero((risk_array < 0) | (risk_array > 2))[0])
                raise InputError("risk category out of range", file=source, row=bad + 1, value=int(risk_array[bad]),
                                 allowed="0 (low), 1 (medium) or 2 (high)")
        return cls(case_offsets=np.concatenate([[0], np.cumsum(case_sizes)]).astype(np.int64),
                   ranking_offsets=np.concatenate([[0], np.cumsum(ranking_sizes)]).astype(np.int64),
                   condition=condition, group=np.asarray(flat_group, dtype=np.int32),
                   conditions=tuple(str(c) for c in conditions), risks=risk_array, source=source)

    # ---------------------------------------------------------------- aggregation
    @property
    def _scale(self) -> int:
        return math.lcm(*range(1, int(self.group.max()) + 1))

    def _mentions(self, ranking_ids: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mention indices of the rankings ``ranking_ids`` and the output row of each."""
        counts = np.diff(self.ranking_offsets)[ranking_ids]
        total = int(counts.sum())
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        return np.repeat(self.ranking_offsets[ranking_ids], counts) + within, np.repeat(rows, counts)

    def _aggregate(self, ranking_ids: np.ndarray, rows: np.ndarray, n_rows: int) -> np.ndarray:
        """(n_rows, C) summed scores (scaled by lcm(1..G), exact integers) of rankings ``ranking_ids`` into
        ``rows``."""
        mention, row = self._mentions(ranking_ids, rows)
        weight = (self._scale // self.group[mention]).astype(np.float64)
        flat = np.bincount(row * self.n_conditions + self.condition[mention], weights=weight,
                           minlength=n_rows * self.n_conditions)
        return flat.reshape(n_rows, self.n_conditions)

    def top_entries(self, ranking_ids: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, condition) of every condition tied for the top aggregated score of its row, sorted by row.

        Sparse: sums scores per distinct (row, condition) and takes each row's maximum with ``reduceat``, so the
        cost grows with the mentions drawn, not with rows × conditions. Every row needs at least one ranking.
        """
        mention, row = self._mentions(ranking_ids, rows)
        key = row.astype(np.int64) * self.n_conditions + self.condition[mention]
        unique, inverse = np.unique(key, return_inverse=True)
        score = np.bincount(inverse, weights=(self._scale // self.group[mention]).astype(np.float64))
        unique_row = unique // self.n_conditions
        starts = np.flatnonzero(np.r_[True, unique_row[1:] != unique_row[:-1]])
        row_max = np.repeat(np.maximum.reduceat(score, starts), np.diff(np.r_[starts, unique.size]))
        top = score == row_max
        return unique_row[top], unique[top] % self.n_conditions

    def aggregate(self) -> np.ndarray:
        """(N, C) IRN scores of all rankings per case: the sum over rankings of 1/g for the g-th group."""
        case = np.repeat(np.arange(self.n_cases), self.rankings_per_case)
        return self._aggregate(np.arange(self.n_rankings), case, self.n_cases) / self._scale

    def rankings(self) -> Rankings:
        """The partial rankings as :class:`~stableval.data.rankings.Rankings` (items: the cases, named by their
        0-based position in the selectors file, the ``case`` of every DDx table; options: the conditions; raters:
        unknown, so one anonymous rater)."""
        return Rankings.from_arrays(np.repeat(np.arange(self.n_cases), self.rankings_per_case), self.ranking_offsets,
                                    self.condition, self.group, n_items=self.n_cases, n_options=self.n_conditions,
                                    items=[str(i) for i in range(self.n_cases)], options=self.conditions,
                                    source=self.source)

    def top1(self) -> np.ndarray:
        """(N, C) bool: the conditions tied for the top IRN score of all rankings per case."""
        scores = self.aggregate()
        return np.asarray(scores == scores.max(axis=1, keepdims=True))


def _read_lines(path: str | os.PathLike[str], what: str) -> list[str]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("file not found", file=str(path), allowed=f"a text file with one {what} per line") from None
    while lines and not lines[-1].strip():
        lines.pop()
    return [line.strip() for line in lines]


def load_ddx(selectors: str | os.PathLike[str], *, conditions: str | os.PathLike[str] | None = None,
             risks: str | os.PathLike[str] | None = None) -> DDxAnnotations:
    """Read ``dermatology_selectors.json`` and, optionally, the condition names and risk categories (one per line).
    """
    source = str(selectors)
    try:
        data = json.loads(Path(selectors).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", file=source, allowed="dermatology_selectors.json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON: {error}", file=source, allowed="a JSON list of cases") from None
    names = _read_lines(conditions, "condition name") if conditions is not None else None
    risk_values = None
    if risks is not None:
        text = _read_lines(risks, "risk category")
        risk_values = []
        for line_no, value in enumerate(text, start=1):
            if value not in ("0", "1", "2"):
                raise InputError("not a risk category", file=str(risks), row=line_no, value=value,
                                 allowed="0 (low), 1 (medium) or 2 (high), one per line")
            risk_values.append(int(value))
        if names is None:
            names = [str(i) for i in range(len(risk_values))]
    return DDxAnnotations.from_selectors(data, conditions=names, risks=risk_values, source=source)


def load_scores(path: str | os.PathLike[str], *, shape: tuple[int, int] | None = None) -> np.ndarray:
    """A model's N × C score matrix: ``.npy``, or text written by ``numpy.savetxt`` (any other suffix).

    Higher scores rank a condition higher. The shape must match the cases × conditions when ``shape`` is given;
    NaN or infinite scores are errors (naming the 1-based row and column).
    """
    source = str(path)
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=source, allowed="an N × C score matrix (.npy or numpy.savetxt text)")
    try:
        scores = np.load(path, allow_pickle=False) if path.suffix == ".npy" else np.loadtxt(path, ndmin=2)
    except (ValueError, OSError) as error:
        raise InputError(f"cannot read a numeric matrix: {' '.join(str(error).split())}", file=source,
                         allowed="a .npy array or numpy.savetxt text, one row per case") from None
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or (shape is not None and scores.shape != shape):
        raise InputError("score matrix has the wrong shape", file=source, value=f"{scores.shape}",
                         allowed=f"{shape[0]} cases × {shape[1]} conditions" if shape else "a 2-D matrix")
    bad = ~np.isfinite(scores)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise InputError("score is not a finite number", file=source, row=int(row) + 1, column=str(col + 1),
                         value=float(scores[row, col]), allowed="finite numbers")
    return scores
