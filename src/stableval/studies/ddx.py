"""Dermatology DDx: top-k accuracy against rater-bootstrapped ground truths built from partial rankings.

The annotations (per case, several experts' partial rankings) and their IRN aggregation are read and computed by
:mod:`stableval.datasets.ddx` (Stutz et al. 2023, "Evaluating AI systems under uncertain ground truth: a case study
in dermatology", arXiv:2307.02191). The ground truth of a set of rankings is its top IRN condition; when several
conditions tie for the top score they *share* it: each has weight 1/|tied|, so a prediction earns the share of
tied conditions inside its top-k (the expected accuracy under a uniformly random tie-break).

Any registered ranking method (:mod:`stableval.aggregate.rankings`; ``method``, default IRN) can aggregate instead:
its plausibility per case, its top-1 as the ground truth. A method whose samples are ``posterior`` (Bayesian
Plackett–Luce) gives the ground-truth samples itself; every other is refitted on each bootstrap draw.

Rater bootstrap (Stutz et al. 2023; Saab et al. 2024, arXiv:2404.18416): per draw, each case's rankings are
sampled with replacement (``k`` per case, default 3; ``k=None``: as many as the case has), aggregated by the
method, and every model is scored by top-k accuracy (k = 1, 3, 5), overall and stratified by the risk category of the
ground-truth condition; means and percentile intervals over draws. *Annotation certainty* of a case is the
probability that a draw's top-1 equals the top-1 of all its rankings: the mean over draws of
|T_draw ∩ T_all| / (|T_draw|·|T_all|) for the tied top sets T (1 when both are the same single condition).

>>> from stableval.datasets.ddx import DDxAnnotations
>>> ann = DDxAnnotations.from_selectors([[[[0]]], [[[1]], [[0]]]], conditions=["a", "b"])
>>> result = evaluate_ddx(ann, {"always-a": np.array([[1.0, 0.0], [1.0, 0.0]])}, n_draws=200, top_k=(1,))
>>> round(float(result.accuracy["frozen_accuracy"][0]), 2)     # case 1: a; case 2: a and b tie (1/2 each)
0.75
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.aggregate._base import clone
from stableval.aggregate.rankings.base import RankingAggregator, top_entries
from stableval.aggregate.rankings.irn import IRN
from stableval.aggregate.rankings.method import RankingMethod
from stableval.aggregate.rankings.registry import RANKING_REGISTRY, resolve_ranking_methods
from stableval.console import Displayed
from stableval.data.rankings import Rankings
from stableval.datasets.ddx import RISK_NAMES, DDxAnnotations
from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval
from stableval.evaluate.rater_bootstrap import chunk_size, draw_ratings, interval_text, nanmean
from stableval.progress import progress_bar

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["RISK_NAMES", "TOP_K", "DDxResult", "evaluate_ddx", "noisy_predictor", "positions"]

#: How the header names an aggregation method, where its label alone says too little.
AGGREGATION_NOTES = {"irn": "IRN (1/g per group, ties share)"}

#: The k of the top-k accuracies reported by default.
TOP_K = (1, 3, 5)


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
class DDxResult(Displayed):
    """Top-k accuracy over rater-bootstrap ground truths, and per-case annotation certainty.

    Attributes:
        accuracy: one row per (model, k, risk): ``model``, ``k``, ``risk`` (``all`` or the ground truth's risk
            category), ``accuracy`` (mean over draws), ``ci_low``, ``ci_high`` (percentile interval over draws),
            ``cases`` (mean number of cases in the stratum per draw; tied ground truths count fractionally),
            ``frozen_accuracy`` (against the top-1 of all rankings), ``plausibility_accuracy`` (the expected
            top-k hit with each case's truth drawn from its plausibility; per risk stratum, over the plausibility
            mass of that stratum's conditions).
        certainty: one row per case: ``case`` (0-based index), ``rankings``, ``top1`` (top-1 of all rankings,
            ties joined by ``" | "``), ``certainty``, ``drawn_top1`` (the most frequent drawn top-1 conditions with
            their shares).
        replicates: (B, models, ks, 1 + risks) accuracy per draw (or posterior sample).
        settings: parameters and dataset counts.
    """

    accuracy: pd.DataFrame
    certainty: pd.DataFrame
    replicates: np.ndarray
    settings: dict[str, Any]
    shown: int = 10  #: least certain cases listed by ``to_dict`` and ``render``
    plausibility: np.ndarray | None = None  #: (N, C) each case's plausibility under the aggregation method
    conditions: tuple[str, ...] = ()  #: the condition names (columns of ``plausibility``)

    def plausibility_frame(self, top: int = 5) -> pd.DataFrame:
        """Each case's ``top`` most plausible conditions: ``case`` (0-based), ``rank``, ``condition``,
        ``plausibility`` (long; for ``--plausibility-out``)."""
        if self.plausibility is None:
            raise ValueError("this result carries no plausibility")
        n, c = self.plausibility.shape
        order = np.argsort(-self.plausibility, axis=1, kind="stable")[:, :min(top, c)]
        values = np.take_along_axis(self.plausibility, order, axis=1)
        names = np.asarray(self.conditions or [str(j) for j in range(c)], dtype=object)
        keep = values.ravel() > 0
        return pd.DataFrame({"case": np.repeat(np.arange(n), order.shape[1])[keep],
                             "rank": np.tile(np.arange(1, order.shape[1] + 1), n)[keep],
                             "condition": names[order.ravel()][keep], "plausibility": values.ravel()[keep]})

    def least_certain(self, n: int = 10) -> pd.DataFrame:
        """The ``n`` cases whose drawn top-1 most often differs from the top-1 of all rankings."""
        return self.certainty.sort_values(["certainty", "case"], kind="stable").head(n).reset_index(drop=True)

    def to_dict(self, least_certain: int | None = None) -> dict[str, Any]:
        """JSON-ready: settings, the accuracy records and a summary of the certainty (with the ``least_certain``
        cases, default ``shown``); NaN becomes None."""
        cert = self.certainty["certainty"]
        n = self.shown if least_certain is None else least_certain
        return {"settings": jsonable(self.settings), "accuracy": records(self.accuracy),
                "certainty": {"mean": float(cert.mean()), "certain_cases": int((cert == 1).sum()),
                              "least_certain": records(self.least_certain(n))}}

    def to_frame(self) -> pd.DataFrame:
        """One row per (model, k, risk)."""
        return self.accuracy

    def render(self, console: Console) -> None:
        """Top-k accuracy by risk, the annotation certainty, and the ``shown`` least certain cases."""
        from rich import box
        from rich.table import Table

        s = self.settings
        head = (f"[bold]{s['source']}[/]: {s['cases']:,} cases, {s['rankings']:,} partial rankings, "
                f"{s['conditions']} conditions; ")
        if s.get("samples") == "posterior":
            console.print(head + f"ground truths: {s['n_draws']:,} posterior samples of each case's plausibility "
                          f"under {s['aggregation']} (seed {s['seed']}).")
        else:
            how = "all of its rankings" if not s["k"] else f"{s['k']} ranking(s)"
            console.print(head + f"per draw each case gets {how} drawn with replacement, aggregated by "
                          f"{s['aggregation']}; {s['n_draws']:,} draws (seed {s['seed']}).")
        for note in s["notes"]:
            console.print(f"  note: {note}")
        pct = round(100 * s["confidence"])
        r: Any
        if s["models"]:
            strata = list(dict.fromkeys(self.accuracy["risk"]))
            table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"Top-k accuracy % [{pct}% interval] by "
                          "risk of the ground-truth condition", title_justify="left")
            table.add_column("Model")
            table.add_column("k", justify="right")
            for stratum in strata:
                table.add_column(stratum if stratum == "all" else f"{stratum} risk", justify="right")
            table.add_column("frozen key (all)", justify="right")
            for (model, k), rows in self.accuracy.groupby(["model", "k"], sort=False):
                cells = [interval_text(*values) for values in rows[["accuracy", "ci_low", "ci_high"]].to_numpy(float)]
                table.add_row(str(model), str(k), *cells, f"{100 * rows['frozen_accuracy'].iloc[0]:.1f}")
            console.print(table)
            if len(strata) > 1:
                cases = self.accuracy.drop_duplicates("risk").set_index("risk")["cases"]
                console.print("Cases per stratum (mean per draw): "
                              + ", ".join(f"{k} {v:,.1f}" for k, v in cases.items()))
        else:
            console.print("No --predictions given: annotation certainty only.")
        cert = self.certainty["certainty"]
        console.print(f"Annotation certainty (P(drawn top-1 = top-1 of all rankings)): mean {cert.mean():.3f}; "
                      f"{int((cert == 1).sum()):,} of {len(cert):,} cases always agree.")
        if self.shown:
            table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"{self.shown} least certain cases",
                          title_justify="left")
            for column in ("case", "rankings", "certainty", "top-1 of all rankings", "drawn top-1 (share)"):
                table.add_column(column, justify="right" if column in ("case", "rankings", "certainty") else "left")
            for r in self.least_certain(self.shown).itertuples(index=False):
                table.add_row(str(r.case), str(r.rankings), f"{r.certainty:.3f}", r.top1, r.drawn_top1)
            console.print(table)


@dataclass(frozen=True)
class _Draws:
    """What the bootstrap accumulates over draws."""

    replicates: np.ndarray     # (B, models, ks, strata) top-k accuracy per draw
    stratum_cases: np.ndarray  # (strata,) cases per stratum, summed over draws
    certainty: np.ndarray      # (N,) P(drawn top-1 = top-1 of all rankings)
    drawn_top: np.ndarray      # (N, C) share of draws whose top-1 is each condition


def evaluate_ddx(
    annotations: DDxAnnotations,
    predictions: Mapping[str, np.ndarray] | None = None,
    *,
    method: str | RankingAggregator | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    k: int | None = 3,
    n_draws: int = 1000,
    top_k: Sequence[int] = TOP_K,
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> DDxResult:
    """Top-k accuracy of every model (N × C score matrices) over rater-bootstrap ground truths; per-case certainty.

    Steps: each model's ranking positions (:func:`positions`), the bootstrap over rankings, then the accuracy
    table (with the frozen key of all rankings) and the certainty table. ``method`` is a registered ranking
    method's name (built with its ``params``, e.g. ``{"pl": {"prior_shape": 3}}``) or an estimator.

    Source: Stutz et al. (2023), arXiv:2307.02191 (IRN aggregation of partial rankings, top-k accuracy, rater
    bootstrap); the bootstrap as in Saab et al. (2024), arXiv:2404.18416, App. C.2.

    >>> from stableval.datasets.ddx import DDxAnnotations
    >>> ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[1]], [[1], [0]]]], conditions=["a", "b"])
    >>> scores = np.array([[0.9, 0.1], [0.2, 0.8]])          # predicts a, then b
    >>> result = evaluate_ddx(ann, {"m": scores}, n_draws=4000, top_k=(1,), seed=0)
    >>> round(float(result.accuracy["accuracy"][0]), 2)      # case 1: P(a wins 3 draws) = 1/2; case 2: always b
    0.75
    """
    ks = tuple(int(v) for v in top_k)
    if any(v < 1 for v in ks) or not ks:
        raise ValueError("top_k must be positive integers")
    if k is not None and k < 1:
        raise ValueError("k must be at least 1 (or None)")
    name, ranking_method, estimator = _resolve(method, params)
    names, pos = _model_positions(annotations, dict(predictions or {}))
    rankings = annotations.rankings()
    posterior = ranking_method is not None and ranking_method.samples == "posterior"
    check_draws_not_in_params(params)
    if posterior:
        estimator.set_params(samples=n_draws)
    fit = estimator.fit(rankings)
    plausibility = fit.plausibility_matrix()
    full_top = np.zeros((annotations.n_cases, annotations.n_conditions), dtype=bool)
    full_top[fit.top_entries()] = True
    tops = (_posterior_tops(fit) if posterior
            else _bootstrap_tops(annotations, rankings, estimator, k=k, n_draws=n_draws, seed=seed,
                                 draws_per_fit=ranking_method.draws_per_fit if ranking_method else None))
    draws = _bootstrap(annotations, pos, ks, full_top, tops, n_draws=n_draws, progress=progress)
    accuracy = _accuracy_frame(annotations, names, pos, ks, full_top, plausibility, draws, n_draws=n_draws,
                               confidence=confidence)
    certainty_frame = _certainty_frame(annotations, full_top, draws.certainty, draws.drawn_top)
    label = ranking_method.label if ranking_method is not None else type(estimator).__name__
    how = "posterior" if posterior else "bootstrap"
    settings = {"source": annotations.source, "cases": annotations.n_cases, "rankings": annotations.n_rankings,
                "conditions": annotations.n_conditions, "k": None if posterior else k, "n_draws": n_draws,
                "top_k": list(ks), "seed": seed, "confidence": confidence, "models": names,
                "risks": annotations.risks is not None, "method": name, "samples": how,
                "aggregation": AGGREGATION_NOTES.get(name, label),
                "notes": list(annotations.notes)}
    return DDxResult(accuracy=accuracy, certainty=certainty_frame, replicates=draws.replicates, settings=settings,
                     plausibility=plausibility, conditions=tuple(annotations.conditions))


def check_draws_not_in_params(params: Mapping[str, Mapping[str, Any]] | None) -> None:
    """Refuse a posterior method's ``samples`` among ``params``: the DDx study sets it to its number of draws.

    >>> check_draws_not_in_params({"bayes-pl": {"samples": 50}})
    Traceback (most recent call last):
    ...
    ValueError: bayes-pl.samples is the number of draws here: set it with n_draws (--draws)
    """
    for name, values in (params or {}).items():
        if RANKING_REGISTRY[name].samples == "posterior" and "samples" in values:
            raise ValueError(f"{name}.samples is the number of draws here: set it with n_draws (--draws)")


def _resolve(method: str | RankingAggregator | None, params: Mapping[str, Mapping[str, Any]] | None = None
             ) -> tuple[str, RankingMethod | None, RankingAggregator]:
    """(name, registered method or None, a fresh estimator) of ``method`` (a name, an estimator, or the default),
    a registered method built with its ``params``."""
    if isinstance(method, RankingAggregator):
        if params:
            raise ValueError("params apply to a ranking method given by name, not to an estimator")
        known = [m for m in RANKING_REGISTRY.values() if isinstance(method, m.estimator)]
        return (known[0].name if known else type(method).__name__), (known[0] if known else None), clone(method)
    name, found, estimator = resolve_ranking_methods(None if method is None else [method], params)[0]
    return name, found, estimator


#: One chunk of ground-truth samples: (first sample, how many) → (row = sample · N + case, condition) of the
#: conditions tied for the top of each sample's plausibility.
TopSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def _bootstrap_tops(annotations: DDxAnnotations, rankings: Rankings, estimator: RankingAggregator, *,
                    k: int | None, n_draws: int, seed: int | None,
                    draws_per_fit: int | None = None) -> tuple[TopSource, int]:
    """The rater bootstrap: each case's rankings drawn with replacement, the draw aggregated by ``estimator``
    (all draws of a chunk in one fit, each (draw, case) an item of its own; at most ``draws_per_fit`` draws per
    chunk)."""
    n = annotations.n_cases
    rng = np.random.default_rng(seed)
    width = int(annotations.rankings_per_case.max()) if k is None else k

    def tops(start: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        drawn, valid = draw_ratings(annotations.case_offsets, k, b, rng)         # (b, N, width)
        rows = np.broadcast_to(np.arange(b * n).reshape(b, n, 1), drawn.shape)
        if valid is not None:
            keep = np.broadcast_to(valid, drawn.shape)
            drawn, rows = drawn[keep], rows[keep]
        if type(estimator) is IRN:   # the same tops by the annotations' exact integer sums, 2.6× faster
            return annotations.top_entries(drawn.ravel(), rows.ravel())
        sample = rankings.take(drawn.ravel(), item_of=rows.ravel(), n_items=b * n)
        return clone(estimator).fit(sample).top_entries()

    return tops, min(chunk_size(n, 4 * width, n_draws), draws_per_fit or n_draws)


def _posterior_tops(fit: RankingAggregator) -> tuple[TopSource, int]:
    """The model's own posterior samples of each case's plausibility (``sample_plausibility_``)."""
    samples = fit.sample_plausibility_

    def tops(start: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        return top_entries(fit.slots_, samples[start:start + b])

    return tops, max(1, min(samples.shape[0], 4_000_000 // max(1, fit.slots_.n_slots)))


def _model_positions(annotations: DDxAnnotations,
                     predictions: Mapping[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """Model names and (models, N, C) ranking position of every condition (scores checked for shape)."""
    n, c = annotations.n_cases, annotations.n_conditions
    names = list(predictions)
    if not names:
        return names, np.zeros((0, n, c), dtype=np.int64)
    return names, np.stack([positions(_check_shape(predictions[m], (n, c), m)) for m in names])


def _bootstrap(annotations: DDxAnnotations, pos: np.ndarray, ks: tuple[int, ...], full_top: np.ndarray,
               source: tuple[TopSource, int], *, n_draws: int, progress: bool) -> _Draws:
    """Take each sample's tied top-1 per case (``source``: the rater bootstrap or posterior samples) and score
    every model's top-k on it."""
    n, c = annotations.n_cases, annotations.n_conditions
    risks = annotations.risks
    n_strata = 1 + (len(RISK_NAMES) if risks is not None else 0)
    tops, step = source
    replicates = np.empty((n_draws, pos.shape[0], len(ks), n_strata))
    stratum_cases = np.zeros(n_strata)
    certainty = np.zeros(n)
    drawn_top = np.zeros(n * c)
    with progress_bar("DDx ground-truth samples", total=n_draws, enabled=progress) as bar:
        for start in range(0, n_draws, step):
            b = min(start + step, n_draws) - start
            row, cond = tops(start, b)                                                # tied top-1 per (draw, case)
            weight = 1.0 / np.bincount(row, minlength=b * n)[row]
            draw, case = np.divmod(row, n)
            certainty += np.bincount(case, weights=weight * full_top[case, cond], minlength=n)
            drawn_top += np.bincount(case * c + cond, weights=weight, minlength=n * c)
            stratum = np.zeros((b, n_strata))
            stratum[:, 0] = n
            if risks is not None:
                stratum[:, 1:] = np.bincount(draw * 3 + risks[cond], weights=weight, minlength=b * 3).reshape(b, 3)
            stratum_cases += stratum.sum(axis=0)
            replicates[start:start + b] = _top_k_hits(pos, ks, case, cond, draw, weight, stratum, risks, n)
            bar.advance(b)
    certainty /= n_draws * full_top.sum(axis=1)
    return _Draws(replicates=replicates, stratum_cases=stratum_cases, certainty=certainty,
                  drawn_top=drawn_top.reshape(n, c) / n_draws)


def _top_k_hits(pos: np.ndarray, ks: tuple[int, ...], case: np.ndarray, cond: np.ndarray, draw: np.ndarray,
                weight: np.ndarray, stratum: np.ndarray, risks: np.ndarray | None, n: int) -> np.ndarray:
    """(b, models, ks, strata) top-k accuracy of each model in each draw of a chunk (ties share the credit)."""
    b = stratum.shape[0]
    out = np.empty((b, pos.shape[0], len(ks), stratum.shape[1]))
    for a in range(pos.shape[0]):
        rank = pos[a, case, cond]
        for j, top_k_value in enumerate(ks):
            hit = weight * (rank < top_k_value)
            out[:, a, j, 0] = np.bincount(draw, weights=hit, minlength=b) / n
            if risks is not None:
                per = np.bincount(draw * 3 + risks[cond], weights=hit, minlength=b * 3).reshape(b, 3)
                out[:, a, j, 1:] = np.divide(per, stratum[:, 1:], out=np.full(per.shape, np.nan),
                                             where=stratum[:, 1:] > 0)
    return out


def _accuracy_frame(annotations: DDxAnnotations, names: list[str], pos: np.ndarray, ks: tuple[int, ...],
                    full_top: np.ndarray, plausibility: np.ndarray, draws: _Draws, *, n_draws: int,
                    confidence: float) -> pd.DataFrame:
    """One row per (model, k, risk): mean and percentile interval over draws, the frozen-key accuracy and the
    plausibility-weighted accuracy (the expected top-k hit with the truth drawn from each case's plausibility)."""
    n = annotations.n_cases
    risks = annotations.risks
    f_case, f_cond = np.nonzero(full_top)              # frozen key: the top-1 of all rankings (shared ties)
    f_weight = 1.0 / full_top.sum(axis=1)[f_case]
    strata = ["all", *RISK_NAMES] if risks is not None else ["all"]
    low, high = percentile_interval(draws.replicates, confidence)
    mean = nanmean(draws.replicates)
    rows = []
    total = plausibility.sum(axis=0)                                   # (C,) plausibility mass of each condition
    masks = [np.ones(annotations.n_conditions, dtype=bool)]
    if risks is not None:
        masks += [risks == level for level in range(len(RISK_NAMES))]
    for a, name in enumerate(names):
        rank = pos[a, f_case, f_cond]
        for j, top_k_value in enumerate(ks):
            hit = f_weight * (rank < top_k_value)
            frozen = [hit.sum() / n]
            if risks is not None:
                per = np.bincount(risks[f_cond], weights=hit, minlength=3)
                den = np.bincount(risks[f_cond], weights=f_weight, minlength=3)
                frozen += list(np.divide(per, den, out=np.full(3, np.nan), where=den > 0))
            inside = (plausibility * (pos[a] < top_k_value)).sum(axis=0)    # (C,) mass inside the top-k
            expected = [float(inside[m].sum() / total[m].sum()) if total[m].sum() > 0 else float("nan")
                        for m in masks]
            for s, stratum_name in enumerate(strata):
                rows.append({"model": name, "k": top_k_value, "risk": stratum_name,
                             "accuracy": float(mean[a, j, s]), "ci_low": float(low[a, j, s]),
                             "ci_high": float(high[a, j, s]), "cases": float(draws.stratum_cases[s] / n_draws),
                             "frozen_accuracy": float(frozen[s]), "plausibility_accuracy": expected[s]})
    return pd.DataFrame(rows, columns=["model", "k", "risk", "accuracy", "ci_low", "ci_high", "cases",
                                       "frozen_accuracy", "plausibility_accuracy"])


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

    >>> from stableval.datasets.ddx import DDxAnnotations
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
