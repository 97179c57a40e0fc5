"""Figures of the Relabeled MedQA study: questions kept and accuracy per cumulative exclusion step
(:func:`medqa_figure`), and the two-step design's answer changes and agreement (:func:`two_step_figure`).

>>> import io
>>> from stableval.datasets.medqa import load_medqa
>>> from stableval.studies.medqa import evaluate_medqa
>>> csv = io.StringIO("qid,worker_id,answer_idx,blind_answers,important_info_missing,seen_change,"
...                   "seen_answerable,seen_answers\\n1,a,A,['A'],FALSE,FALSE,,\\n2,a,B,['C'],TRUE,FALSE,,\\n")
>>> figure = medqa_figure(evaluate_medqa(load_medqa(csv), {"always-A": ["A", "A"]}, n_draws=10))
>>> figure.axes[0].get_ylabel()
'percent (%)'
>>> from stableval.studies.medqa_two_step import two_step
>>> _ = csv.seek(0)
>>> len(two_step_figure(two_step(load_medqa(csv))).axes)
2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stableval.report.figures.base import new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from stableval.studies.medqa import MedQAResult
    from stableval.studies.medqa_two_step import TwoStepResult

__all__ = ["PLOT_FILTERS", "medqa_figure", "two_step_figure"]

#: The cumulative filters of the paper's Figure 3, in order.
PLOT_FILTERS = ("none", "missing_info", "missing_info+label_error", "combined")


def medqa_figure(result: MedQAResult) -> Figure:
    """Bar plot in the spirit of Saab et al. (2024), Figure 3: per cumulative exclusion step, the share of
    questions kept and each model's accuracy (%, mean over draws, error bars = percentile interval)."""
    steps = ["original key", "w/o missing info", "+ w/o label errors", "+ w/o multiple answers"]
    exclusions = result.exclusions.set_index("filter").loc[list(PLOT_FILTERS)]
    series: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    kept = 100 * (1 - exclusions["share"].to_numpy())
    series.append(("questions kept", kept, 100 * (1 - exclusions["ci_high"].to_numpy()),
                   100 * (1 - exclusions["ci_low"].to_numpy())))
    for model in result.settings["models"]:
        rows = result.accuracy[result.accuracy["model"] == model].set_index("filter").loc[list(PLOT_FILTERS)]
        series.append((f"{model} accuracy", 100 * rows["accuracy"].to_numpy(), 100 * rows["ci_low"].to_numpy(),
                       100 * rows["ci_high"].to_numpy()))
    fig = new_figure(max(6.0, 1.6 * len(steps) + 0.6 * len(series)), 4.8)
    ax = fig.add_subplot()
    x = np.arange(len(steps))
    width = 0.8 / len(series)
    for s, (label, mean, low, high) in enumerate(series):
        low = np.where(np.isfinite(low), low, mean)
        high = np.where(np.isfinite(high), high, mean)
        error = np.vstack([np.maximum(mean - low, 0), np.maximum(high - mean, 0)])
        bars = ax.bar(x + (s - (len(series) - 1) / 2) * width, mean, width, yerr=error, capsize=3, label=label)
        # each value upright above its error bar (level labels side by side overlap on narrow bars)
        for bar, value, top in zip(bars, mean, np.maximum(high, mean), strict=True):
            ax.text(bar.get_x() + bar.get_width() / 2, top + 1.5, f"{value:.1f}", rotation=90, ha="center",
                    va="bottom", fontsize=7)
    ax.set_ylim(0, 122)  # from 0, so bar heights compare; room above 100% for the upright labels
    ax.set_yticks(range(0, 101, 20))
    ax.set_xticks(x, steps)
    k = result.settings["k"]
    ax.set_xlabel(f"questions excluded cumulatively (unanimous vote of {k} bootstrapped raters)"
                  if result.settings["vote"] == "unanimous" else
                  f"questions excluded cumulatively (majority of {k} bootstrapped raters)")
    ax.set_ylabel("percent (%)")
    ax.set_title(f"Relabeled MedQA: share of questions kept and each model's accuracy per exclusion step\n(mean over "
                 f"{result.settings['n_draws']:,} draws, {round(100 * result.settings['confidence'])}% intervals)",
                 fontsize=10)
    fig.legend(fontsize=8, loc="outside lower center", ncols=min(len(series), 3), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def two_step_figure(result: TwoStepResult) -> Figure:
    """Two panels: per blind outcome, the % of ratings changed after seeing the key and the % accepting the key
    then; and the agreement measures (shares), blind versus seen."""
    changes = result.changes[result.changes["blind"] != "all"]
    fig = new_figure(10.0, 4.2)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(changes))
    for s, (column, label) in enumerate((("changed_share", "changed the answer"),
                                         ("accepts_key_share", "accept the key after seeing it"))):
        bars = left.bar(x + (s - 0.5) * 0.4, 100 * changes[column].to_numpy(dtype=float), 0.4, label=label)
        left.bar_label(bars, fmt="%.1f", padding=2, fontsize=7)
    left.set_xticks(x, [f"{b}\n(n={n:,})" for b, n in zip(changes["blind"], changes["ratings"], strict=True)])
    left.set_xlabel("blind answer, compared with the key")
    left.set_ylabel("% of ratings")
    left.set_ylim(0, 110)
    left.legend(fontsize=8, loc="upper left")
    shares = result.agreement.iloc[:2]
    y = np.arange(len(shares))
    for s, column in enumerate(("blind", "seen")):
        bars = right.bar(y + (s - 0.5) * 0.4, 100 * shares[column].to_numpy(dtype=float), 0.4, label=column)
        right.bar_label(bars, fmt="%.1f", padding=2, fontsize=7)
    right.set_xticks(y, ["identical answers\n(rater pairs)", "answers include\nthe key (ratings)"])
    right.set_ylabel("%")
    right.set_ylim(0, 110)
    right.legend(fontsize=8, loc="upper left")
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Relabeled MedQA two-step design: answers before (blind) and after seeing the key", fontsize=10)
    return fig
