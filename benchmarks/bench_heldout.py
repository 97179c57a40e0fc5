"""Held-out judgment prediction: how well each rater model predicts a judgment it did not see, on sets without gold.

Without per-response gold (MT-Bench, QAGS, MSLR) accuracy cannot be measured, but a rater model can be checked the
way any probabilistic model is: hide some judgments, fit on the rest, and score the hidden ones. The judgments are
cut into ``--folds`` random folds (seeded); for each fold the method is fitted on the other judgments
(``fit_matrix`` on the response matrix without them) and a hidden judgment (response i, rater r, level l) gets
probability ``sum_k posterior_i(k) * confusion_r[k, l]``. A hidden judgment is scored only when its response keeps
another judgment and its rater keeps one too (otherwise there is nothing to predict from; the count is printed).
MV has no rater model: its prediction is the response's remaining vote shares with add-one smoothing.

Reported per (data set, method): mean log predictive probability per hidden judgment (higher is better; the
difference between two methods is a log Bayes factor per judgment) and the hit rate (the most probable level is the
one the rater gave). See docs/accuracy.md, section "The ordinal rater model".

Run:  python benchmarks/bench_heldout.py [--data ../shared/data] [--folds 5] [--only MT-Bench,QAGS]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import stableval
from stableval import DawidSkene, Stableval
from stableval.aggregate import Aggregator
from stableval.aggregate.ordinal import OrdinalRaters
from stableval.data.table import AnnotationTable
from stableval.datasets import load_dataset

#: (label, factory) of the rater models compared; MV (smoothed vote shares) is always added first
MODELS: list[tuple[str, Callable[[], Aggregator]]] = [
    ("DS", lambda: DawidSkene()),
    ("STABLEVAL", lambda: Stableval()),
    ("STABLEVAL alpha_pi=2", lambda: Stableval(alpha_pi=2.0)),  # add-one smoothed confusion rows
    ("ORDINAL", lambda: OrdinalRaters()),
    ("ORDINAL strength=inf", lambda: OrdinalRaters(strength=float("inf"))),
]

TRUTH = "zheng2017_truth_inference"
#: (name, loader from the data folder)
DATASETS: list[tuple[str, Callable[[Path], AnnotationTable]]] = [
    ("MT-Bench", lambda data: stableval.read_any(stableval.example_path(), duplicates="keep")),
    ("QAGS", lambda data: load_dataset("qags", data / "qags" / "data").table),
    ("MSLR", lambda data: load_dataset("mslr", data / "mslr").table),
    ("S_Face", lambda data: load_dataset("truth-inference", data / TRUTH / "s4_Face_Sentiment_Identification").table),
    ("S_Rel", lambda data: load_dataset("truth-inference", data / TRUTH / "s4_Relevance").table),
    ("S_Adult", lambda data: load_dataset("truth-inference", data / TRUTH / "s5_AdultContent").table),
]


def heldout_scores(table: AnnotationTable, folds: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """Per method: (mean log predictive probability, hit rate, fit seconds) over the scored hidden judgments."""
    X = table.response_matrix().tocoo()
    k, n_raters = table.n_levels, table.n_raters
    response, column, count = X.row, X.col, X.data
    rater, level = column // k, column % k
    fold = np.random.default_rng(seed).integers(0, folds, len(count))
    logs: dict[str, list[np.ndarray]] = {"MV": []}
    hits: dict[str, list[np.ndarray]] = {"MV": []}
    seconds: dict[str, float] = {"MV": 0.0}
    scored_total = 0
    for f in range(folds):
        train = fold != f
        X_train = sp.csr_matrix((count[train], (response[train], column[train])), shape=X.shape)
        per_response = np.bincount(response[train], weights=count[train], minlength=X.shape[0])
        per_rater = np.bincount(rater[train], weights=count[train], minlength=n_raters)
        scored = ~train & (per_response[response] > 0) & (per_rater[rater] > 0)
        scored_total += int(scored.sum())
        i, r, given, weight = response[scored], rater[scored], level[scored], count[scored]
        votes = np.asarray(sp.csr_matrix((count[train], (response[train], level[train])),
                                         shape=(X.shape[0], k)).toarray())
        shares = (votes + 1.0) / (votes.sum(axis=1, keepdims=True) + k)
        logs["MV"].append(np.repeat(np.log(shares[i, given]), weight.astype(int)))
        hits["MV"].append(np.repeat(shares[i].argmax(axis=1) == given, weight.astype(int)))
        for label, factory in MODELS:
            start = time.perf_counter()
            model = factory().fit_matrix(X_train, n_raters, k)
            seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start
            predictive = np.einsum("nk,nkl->nl", model.posteriors_[i], np.asarray(model.confusion_)[r])
            logs.setdefault(label, []).append(
                np.repeat(np.log(np.maximum(predictive[np.arange(len(i)), given], 1e-300)), weight.astype(int)))
            hits.setdefault(label, []).append(np.repeat(predictive.argmax(axis=1) == given, weight.astype(int)))
    print(f"  {scored_total} of {len(count)} stored judgments scored", file=sys.stderr)
    return {label: (float(np.concatenate(logs[label]).mean()), float(np.concatenate(hits[label]).mean()),
                    seconds[label]) for label in logs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma-separated data set names")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    labels = ["MV", *(label for label, _ in MODELS)]
    print("| data set | K | judgments | " + " | ".join(f"{m} log p | {m} hit" for m in labels) + " |")
    print("|---|---:|---:|" + "---:|---:|" * len(labels))
    for name, loader in DATASETS:
        if only and name not in only:
            continue
        table = loader(args.data)
        print(f"{name}: {table.n_responses} responses, {table.n_raters} raters, levels {table.levels}",
              file=sys.stderr)
        scores = heldout_scores(table, args.folds, args.seed)
        cells = " | ".join(f"{scores[m][0]:.4f} | {scores[m][1]:.3f}" for m in labels)
        print(f"| {name} | {table.n_levels} | {int(table.response_matrix().sum())} | {cells} |", flush=True)
        print("  fit seconds (all folds): " + ", ".join(f"{m} {scores[m][2]:.1f}" for m in labels), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
