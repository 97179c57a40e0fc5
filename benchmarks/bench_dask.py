"""The Dask executor against the in-memory path: read + Dawid–Skene fit of a simulated Parquet dataset.

For each size, the same files are read and fitted (Dawid–Skene, defaults) three ways, side by side in one process:
in memory (``load`` + ``DawidSkene().fit``), and on a ``LocalCluster`` of 1 and of 2 worker processes (one thread
each: ``PartitionedTable.read`` + ``get_method("ds").fit``). Printed per run: read seconds, fit seconds, E-steps,
fit seconds per E-step (fixed costs included), and the bytes that cross the network per E-step (sums up,
parameters down). Also checks that the fits agree (largest posterior difference).

    python benchmarks/bench_dask.py --sizes 1000000,10000000

Data: 10 agents, 1,000 raters, K = 3, 4 judgments per response, integer ids (as issue 14's benchmark), written as
8 Parquet files of row groups of 1,000,000 rows; a rater may judge a response twice (``duplicates="keep"``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

N_AGENTS, N_RATERS, K, PER_RESPONSE, FILES = 10, 1000, 3, 4, 8


def simulate(n_judgments: int, folder: Path, seed: int = 0) -> None:
    """A Dawid–Skene sample: true levels per response, raters' confusion matrices (accuracy 0.6-0.95)."""
    rng = np.random.default_rng(seed)
    n_responses = n_judgments // PER_RESPONSE
    truth = rng.choice(K, size=n_responses, p=[0.3, 0.3, 0.4])
    accuracy = rng.uniform(0.6, 0.95, N_RATERS)
    response = np.repeat(np.arange(n_responses), PER_RESPONSE)
    rater = rng.integers(0, N_RATERS, size=response.size)
    right = rng.random(response.size) < accuracy[rater]
    label = np.where(right, truth[response], (truth[response] + rng.integers(1, K, size=response.size)) % K)
    frame = pd.DataFrame({"item": response // N_AGENTS, "agent": response % N_AGENTS, "rater": rater,
                          "label": label.astype(np.int64)}).sample(frac=1.0, random_state=seed)
    for i in range(FILES):
        frame.iloc[i::FILES].to_parquet(folder / f"part-{i}.parquet", index=False, row_group_size=1_000_000)


def run_memory(folder: Path) -> dict[str, Any]:
    from stableval.aggregate import DawidSkene
    from stableval.data import InputOptions, load

    start = time.perf_counter()
    whole = pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))], ignore_index=True)
    whole.to_parquet(folder.parent / "whole.parquet", index=False)
    del whole
    begin = time.perf_counter()
    table = load(folder.parent / "whole.parquet", InputOptions(duplicates="keep")).table
    read = time.perf_counter() - begin
    begin = time.perf_counter()
    model = DawidSkene().fit(table)
    fit = time.perf_counter() - begin
    del start
    return {"read": read, "fit": fit, "n_iter": model.n_iter_, "posteriors": np.asarray(model.posteriors_)}


def run_dask(folder: Path, workers: int) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    from stableval.aggregate.registry import get_method
    from stableval.data import InputOptions
    from stableval.data.partitioned import PartitionedTable

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        begin = time.perf_counter()
        table = PartitionedTable.read(folder, client, InputOptions(duplicates="keep"))
        read = time.perf_counter() - begin
        begin = time.perf_counter()
        model = get_method("ds").fit(table)
        fit = time.perf_counter() - begin
        partitions = len(table.partitions)
    return {"read": read, "fit": fit, "n_iter": model.n_iter_, "partitions": partitions,
            "posteriors": np.asarray(model.posteriors_)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        folder = Path(tempfile.mkdtemp()) / "parts"
        folder.mkdir()
        simulate(size, folder)
        runs = {"in memory": run_memory(folder), "dask, 1 worker": run_dask(folder, 1),
                "dask, 2 workers": run_dask(folder, 2)}
        reference = runs["in memory"]["posteriors"]
        for name, run in runs.items():
            partitions = int(run.get("partitions", 0))
            up = partitions * (K * N_RATERS * K + K + 1) * 8
            down = partitions * (K + N_RATERS * K * K) * 8
            rows.append({"judgments": f"{size:.0e}", "run": name, "read_s": round(run["read"], 1),
                         "fit_s": round(run["fit"], 2), "e_steps": int(run["n_iter"]),
                         "fit_per_e_step_s": round(run["fit"] / max(run["n_iter"], 1), 3),
                         "bytes_per_e_step": f"{up:,} up + {down:,} down" if partitions else "-",
                         "max_posterior_diff": f"{np.abs(run['posteriors'] - reference).max():.1e}"})
            print(rows[-1], flush=True)
        shutil.rmtree(folder.parent)
    print()
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(str(value) for value in row.values()) + " |")


if __name__ == "__main__":
    main()
