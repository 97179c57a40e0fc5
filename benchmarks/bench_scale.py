"""End to end at scale: read → fit MV, DS, STABLEVAL → bootstrap B = 1000 → JSON, with a stage breakdown.

Synthetic Parquet files like the ones LLM-judge pipelines write: integer item, agent and rater ids (10 agents,
1,000 raters, K = 3, 3 judgments per response). Per size it prints each stage's seconds and peak RSS (in this
process, through the API the CLI uses; the peak is the process's high-water mark, reset before each stage where
Linux allows it), then ``stableval score FILE -o out.json`` as a subprocess: wall seconds and peak RSS. When
crowd-kit is importable, its DawidSkene fit on the same judgments (1e6 and 1e7 only) runs in this process too and
the ratio (crowd-kit fit / stableval end to end) is printed. ``--data DIR`` keeps the generated files there and
reuses them (a 1e8 file takes about half a minute and 5 GB of memory to write).

Goals (issue 14, 2 cores): 1e7 end to end < 12 s; 1e8 < 120 s with peak RSS < 12 GB; >= 20x crowd-kit end to end
at 1e7.

    python benchmarks/bench_scale.py --sizes 1e6,1e7          # ~2 minutes
    python benchmarks/bench_scale.py --sizes 1e8 --data /tmp/scale --skip-cli   # stages only, file kept
"""

from __future__ import annotations

import argparse
import os
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
    """Write ``n_judgments`` synthetic judgments to ``path`` (and return them)."""
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


STAGES = ("read", "fit mv", "fit ds", "fit stableval", "bootstrap")


def _peak_gb(reset: bool = False) -> float:
    """This process's peak RSS (VmHWM) in GB, then (``reset``) start a new peak; NaN off Linux."""
    try:
        with open("/proc/self/status") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 2**20
        if reset:
            with open("/proc/self/clear_refs", "w") as clear:
                clear.write("5")
    except (OSError, StopIteration):
        return float("nan")
    return peak


def stages(path: Path) -> dict[str, tuple[float, float]]:
    """(seconds, peak RSS GB) per stage, through the API the CLI uses (``score_agents``' own steps: each method
    fitted and let go, keeping its credits, then the bootstrap; writing the JSON takes well under a second)."""
    from stableval.aggregate.registry import resolve_methods
    from stableval.data import read_any
    from stableval.evaluate.credit import credits_by_method
    from stableval.evaluate.scores import bootstrap_fixed

    out: dict[str, tuple[float, float]] = {}

    def timed(name: str, step: object) -> object:
        _peak_gb(reset=True)
        start = time.perf_counter()
        result = step()  # type: ignore[operator]
        out[name] = (time.perf_counter() - start, _peak_gb())
        return result

    table = timed("read", lambda: read_any(path, levels=("0", "1", "2")))
    columns = []
    for chosen in resolve_methods(["mv", "ds", "stableval"]):
        model = timed(f"fit {chosen.key}", lambda chosen=chosen: chosen.build().fit(table))
        columns.append(credits_by_method({chosen.key: model}, table.credit)[:, 0])  # type: ignore[attr-defined]
        del model
    credits = np.column_stack(columns)
    del columns
    timed("bootstrap", lambda: bootstrap_fixed(credits, table.response_agent, table.n_agents,  # type: ignore[attr-defined]
                                               1000, seed=0))
    return out


def end_to_end(path: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS GB) of ``stableval score`` on ``path`` with defaults, as a subprocess. The package's
    bytecode is compiled first, as ``pip install`` does (with ``PYTHONDONTWRITEBYTECODE`` set, a source checkout
    would otherwise compile every module again in each run: ~0.15 s)."""
    import compileall

    import stableval

    compileall.compile_dir(str(Path(stableval.__file__).parent), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "stableval", "score", str(path), "--levels", "0,1,2",
                   "-o", str(Path(tmp) / "scores.json")]
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            raise subprocess.CalledProcessError(child.returncode, command)
    return wall, usage.ru_maxrss / 2**20


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
    parser.add_argument("--skip-cli", action="store_true", help="only the stages in this process")
    parser.add_argument("--data", metavar="DIR", help="keep the generated Parquet files here and reuse them")
    args = parser.parse_args()
    print("stage cells: seconds/peak RSS GB of this process during the stage")
    print(f"{'judgments':>10} " + " ".join(f"{name:>14}" for name in STAGES)
          + f" {'CLI wall':>9} {'peak GB':>8} {'crowd-kit DS':>13} {'ratio':>6}")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(args.data or tmp) / f"judgments-{n:.0e}.parquet"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                write_parquet(path, n)
            seconds = {} if args.skip_stages else stages(path)
            wall, peak = (float("nan"), float("nan")) if args.skip_cli else end_to_end(path)
            crowdkit = crowdkit_fit(pd.read_parquet(path)) if n <= 10**7 and not args.skip_cli else None
        cells = " ".join(f"{seconds[s][0]:>8.1f}/{seconds[s][1]:<5.2f}" if s in seconds else f"{'-':>14}"
                         for s in STAGES)
        ck = f"{crowdkit:>12.1f}s {crowdkit / wall:>5.0f}x" if crowdkit else f"{'-':>13} {'-':>6}"
        print(f"{n:>10.0e} {cells} {wall:>8.1f}s {peak:>8.2f} {ck}", flush=True)


if __name__ == "__main__":
    main()
