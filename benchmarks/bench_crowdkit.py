"""stableval against crowd-kit 1.4.2, model by model, fitted side by side in one process on the same synthetic frame.

Each pair fits the same crowd-kit-style frame (``task, worker, label``) at each library's own defaults, so each
stops on its own rule (stableval's EM runs to ``tol=1e-8`` relative, crowd-kit stops when its per-judgment
objective gains less than 1e-5); the table gives seconds (stableval's include reading the frame: validation and
encoding), iterations, the ratio crowd-kit / stableval, and the share of tasks given the same label. Models are
the rows of ``MODELS``; one whose estimator stableval lacks (``getattr`` on ``stableval.aggregate``) is skipped.
Without crowd-kit (it is not a dependency) only stableval runs, and the table says so.

    /tmp/ck/bin/python benchmarks/bench_crowdkit.py                       # 1e5 and 1e6 judgments, every model
    python benchmarks/bench_crowdkit.py --sizes 100000 --models DS,Wawa    # stableval only, if crowd-kit is absent
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout with any Python

import stableval.aggregate

#: label, stableval estimator (name in stableval.aggregate, parameters), crowd-kit class (name, parameters)
MODELS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("MV", "MajorityVote", {"ties": "lowest"}, "MajorityVote", {}),
    ("DS", "DawidSkene", {}, "DawidSkene", {"n_iter": 100}),
    ("OneCoinDS", "OneCoinDawidSkene", {}, "OneCoinDawidSkene", {"n_iter": 100}),
    ("Wawa", "Wawa", {}, "Wawa", {}),
    ("ZBS", "ZeroBasedSkill", {}, "ZeroBasedSkill", {}),
    ("GLAD", "GLAD", {}, "GLAD", {}),
    ("MACE", "MACE", {}, "MACE", {}),
]


def synthetic(n_judgments: int, per_task: int = 5, n_workers: int = 2000, n_levels: int = 4,
              seed: int = 0) -> pd.DataFrame:
    """A crowd-kit frame: tasks with ``per_task`` judgments by distinct random workers of accuracy 0.5–0.95, a
    wrong judgment uniform over the other levels; integer ids and labels."""
    rng = np.random.default_rng(seed)
    n_tasks = n_judgments // per_task
    truth = rng.integers(0, n_levels, n_tasks)
    accuracy = rng.uniform(0.5, 0.95, n_workers)
    task = np.repeat(np.arange(n_tasks), per_task)
    worker = (rng.integers(0, n_workers, n_tasks)[:, None] + np.arange(per_task)[None, :] * 7).ravel() % n_workers
    right = rng.random(task.size) < accuracy[worker]
    wrong = (truth[task] + rng.integers(1, n_levels, task.size)) % n_levels
    return pd.DataFrame({"task": task, "worker": worker, "label": np.where(right, truth[task], wrong)})


def crowdkit_module() -> Any:
    """crowd-kit's aggregation module, or None; its Wawa/ZeroBasedSkill get the fitted-check newer scikit-learn
    refuses (as in tests/oracles/make_crowdkit_fixture.py)."""
    try:
        import crowdkit.aggregation as aggregation
        import crowdkit.aggregation.classification.wawa as ck_wawa
        import crowdkit.aggregation.classification.zero_based_skill as ck_zbs
    except ImportError:
        return None

    def check_is_fitted(model: object, attributes: str) -> None:
        if getattr(model, attributes, None) is None:
            raise AttributeError(f"{type(model).__name__} is not fitted")

    ck_wawa.check_is_fitted = ck_zbs.check_is_fitted = check_is_fitted
    return aggregation


def iterations(model: Any) -> str:
    for name in ("n_iter_", "loss_history_"):
        value = getattr(model, name, None)
        if value is not None:
            return str(value if isinstance(value, int | np.integer) else len(value))
    return "-"


def run(frame: pd.DataFrame, ck: Any, names: set[str] | None) -> list[dict[str, Any]]:
    from stableval.data.frames import as_table

    times = []
    for _ in range(2):  # the first call also pays one-off imports
        start = time.perf_counter()
        as_table(frame)
        times.append(time.perf_counter() - start)
    reading = min(times)
    print(f"{len(frame):,} judgments: reading the frame (validation, encoding) takes {reading:.3f} s of each "
          "stableval time", flush=True)
    rows = []
    for label, ours_name, ours_params, theirs_name, theirs_params in MODELS:
        if names and label not in names:
            continue
        estimator = getattr(stableval.aggregate, ours_name, None)
        if estimator is None:
            print(f"{label}: stableval has no {ours_name} (yet): skipped", flush=True)
            continue
        start = time.perf_counter()
        ours = estimator(**ours_params).fit(frame)
        ours_s = time.perf_counter() - start
        row: dict[str, Any] = {"model": label, "judgments": len(frame), "stableval_s": round(ours_s, 3),
                               "of_which_reading_s": round(reading, 3), "stableval_iter": iterations(ours)}
        if ck is not None and hasattr(ck, theirs_name):
            start = time.perf_counter()
            theirs = getattr(ck, theirs_name)(**theirs_params)
            labels = theirs.fit_predict(frame)
            theirs_s = time.perf_counter() - start
            mine = ours._label_series()
            mine.index = mine.index.astype(np.int64)
            same = float((mine.loc[labels.index].astype(np.int64).to_numpy() == labels.to_numpy()).mean())
            row.update(crowdkit_s=round(theirs_s, 3), crowdkit_iter=iterations(theirs),
                       ratio=round(theirs_s / ours_s, 1), same_labels=round(same, 4))
        rows.append(row)
        print(row, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="judgments, comma-separated")
    parser.add_argument("--models", default="", help="labels from MODELS, comma-separated (default: all)")
    args = parser.parse_args()
    ck = crowdkit_module()
    if ck is None:
        print("crowd-kit is not installed: timing stableval only (pip install crowd-kit==1.4.2 to compare)")
    names = {m.strip() for m in args.models.split(",") if m.strip()} or None
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        rows += run(synthetic(size), ck, names)
    print()
    print(markdown(rows))


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (columns in first-seen order; blank where a row has no value)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
