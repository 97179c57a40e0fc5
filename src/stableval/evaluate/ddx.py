"""Dermatology DDx: top-k accuracy against rater-bootstrapped ground truths built from partial rankings.

Data: the Dermatology DDx dataset (Stutz et al. 2023, "Evaluating AI systems under uncertain ground truth: a case
study in dermatology", arXiv:2307.02191; github.com/google-deepmind/uncertain_ground_truth, CC BY 4.0). Each case
has several expert annotations; each is a *partial ranking*: ordered groups of condition indices, ties inside a
group (``dermatology_selectors.json``), with condition names and risk categories (0 low, 1 medium, 2 high) in
``dermatology_conditions.txt`` and ``dermatology_risks.txt``.

Aggregation rule (inverse rank normalisation, IRN, as ``irn.aggregate_irn`` of the authors' code): every ranking
gives each condition in its g-th group (g = 1, 2, ...) a score of 1/g — tied conditions each get the group's full
1/g — and the scores are summed over the rankings. The ground truth is the top-scoring condition; when several
conditions tie for the top score they *share* it: each has weight 1/|tied|, so a prediction earns the share of
tied conditions inside its top-k (the expected accuracy under a uniformly random tie-break). Scores are exact
integers (1/g scaled by lcm(1..G)), so ties are exact.

Rater bootstrap (Stutz et al. 2023; Saab et al. 2024, arXiv:2404.18416): per draw, each case's rankings are
sampled with replacement (``k`` per case, default 3; ``k=None``: as many as the case has), aggregated as above,
and every model is scored by top-k accuracy (k = 1, 3, 5), overall and stratified by the risk category of the
ground-truth condition; means and percentile intervals over draws. *Annotation certainty* of a case is the
probability that a draw's top-1 equals the top-1 of all its rankings: the mean over draws of
|T_draw ∩ T_all| / (|T_draw|·|T_all|) for the tied top sets T (1 when both are the same single condition).

>>> ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[1], [0, 2]]]], conditions=["a", "b", "c"])
>>> ann.aggregate().tolist()          # case 1: a and b tie (1 each); case 2: b 1, a and c 1/2 each
[[1.0, 1.0, 0.0], [0.5, 1.0, 0.5]]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.evaluate.rater_bootstrap import chunk_size, draw_ratings, nanmean, percentile_interval
from stableval.progress import progress_bar

RISK_NAMES = ("low", "medium", "high")
TOP_K = (1, 3, 5)


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

    def _top_entries(self, ranking_ids: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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

    def top1(self) -> np.ndarray:
        """(N, C) bool: the conditions tied for the top IRN score of all rankings per case."""
        scores = self.aggregate()
        return scores == scores.max(axis=1, keepdims=True)


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


def positions(scores: np.ndarray) -> np.ndarray:
    """(N, C) 0-based position of each condition in the model's ranking (highest score first; equal scores keep
    the lower condition index first).

    >>> positions(np.array([[0.1, 0.7, 0.2]])).tolist()
    [[2, 0, 1]]
    """
    order = np.argsort(-scores, axis=1, kind="stable")
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(scores.shape[1])[None, :].repeat(scores.shape[0], 0), axis=1)
    return pos


@dataclass(frozen=True)
class DDxResult:
    """Top-k accuracy over rater-bootstrap ground truths, and per-case annotation certainty.

    Attributes:
        accuracy: one row per (model, k, risk): ``model``, ``k``, ``risk`` (``all`` or the ground truth's risk
            category), ``accuracy`` (mean over draws), ``ci_low``, ``ci_high`` (percentile interval over draws),
            ``cases`` (mean number of cases in the stratum per draw; tied ground truths count fractionally),
            ``frozen_accuracy`` (against the IRN top-1 of all rankings).
        certainty: one row per case: ``case`` (0-based index), ``rankings``, ``top1`` (top-1 of all rankings,
            ties joined by ``" | "``), ``certainty``, ``drawn_top1`` (the most frequent drawn top-1 conditions with
            their shares).
        replicates: (B, models, ks, 1 + risks) accuracy per draw.
        settings: parameters and dataset counts.
    """

    accuracy: pd.DataFrame
    certainty: pd.DataFrame
    replicates: np.ndarray
    settings: dict[str, Any]

    def least_certain(self, n: int = 10) -> pd.DataFrame:
        """The ``n`` cases whose drawn top-1 most often differs from the top-1 of all rankings."""
        return self.certainty.sort_values(["certainty", "case"], kind="stable").head(n).reset_index(drop=True)

    def to_dict(self, least_certain: int = 10) -> dict[str, Any]:
        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{str(k): (None if isinstance(v, float) and not np.isfinite(v) else
                         (v.item() if isinstance(v, np.generic) else v)) for k, v in r.items()}
                    for r in frame.to_dict("records")]

        cert = self.certainty["certainty"]
        return {"settings": self.settings, "accuracy": records(self.accuracy),
                "certainty": {"mean": float(cert.mean()), "certain_cases": int((cert == 1).sum()),
                              "least_certain": records(self.least_certain(least_certain))}}


def evaluate_ddx(
    annotations: DDxAnnotations,
    predictions: Mapping[str, np.ndarray] | None = None,
    *,
    k: int | None = 3,
    n_draws: int = 1000,
    top_k: Sequence[int] = TOP_K,
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> DDxResult:
    """Top-k accuracy of every model (N × C score matrices) over rater-bootstrap ground truths; per-case certainty.

    Source: Stutz et al. (2023), arXiv:2307.02191 (IRN aggregation of partial rankings, top-k accuracy, rater
    bootstrap); the bootstrap as in Saab et al. (2024), arXiv:2404.18416, App. C.2.

    >>> ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[1]], [[1], [0]]]], conditions=["a", "b"])
    >>> scores = np.array([[0.9, 0.1], [0.2, 0.8]])          # predicts a, then b
    >>> result = evaluate_ddx(ann, {"m": scores}, n_draws=4000, top_k=(1,), seed=0)
    >>> round(float(result.accuracy["accuracy"][0]), 2)      # case 1: P(a wins 3 draws) = 1/2; case 2: always b
    0.75
    """
    predictions = dict(predictions or {})
    ks = tuple(int(v) for v in top_k)
    if any(v < 1 for v in ks) or not ks:
        raise ValueError("top_k must be positive integers")
    if k is not None and k < 1:
        raise ValueError("k must be at least 1 (or None)")
    n, c = annotations.n_cases, annotations.n_conditions
    names = list(predictions)
    pos = np.stack([positions(_check_shape(predictions[m], (n, c), m)) for m in names]) if names else \
        np.zeros((0, n, c), dtype=np.int64)
    risks = annotations.risks
    n_strata = 1 + (len(RISK_NAMES) if risks is not None else 0)
    full_top = annotations.top1()
    n_full = full_top.sum(axis=1)
    rng = np.random.default_rng(seed)
    width = int(annotations.rankings_per_case.max()) if k is None else k
    step = chunk_size(n, 4 * width, n_draws)
    replicates = np.empty((n_draws, len(names), len(ks), n_strata))
    stratum_cases = np.zeros(n_strata)
    certainty = np.zeros(n)
    drawn_top = np.zeros(n * c)
    with progress_bar("DDx rater bootstrap", total=n_draws, enabled=progress) as bar:
        for start in range(0, n_draws, step):
            b = min(start + step, n_draws) - start
            drawn, valid = draw_ratings(annotations.case_offsets, k, b, rng)         # (b, N, width)
            rows = np.broadcast_to(np.arange(b * n).reshape(b, n, 1), drawn.shape)
            if valid is not None:
                keep = np.broadcast_to(valid, drawn.shape)
                drawn, rows = drawn[keep], rows[keep]
            row, cond = annotations._top_entries(drawn.ravel(), rows.ravel())      # tied top-1 per (draw, case)
            weight = 1.0 / np.bincount(row, minlength=b * n)[row]
            draw, case = np.divmod(row, n)
            certainty += np.bincount(case, weights=weight * full_top[case, cond], minlength=n)
            drawn_top += np.bincount(case * c + cond, weights=weight, minlength=n * c)
            stratum = np.zeros((b, n_strata))
            stratum[:, 0] = n
            if risks is not None:
                stratum[:, 1:] = np.bincount(draw * 3 + risks[cond], weights=weight, minlength=b * 3).reshape(b, 3)
            stratum_cases += stratum.sum(axis=0)
            for a in range(len(names)):
                rank = pos[a, case, cond]
                for j, top_k_value in enumerate(ks):
                    hit = weight * (rank < top_k_value)
                    replicates[start:start + b, a, j, 0] = np.bincount(draw, weights=hit, minlength=b) / n
                    if risks is not None:
                        per = np.bincount(draw * 3 + risks[cond], weights=hit, minlength=b * 3).reshape(b, 3)
                        replicates[start:start + b, a, j, 1:] = np.divide(
                            per, stratum[:, 1:], out=np.full(per.shape, np.nan), where=stratum[:, 1:] > 0)
            bar.advance(b)
    certainty /= n_draws * n_full
    # frozen accuracy against the top-1 of all rankings (shared ties)
    f_case, f_cond = np.nonzero(full_top)
    f_weight = 1.0 / n_full[f_case]
    strata = ["all", *RISK_NAMES] if risks is not None else ["all"]
    rows_out = []
    low, high = percentile_interval(replicates, confidence)
    mean = nanmean(replicates)
    for a, name in enumerate(names):
        rank = pos[a, f_case, f_cond]
        for j, top_k_value in enumerate(ks):
            hit = f_weight * (rank < top_k_value)
            frozen = [hit.sum() / n]
            if risks is not None:
                per = np.bincount(risks[f_cond], weights=hit, minlength=3)
                den = np.bincount(risks[f_cond], weights=f_weight, minlength=3)
                frozen += list(np.divide(per, den, out=np.full(3, np.nan), where=den > 0))
            for s, stratum_name in enumerate(strata):
                rows_out.append({"model": name, "k": top_k_value, "risk": stratum_name,
                                 "accuracy": float(mean[a, j, s]), "ci_low": float(low[a, j, s]),
                                 "ci_high": float(high[a, j, s]), "cases": float(stratum_cases[s] / n_draws),
                                 "frozen_accuracy": float(frozen[s])})
    accuracy = pd.DataFrame(rows_out, columns=["model", "k", "risk", "accuracy", "ci_low", "ci_high", "cases",
                                               "frozen_accuracy"])
    certainty_frame = _certainty_frame(annotations, full_top, certainty, drawn_top.reshape(n, c) / n_draws)
    settings = {"source": annotations.source, "cases": n, "rankings": annotations.n_rankings, "conditions": c,
                "k": k, "n_draws": n_draws, "top_k": list(ks), "seed": seed, "confidence": confidence,
                "models": names, "risks": risks is not None, "aggregation": "IRN (1/g per group, ties share)",
                "notes": list(annotations.notes)}
    return DDxResult(accuracy=accuracy, certainty=certainty_frame, replicates=replicates, settings=settings)


def _check_shape(scores: np.ndarray, shape: tuple[int, int], name: str) -> np.ndarray:
    array = np.asarray(scores, dtype=np.float64)
    if array.shape != shape:
        raise InputError(f"model {name!r}: score matrix has the wrong shape", value=f"{array.shape}",
                         allowed=f"{shape[0]} cases × {shape[1]} conditions")
    if not np.all(np.isfinite(array)):
        row, col = np.argwhere(~np.isfinite(array))[0]
        raise InputError(f"model {name!r}: score is not a finite number", row=int(row) + 1, column=str(col + 1),
                         value=float(array[row, col]), allowed="finite numbers")
    return array


def _certainty_frame(annotations: DDxAnnotations, full_top: np.ndarray, certainty: np.ndarray,
                     drawn_share: np.ndarray) -> pd.DataFrame:
    names = np.asarray(annotations.conditions, dtype=object)
    case, cond = np.nonzero(full_top)
    top1 = pd.Series(names[cond]).groupby(case).agg(" | ".join)   # once per case, not a hot path
    best = np.argsort(-drawn_share, axis=1, kind="stable")[:, :3]
    share = np.take_along_axis(drawn_share, best, axis=1)
    drawn = [", ".join(f"{names[j]} {s:.2f}" for j, s in zip(row_best, row_share, strict=True) if s > 0)
             for row_best, row_share in zip(best, share, strict=True)]
    return pd.DataFrame({"case": np.arange(annotations.n_cases), "rankings": annotations.rankings_per_case,
                         "top1": top1.to_numpy(), "certainty": certainty, "drawn_top1": drawn})


def noisy_predictor(annotations: DDxAnnotations, p_correct: float = 0.7, *, seed: int = 0) -> np.ndarray:
    """A synthetic N × C score matrix for examples and tests (model predictions are not public).

    Per case, the top-1 condition of all rankings (the lowest index if tied) is ranked first with probability
    ``p_correct`` and otherwise at a uniformly random position among 2..10; every other condition gets a random
    score below. Against the all-rankings top-1 (for cases without a tie) the expected top-1, top-3 and top-5
    accuracies are p, p + (1-p)·2/9 and p + (1-p)·4/9.

    >>> ann = DDxAnnotations.from_selectors([[[[2]]]] * 4, conditions=list("abcdefghijkl"))
    >>> positions(noisy_predictor(ann, 1.0))[:, 2].tolist()
    [0, 0, 0, 0]
    """
    rng = np.random.default_rng(seed)
    n, c = annotations.n_cases, annotations.n_conditions
    truth = np.argmax(annotations.top1(), axis=1)
    scores = rng.random((n, c))
    order = np.argsort(-scores, axis=1, kind="stable")
    wanted = np.where(rng.random(n) < p_correct, 0, rng.integers(1, min(10, c), size=n))
    # move the truth to position `wanted` by swapping it with the condition currently there
    other = order[np.arange(n), wanted]
    rows = np.arange(n)
    swapped = scores.copy()
    swapped[rows, truth], swapped[rows, other] = scores[rows, other], scores[rows, truth]
    return swapped
