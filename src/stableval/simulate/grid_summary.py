"""Summaries of the ablation: mean and 95% Student-t interval per setting, method and metric, best marked.

>>> import pandas as pd
>>> rows = [{"sweep": "s", "parameter": "hard", "value": "0", "index": 0, "method": m, "trial": t, "mse": e,
...          "rank_accuracy": 1 - e, "kendall_tau": 1 - e, "stability": 1 - e}
...         for m, e in (("mv", 0.2), ("stableval", 0.1)) for t in range(3)]
>>> summary = summarise(pd.DataFrame(rows))
>>> summary[summary["metric"] == "mse"][["method", "best"]].values.tolist()
[['mv', False], ['stableval', True]]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stableval.aggregate.registry import method_label, method_names
from stableval.evaluate.intervals import t_interval
from stableval.simulate.grid_config import Sweep
from stableval.simulate.metrics import METRICS

__all__ = ["METRIC_LABELS", "METRIC_UNITS", "summarise", "sweep_markdown"]

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
    order = {method: i for i, method in enumerate(dict.fromkeys([*method_names(), *sorted(set(trials["method"]))]))}
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
        lines.append("| " + " | ".join([sweep.name, *[method_label(m) for m in methods]]) + " |")
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
