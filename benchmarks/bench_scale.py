"""End to end at scale: read → fit MV, DS, STABLEVAL → bootstrap B = 1000 → JSON, with a stage breakdown.

Synthetic Parquet files like the ones LLM-judge pipelines write: integer item, agent and rater ids (10 agents,
1,000 raters, K = 3, 3 judgments per response). Per size it prints each stage's seconds (in this process, through
the API the CLI uses), then ``stableval score FILE -o out.json`` as a subprocess: wall seconds and peak RSS. When
crowd-kit is importable, its DawidSkene fit on the same judgments (1e6 and 1e7 only) runs in this process too and
the ratio (crowd-kit fit / stableval end to end) is printed.

Goals (issue 14, 2 cores): 1e7 end to end < 12 s; 1e8 < 120 s with peak RSS < 12 GB; >= 20x crowd-kit end to end
at 1e7.

    python benchmarks/bench_scale.py --sizes 1e6,1e7          # ~2 minutes
    python benchmarks/bench_scale.py --sizes 1e8 --skip-stages  # the CLI run only (needs ~15 GB free)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

PER_RESPONSE = 3
N_AGENTS = 10
N_RATERS = 1_000
K = 3


def write_parquet(path: Path, n_judgments: int, seed: int = 0) -> pd.DataFrame:
    """Write ``n_judgments`` synthetic judgments to ``path`` (and return them for the crowd-kit run)."""
    rng = np.random.default_rng(seed)
    n_responses = n_judgments // PER_RESPONSE
    truth = rng.choice(K, size=n_responses, p=[0.3, 0.3, 0.4])
    skill = rng.uniform(0.45, 0.95, N_RATERS)
    response = np.repeat(np.arange(n_responses, dtype=np.int64), PER_RESPONSE)
    rater = ((rng.integers(0, N_RATERS, n_responses)[:, None] + np.arange(PER_RESPONSE) * 101) % N_RATERS).ravel()
    correct = rng.random(response.size) < skill[rater]
    label = np.where(correct, truth[response], (truth[response] + rng.integers(1, K, response.size)) % K)
    frame = pd.DataFrame({"item": response // N_AGENTS, "agent": response % N_AGENTS, "rater": rater,
                          "label": label.astype(np.int8)})
    frame.to_parquet(path, index=False)
    return frame


def stages(path: Path) -> dict[str, float]:
    """Seconds per stage, through the API the CLI uses."""
    from stableval.data import read_any
    from stableval.evaluate.scores import bootstrap_fixed, score_agents

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    table = read_any(path, levels=("0", "1", "2"))
    seconds["read"] = time.perf_counter() - start
    start = time.perf_counter()
    result = score_agents(table, ["mv", "ds", "stableval"], bootstrap=0, progress=False)
    seconds["fit"] = time.perf_counter() - start
    credits = result.item_credit[["mv", "ds", "stableval"]].to_numpy()
    start = time.perf_counter()
    bootstrap_fixed(credits, table.response_agent, table.n_agents, 1000, seed=0)
    seconds["bootstrap"] = time.perf_counter() - start
    start = time.perf_counter()
    json.dumps(result.to_dict(), default=str)
    seconds["json"] = time.perf_counter() - start
    return seconds


def end_to_end(path: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS GB) of ``stableval score`` on ``path`` with defaults, as a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "stableval", "score", str(path), "--levels", "0,1,2",
                   "-o", str(Path(tmp) / "scores.json")]
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kb / 2**20


def crowdkit_fit(frame: pd.DataFrame) -> float | None:
    """Seconds of crowd-kit's DawidSkene fit (its defaults) on the same judgments, or None without crowd-kit."""
    try:
        from crowdkit.aggregation import DawidSkene
    except ImportError:
        return None
    data = pd.DataFrame({"task": frame["item"] * N_AGENTS + frame["agent"], "worker": frame["rater"],
                         "label": frame["label"]})
    start = time.perf_counter()
    DawidSkene(n_iter=100).fit(data)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7", help="judgments per run, comma-separated (default 1e6,1e7)")
    parser.add_argument("--skip-stages", action="store_true", help="only the end-to-end CLI run")
    args = parser.parse_args()
    print(f"{'judgments':>10} {'read':>6} {'fit':>6} {'boot':>6} {'json':>6} {'CLI wall':>9} {'peak GB':>8} "
          f"{'crowd-kit DS':>13} {'ratio':>6}")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "judgments.parquet"
            frame = write_parquet(path, n)
            seconds = {} if args.skip_stages else stages(path)
            wall, peak = end_to_end(path)
            crowdkit = crowdkit_fit(frame) if n <= 10**7 else None
            del frame
        cells = " ".join(f"{seconds[s]:>6.1f}" if s in seconds else f"{'-':>6}" for s in ("read", "fit", "bootstrap",
                                                                                            "json"))
        ck = f"{crowdkit:>12.1f}s {crowdkit / wall:>5.0f}x" if crowdkit else f"{'-':>13} {'-':>6}"
        print(f"{n:>10.0e} {cells} {wall:>8.1f}s {peak:>8.2f} {ck}")


if __name__ == "__main__":
    main()
