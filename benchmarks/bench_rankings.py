"""Benchmark the ranking aggregators on the full Dermatology DDx data (1,947 cases, 9,602 partial rankings).

    python benchmarks/bench_rankings.py                 # every method once, best of --repeat runs
    python benchmarks/bench_rankings.py --repeat 1      # a quick look

Targets (issue 29, on 2 cores): Plackett–Luce fit < 2 s, Bayesian Plackett–Luce with 1,000 posterior samples
< 30 s. The fit times are wall-clock seconds of ``method.build(...).fit(rankings)``, best of ``--repeat``, with the
machine's load average printed beside them (other processes on the cores slow every number).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from stableval.aggregate.rankings.registry import RANKING_REGISTRY
from stableval.datasets.ddx import load_ddx

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dermatology_ddx" / "data"

#: the targets of issue 29, seconds
TARGETS = {"pl": 2.0, "bayes-pl": 30.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of dermatology_selectors.json")
    parser.add_argument("--repeat", type=int, default=3, help="runs per method; the best is reported")
    args = parser.parse_args()
    data = load_ddx(args.data / "dermatology_selectors.json", conditions=args.data / "dermatology_conditions.txt")
    rankings = data.rankings()
    print(f"{data.n_cases:,} cases, {data.n_rankings:,} rankings, {data.n_conditions} conditions; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for name, method in RANKING_REGISTRY.items():
        params = {"samples": 1000} if method.samples == "posterior" else {}
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fit = method.build(**params).fit(rankings)
            times.append(time.perf_counter() - start)
        target = TARGETS.get(name)
        verdict = "" if target is None else f"  (target < {target:g} s: {'met' if min(times) < target else 'MISSED'})"
        print(f"{name:9s} {min(times):7.2f} s  {fit.summary()}{verdict}")


if __name__ == "__main__":
    main()
