"""Bootstrap cost against data size: multinomial draws over (binned) credits vs resampling rows (issue 14).

Per agent the score is a mean of response credits; ``score`` resamples each agent's credits B times. The row path
draws n indices per replicate (O(B·n)); the multinomial path draws counts over the agent's distinct or binned
credits (O(B·bins), see ``stableval.evaluate.resample``). Credits are three methods' worth, as ``score`` has by
default: two hard (3 levels) and one continuous. Both paths run side by side in this process; the row path is
skipped above ``--row-max`` responses (it would take minutes).

    python benchmarks/bench_bootstrap.py                      # 1e5, 1e6, 3e7 responses (≈1e8 judgments), B = 1000
    python benchmarks/bench_bootstrap.py --sizes 100000 -B 200
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from stableval.evaluate.scores import bootstrap_fixed


def credits_for(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    hard = rng.choice([0.0, 0.5, 1.0], size=(n, 2), p=[0.2, 0.3, 0.5])
    soft = rng.beta(0.6, 0.4, size=(n, 1))
    agent = rng.integers(0, 10, size=n)
    return np.hstack([hard, soft]), agent


def timed(credits: np.ndarray, agent: np.ndarray, n_boot: int, multinomial_above: int) -> tuple[float, float]:
    start = time.perf_counter()
    _, error = bootstrap_fixed(credits, agent, 10, n_boot, seed=0, multinomial_above=multinomial_above)
    return time.perf_counter() - start, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,30000000", help="responses, comma-separated")
    parser.add_argument("-B", "--bootstrap", type=int, default=1000, help="replicates (default 1000)")
    parser.add_argument("--row-max", type=int, default=1_000_000, help="largest size also run on the row path")
    args = parser.parse_args()
    print(f"{'responses':>12} {'row path s':>11} {'multinomial s':>14} {'ratio':>7} {'SE shortfall':>13}")
    for n in (int(s) for s in args.sizes.split(",")):
        credits, agent = credits_for(n)
        fast, error = timed(credits, agent, args.bootstrap, multinomial_above=0)
        if n <= args.row_max:
            slow, _ = timed(credits, agent, args.bootstrap, multinomial_above=10**12)
            print(f"{n:>12,} {slow:>11.2f} {fast:>14.2f} {slow / fast:>6.0f}x {error:>13.1e}")
        else:
            print(f"{n:>12,} {'-':>11} {fast:>14.2f} {'-':>7} {error:>13.1e}")


if __name__ == "__main__":
    main()
