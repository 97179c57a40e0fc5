"""Dermatology DDx under every ranking aggregation method: how the choice of method moves the models' accuracy.

:func:`compare_ddx_methods` runs :func:`~stableval.studies.ddx.evaluate_ddx` once per registered ranking method
(:mod:`stableval.aggregate.rankings.registry`) on the same data and models and gathers, per method: each model's
top-1 and top-3 accuracy under uncertain ground truth (mean over the method's ground-truth samples, with the
interval), the distribution of the annotation certainty, the rank order of the models by top-1, and how often the
method changes which model wins (the share of its samples whose top-1 winner differs from the winner of the
reference method, the first one compared).

The models of Stutz et al. (2023) are not public; :func:`synthetic_models` makes four stand-ins (``A``–``D``, from
:func:`~stableval.studies.ddx.noisy_predictor` with decreasing skill) so the table can be produced from the
released annotations alone. They are built against the IRN top-1 of all rankings, which favours IRN-like methods
on frozen keys; the table reads them for the spread a method causes, not for absolute numbers.

>>> from stableval.datasets.ddx import DDxAnnotations
>>> ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[1]], [[1], [0]]]] * 5, conditions=["a", "b", "c"])
>>> table = compare_ddx_methods(ann, synthetic_models(ann), methods=["irn", "pl"], n_draws=50)
>>> table.frame["method"].tolist()
['irn', 'pl']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.aggregate.rankings.registry import resolve_ranking_methods
from stableval.console import Displayed
from stableval.datasets.ddx import DDxAnnotations
from stableval.studies.ddx import DDxResult, check_draws_not_in_params, evaluate_ddx, noisy_predictor

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["SYNTHETIC_SKILL", "DDxComparison", "DDxConformal", "compare_ddx_methods", "conformal_ddx",
           "synthetic_models"]

#: The stand-in models A–D: the probability that each ranks the all-rankings top-1 first.
SYNTHETIC_SKILL = {"A": 0.66, "B": 0.65, "C": 0.64, "D": 0.62}


def synthetic_models(annotations: DDxAnnotations, seed: int = 1) -> dict[str, np.ndarray]:
    """Four stand-in score matrices ``A``–``D`` (:data:`SYNTHETIC_SKILL`), each from its own seed."""
    return {name: noisy_predictor(annotations, p, seed=seed + i) for i, (name, p) in enumerate(SYNTHETIC_SKILL.items())}


@dataclass(frozen=True)
class DDxComparison(Displayed):
    """One row per method (``frame``) and the full result of each (``results``).

    ``frame`` columns: ``method``, ``label``, ``samples`` (bootstrap or posterior), per model ``top1 MODEL`` and
    ``top3 MODEL`` (accuracy % with interval, text) and ``top1_MODEL``/``top3_MODEL`` (the means, numbers),
    ``certainty_mean``, ``certainty_median``, ``certain_share`` (cases whose top-1 never moves),
    ``uncertain_share`` (certainty below 1/2), ``rank_order`` (models by mean top-1, best first), ``winner``, and
    ``winner_changes`` (share of the method's samples whose top-1 winner is not the reference's winner).
    """

    frame: pd.DataFrame
    results: dict[str, DDxResult]
    settings: dict[str, Any]

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def to_dict(self) -> dict[str, Any]:
        numbers = self.frame[[c for c in self.frame.columns if not c.startswith(("top1 ", "top3 "))]]
        return {"settings": jsonable(self.settings), "methods": records(numbers)}

    def render(self, console: Console) -> None:
        from rich import box
        from rich.table import Table

        s = self.settings
        console.print(f"[bold]{s['source']}[/]: {s['cases']:,} cases; models {', '.join(s['models'])}; "
                      f"{s['n_draws']:,} ground-truth samples per method (seed {s['seed']}); reference method "
                      f"{s['reference']}.")
        if s["synthetic"]:
            console.print("  note: models A–D are synthetic stand-ins (the paper's predictions are not public).")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Top-1 / top-3 accuracy % by aggregation "
                      "method", title_justify="left")
        table.add_column("method")
        for model in s["models"]:
            table.add_column(f"{model} top-1", justify="right")
            table.add_column(f"{model} top-3", justify="right")
        for row in self.frame.to_dict("records"):
            cells = [f"{100 * float(row[f'top{k}_{model}']):.1f}" for model in s["models"] for k in (1, 3)]
            table.add_row(str(row["method"]), *cells)
        console.print(table)
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Certainty and the winner", title_justify="left")
        for column in ("method", "samples", "certainty mean", "median", "certain", "< 1/2", "rank order",
                       "winner changes"):
            table.add_column(column, justify="left" if column in ("method", "samples", "rank order") else "right")
        for row in self.frame.to_dict("records"):
            table.add_row(row["method"], row["samples"], f"{row['certainty_mean']:.3f}",
                          f"{row['certainty_median']:.3f}", f"{100 * row['certain_share']:.1f}%",
                          f"{100 * row['uncertain_share']:.1f}%", row["rank_order"],
                          f"{100 * row['winner_changes']:.1f}%")
        console.print(table)


def compare_ddx_methods(annotations: DDxAnnotations, predictions: Mapping[str, np.ndarray],
                        methods: str | Sequence[str] | None = "all", *, k: int | None = 3, n_draws: int = 200,
                        seed: int | None = 0, confidence: float = 0.95, synthetic: bool = False,
                        progress: bool = False, params: Mapping[str, Mapping[str, Any]] | None = None
                        ) -> DDxComparison:
    """Evaluate the same models under each ranking method (``methods``: names, a comma-separated text or
    ``all``; each built with its ``params``); the first method is the reference for ``winner_changes``."""
    names = list(predictions)
    if not names:
        raise ValueError("compare_ddx_methods needs at least one model's predictions")
    check_draws_not_in_params(params)
    resolved = resolve_ranking_methods(methods, params)
    results: dict[str, DDxResult] = {}
    rows = []
    reference_winner: int | None = None
    for name, method, estimator in resolved:
        result = evaluate_ddx(annotations, predictions, method=estimator, k=k, n_draws=n_draws, seed=seed,
                              top_k=(1, 3), confidence=confidence, progress=progress)
        results[name] = result
        overall = result.accuracy[result.accuracy["risk"] == "all"].set_index(["model", "k"])
        top1 = np.array([overall.loc[(m, 1), "accuracy"] for m in names])
        per_draw = result.replicates[:, :, 0, 0]                                       # (B, models) top-1
        winners = np.argmax(per_draw, axis=1)
        if reference_winner is None:
            reference_winner = int(np.argmax(top1))
        certainty = result.certainty["certainty"].to_numpy()
        row: dict[str, Any] = {"method": name, "label": method.label, "samples": method.samples}
        for m in names:
            for kk in (1, 3):
                mean, low, high = overall.loc[(m, kk), ["accuracy", "ci_low", "ci_high"]].to_numpy(float)
                row[f"top{kk} {m}"] = f"{100 * mean:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
                row[f"top{kk}_{m}"] = float(mean)
        order = np.argsort(-top1, kind="stable")
        row.update({"certainty_mean": float(certainty.mean()), "certainty_median": float(np.median(certainty)),
                    "certain_share": float(np.mean(certainty >= 1 - 1e-12)),
                    "uncertain_share": float(np.mean(certainty < 0.5)),
                    "rank_order": " > ".join(names[i] for i in order), "winner": names[int(order[0])],
                    "winner_changes": float(np.mean(winners != reference_winner))})
        rows.append(row)
    settings = {"source": annotations.source, "cases": annotations.n_cases, "models": names, "k": k,
                "n_draws": n_draws, "seed": seed, "confidence": confidence, "reference": resolved[0][0],
                "synthetic": synthetic}
    return DDxComparison(frame=pd.DataFrame(rows), results=results, settings=settings)


@dataclass(frozen=True)
class DDxConformal(Displayed):
    """Monte Carlo conformal prediction sets (:mod:`stableval.evaluate.conformal`) of every model on DDx, calibrated
    on the plausibilities of one half of the cases and measured on the other.

    Attributes:
        summary: one row per model: ``model``, ``alpha``, ``threshold``, ``coverage`` (mean plausibility mass
            inside the held-out cases' sets), ``ci_low``/``ci_high`` (normal 95% interval over held-out cases),
            ``mean_size``, ``empty`` (share of empty sets), ``calibration``, ``held_out`` (cases).
        sets: one row per (model, held-out case): ``model``, ``case`` (0-based), ``size``, ``coverage``, ``set``
            (the conditions, best first, joined by ``" | "``).
        settings: the method, alpha, seed and counts.
    """

    summary: pd.DataFrame
    sets: pd.DataFrame
    settings: dict[str, Any]

    def to_frame(self) -> pd.DataFrame:
        return self.summary

    def to_dict(self) -> dict[str, Any]:
        return {"settings": jsonable(self.settings), "summary": records(self.summary)}

    def render(self, console: Console) -> None:
        from rich import box
        from rich.table import Table

        s = self.settings
        console.print(f"[bold]{s['source']}[/]: Monte Carlo conformal prediction, alpha {s['alpha']}, "
                      f"plausibility by {s['method']}, {s['samples']} labels drawn per calibration case; "
                      f"{s['calibration']:,} calibration / {s['held_out']:,} held-out cases (seed {s['seed']}).")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"Coverage of the ambiguous ground truth "
                      f"(target {1 - s['alpha']:.2f}) and set size on held-out cases", title_justify="left")
        for column in ("model", "threshold", "coverage", "95% interval", "mean size", "empty"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for row in self.summary.to_dict("records"):
            table.add_row(row["model"], f"{row['threshold']:.4g}", f"{row['coverage']:.3f}",
                          f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]", f"{row['mean_size']:.2f}",
                          f"{100 * row['empty']:.1f}%")
        console.print(table)


def conformal_ddx(annotations: DDxAnnotations, predictions: Mapping[str, np.ndarray], alpha: float, *,
                  method: str | None = None, samples: int = 10, calibration: float = 0.5,
                  seed: int | None = 0, params: Mapping[str, Mapping[str, Any]] | None = None) -> DDxConformal:
    """Prediction sets for every model: plausibilities from the ranking ``method`` (default: the registry's),
    cases split by ``seed`` into calibration and held-out, threshold by :func:`monte_carlo_conformal` on the
    calibration cases, coverage and set size on the held-out ones. Scores must be comparable across cases (e.g.
    probabilities). ``params``: the ranking method's hyper-parameters, as for :func:`evaluate_ddx`."""
    from stableval.evaluate.conformal import coverage, monte_carlo_conformal, split_cases

    _, found, estimator = resolve_ranking_methods(None if method is None else [method], params)[0]
    plausibility = estimator.fit(annotations.rankings()).plausibility_matrix()
    cal, test = split_cases(annotations.n_cases, calibration, seed=seed)
    if cal.size == 0 or test.size == 0:
        raise ValueError("the split leaves no calibration or no held-out case")
    names = np.asarray(annotations.conditions, dtype=object)
    summary, sets = [], []
    for name, scores in predictions.items():
        scores = np.asarray(scores, dtype=float)
        fit = monte_carlo_conformal(scores[cal], plausibility[cal], alpha, samples=samples, rng=seed)
        chosen = fit.predict(scores[test])
        covered = coverage(chosen, plausibility[test])
        size = chosen.sum(axis=1)
        half = 1.959963984540054 * covered.std(ddof=1) / np.sqrt(covered.size) if covered.size > 1 else np.nan
        summary.append({"model": name, "alpha": alpha, "threshold": fit.threshold, "coverage": float(covered.mean()),
                        "ci_low": float(covered.mean() - half), "ci_high": float(covered.mean() + half),
                        "mean_size": float(size.mean()), "empty": float(np.mean(size == 0)),
                        "calibration": int(cal.size), "held_out": int(test.size)})
        order = np.argsort(-scores[test], axis=1, kind="stable")
        for row, case in enumerate(test.tolist()):
            members = [names[j] for j in order[row, :int(size[row])]]
            sets.append({"model": name, "case": case, "size": int(size[row]), "coverage": float(covered[row]),
                         "set": " | ".join(members)})
    settings = {"source": annotations.source, "alpha": alpha, "method": found.name, "samples": samples,
                "calibration": int(cal.size), "held_out": int(test.size), "seed": seed}
    return DDxConformal(summary=pd.DataFrame(summary), sets=pd.DataFrame(sets), settings=settings)
