"""Rank agreement between two rankings of the same question: Kendall tau-b, Spearman rho, AO and RBO.

* Kendall's tau-b (Kendall 1945, "The treatment of ties in ranking problems"): (concordant - discordant) /
  sqrt((n0 - ties_x)(n0 - ties_y)) over the items both rankings contain.
* Spearman's rho: Pearson correlation of the (average) ranks of the shared items.
* Average overlap (AO; Fagin, Kumar & Sivakumar 2003, called AO by Webber, Moffat & Zobel 2010, eq. 3):
  AO@k = (1/k) * sum_{d=1..k} |S[:d] ∩ L[:d]| / d, with k the length of the longer list by default. This is
  what "RBO with p = 1" reduces to when the sum is cut at the list depth; it is top-weighted only through the
  cumulative overlap.
* Rank-biased overlap, extrapolated (RBO_ext; Webber, Moffat & Zobel 2010, "A similarity measure for indefinite
  rankings", ACM TOIS 28(4), eq. 32), for lists S (length s) and L (length l >= s), overlap X_d at depth d::

      RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d )
                + ( (X_l - X_s)/l + X_s/s ) p^l

  with p in (0, 1) (p = 0.9 puts about 86% of the weight on the top 10 ranks, Webber et al. eq. 21).
  p = 1 is refused: the weights no longer sum to one; use AO for the depth-limited average.

Ranked lists are sequences of distinct item ids, best first. :func:`agreement_table` measures each question,
:func:`agreement_summary` averages over questions with Student-t intervals
(:func:`stableval.evaluate.intervals.t_interval`). Not to be confused with :mod:`stableval.evaluate.agreement`
(agreement between raters' labels).

>>> round(rbo_ext(["a", "b", "c"], ["a", "c", "b"], p=0.9), 4), round(average_overlap(["a", "b"], ["b", "a"]), 4)
(0.955, 0.5)
>>> table = agreement_table({"q1": ["a", "b", "c"], "q2": ["a", "b"]}, {"q1": {"a": 3, "b": 1, "c": 2},
...                                                                    "q2": {"a": 2, "b": 1}})
>>> summary = agreement_summary(table, p=0.9)
>>> summary["measure"].tolist()
['Kendall tau-b', 'Spearman rho', 'average overlap (AO)', 'RBO_ext (p=0.9)']
>>> summary["mean"].round(3).tolist(), summary["questions"].tolist()
([0.667, 0.75, 0.917, 0.978], [2, 2, 2, 2])
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from stableval.errors import InputError
from stableval.evaluate.intervals import t_interval

__all__ = ["MEASURES", "MEASURE_RANGE", "agreement_summary", "agreement_table", "average_overlap", "kendall_tau_b",
           "rbo_ext", "spearman_rho"]


def _check(ranking: Sequence[Hashable], name: str) -> list[Hashable]:
    items = list(ranking)
    if len(set(items)) != len(items):
        seen: set[Hashable] = set()
        dup = next(x for x in items if x in seen or seen.add(x))  # type: ignore[func-returns-value]
        raise InputError(f"{name} ranking lists an item twice", value=dup, allowed="distinct items, best first")
    return items


def _overlaps(s: Sequence[Hashable], long: Sequence[Hashable], depth: int) -> np.ndarray:
    """X_d = |S[:d] ∩ L[:d]| for d = 1..depth (a list shorter than d contributes all its items)."""
    pos_s = {x: i + 1 for i, x in enumerate(s)}
    pos_l = {x: i + 1 for i, x in enumerate(long)}
    shared = set(pos_s) & set(pos_l)
    enter = np.array([max(pos_s[x], pos_l[x]) for x in shared], dtype=np.int64)
    counts = np.bincount(enter, minlength=depth + 1)[1:depth + 1] if len(enter) else np.zeros(depth, np.int64)
    return np.cumsum(counts).astype(float)


def average_overlap(a: Sequence[Hashable], b: Sequence[Hashable], depth: int | None = None) -> float:
    """AO at ``depth`` (default: the longer list's length).

    >>> average_overlap(["a", "b", "c"], ["c", "b", "a"])  # (0/1 + 1/2 + 3/3) / 3
    0.5
    """
    a, b = _check(a, "first"), _check(b, "second")
    k = depth if depth is not None else max(len(a), len(b))
    if k <= 0:
        raise InputError("average overlap needs a depth >= 1", value=k, allowed="non-empty rankings")
    x = _overlaps(a, b, k)
    return float(np.mean(x / np.arange(1, k + 1)))


def rbo_ext(a: Sequence[Hashable], b: Sequence[Hashable], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap (Webber et al. 2010, eq. 32); lists may differ in length.

    >>> rbo_ext(["a"], ["a", "b"], p=0.5)
    1.0
    """
    if not 0.0 < p < 1.0:
        raise InputError("RBO persistence p must lie strictly between 0 and 1", option="p", value=p,
                         allowed="0 < p < 1 (p = 1 gives no proper weights: use average overlap, AO, instead)")
    a, b = _check(a, "first"), _check(b, "second")
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, lnum = len(short), len(long)
    if s == 0:
        raise InputError("RBO of an empty ranking is undefined", allowed="non-empty rankings")
    x = _overlaps(short, long, lnum)
    d = np.arange(1, lnum + 1, dtype=float)
    weights = p ** d
    x_s, x_l = x[s - 1], x[lnum - 1]
    tail = d > s
    total = np.sum(x / d * weights) + np.sum(x_s * (d[tail] - s) / (s * d[tail]) * weights[tail])
    return float((1 - p) / p * total + ((x_l - x_s) / lnum + x_s / s) * p ** lnum)


def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(values), dtype=float)


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b of two paired score (or rank) vectors; NaN when either is constant
    (:func:`stableval.evaluate.rank_correlation.kendall_tau_b`).

    >>> kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    0.6666666666666666
    """
    from stableval.evaluate.rank_correlation import kendall_tau_b as tau_b

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError("x and y must be 1-d and of the same length")
    return float(tau_b(xa, ya))


def spearman_rho(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho (Pearson on average ranks); NaN when either is constant.

    >>> spearman_rho([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    rx, ry = _ranks(np.asarray(x, dtype=float)), _ranks(np.asarray(y, dtype=float))
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = np.sqrt(np.sum(rx * rx) * np.sum(ry * ry))
    return float(np.sum(rx * ry) / denominator) if denominator > 0 else float("nan")


def agreement_table(expert: Mapping[str, Sequence[Hashable]], system: Mapping[str, Mapping[Hashable, float]], *,
                    p: float = 0.9) -> pd.DataFrame:
    """Per question: agreement between the expert's ranking (best first) and the system's scores.

    The system ranking is the expert's items sorted by system score (descending; ties by the expert's order are
    not used: tau-b and rho see the tie, AO/RBO break it by item id). Items the system did not score are an
    error. Columns: ``qid, items, tau_b, spearman, ao, rbo``.
    """
    rows: list[dict[str, Any]] = []
    for qid, ranking in expert.items():
        items = _check(ranking, f"expert (question {qid})")
        scores = system.get(qid)
        if scores is None:
            raise InputError("question has no system ranking", value=qid, allowed=", ".join(map(str, system)))
        missing = [x for x in items if x not in scores]
        if missing:
            raise InputError(f"system ranking of question {qid} lacks {len(missing)} item(s) the expert ranked",
                             value=missing[0], allowed="every expert-ranked item scored by the system")
        expert_score = -np.arange(len(items), dtype=float)  # best first -> highest
        system_score = np.array([scores[x] for x in items], dtype=float)
        order = sorted(range(len(items)), key=lambda i: (-system_score[i], str(items[i])))
        system_list = [items[i] for i in order]
        rows.append({"qid": qid, "items": len(items), "tau_b": kendall_tau_b(expert_score, system_score),
                     "spearman": spearman_rho(expert_score, system_score),
                     "ao": average_overlap(items, system_list), "rbo": rbo_ext(items, system_list, p=p)})
    return pd.DataFrame(rows, columns=["qid", "items", "tau_b", "spearman", "ao", "rbo"])


#: Per-question columns of :func:`agreement_table` and their labels in :func:`agreement_summary` (``{p}``: RBO's).
MEASURES: dict[str, str] = {"tau_b": "Kendall tau-b", "spearman": "Spearman rho", "ao": "average overlap (AO)",
                            "rbo": "RBO_ext (p={p:g})"}


#: The range each measure lives in; its interval is cut to it (a t interval over a few questions can reach past 1).
MEASURE_RANGE: dict[str, tuple[float, float]] = {"tau_b": (-1.0, 1.0), "spearman": (-1.0, 1.0), "ao": (0.0, 1.0),
                                                 "rbo": (0.0, 1.0)}


def agreement_summary(table: pd.DataFrame, *, p: float = 0.9, confidence: float = 0.95) -> pd.DataFrame:
    """Per measure of an :func:`agreement_table`: mean over questions, Student-t interval (mean ± t_{n-1} s /
    sqrt(n), cut to the measure's range :data:`MEASURE_RANGE`; NaN bounds for one question) and the number of
    questions where it is defined (NaN values, e.g. tau-b of a constant ranking, are left out). Columns:
    ``measure, mean, ci_low, ci_high, questions``; ``p`` names the RBO persistence used for the table.

    >>> three = pd.DataFrame({"tau_b": [1.0, 1.0, 0.2], "spearman": [1.0, 1.0, 0.5], "ao": [1.0, 1.0, 0.5],
    ...                       "rbo": [1.0, 1.0, 0.5]})
    >>> agreement_summary(three)["ci_high"].tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    rows = []
    for column, label in MEASURES.items():
        interval = t_interval(table[column].to_numpy(dtype=float), confidence)
        low, high = MEASURE_RANGE[column]
        rows.append({"measure": label.format(p=p), "mean": interval.mean, "ci_low": max(interval.low, low),
                     "ci_high": min(interval.high, high), "questions": interval.n})
    return pd.DataFrame(rows, columns=["measure", "mean", "ci_low", "ci_high", "questions"])
