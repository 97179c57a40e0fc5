"""Reading speed (issue 14): judgments per second from a Parquet file to a validated, integer-coded table.

Two kinds of files like the ones LLM-judge pipelines write (10 agents, 1,000 raters, K = 3, 3 judgments per
response): integer item, agent and rater ids, and the same ids as text (``q123``, ``model-4``, ``rater-56``). Per size
and kind it times, in this process and side by side, the fast path (``read_any``: columns coded in their own type,
each distinct value turned into text once) and the simple path (every column read as text, then the same
validation: ``annotations_from_frame(read_table_file(path))``), checks they give the same table, and prints
judgments per second and the ratios. Files with integer ids take the lookup path
(:mod:`stableval.data.integer_ids`); the "general" column times the reader it hands other files to (columns read
as categories), side by side. ``--previous SRC`` also times ``read_any`` of another checkout's ``src`` folder
(e.g. one exported with ``git archive``) in a subprocess, on the same files.

Targets (issue 14, 2 cores): >= 10 M judgments/s with integer ids, >= 3 M/s with string ids.

    python benchmarks/bench_read.py --sizes 1e6,1e7
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
LEVELS = ("0", "1", "2")


def write_parquet(path: Path, n_judgments: int, *, text_ids: bool, seed: int = 0) -> None:
    """``n_judgments`` synthetic judgments (the generator of bench_scale.py), ids as integers or as text."""
    rng = np.random.default_rng(seed)
    n_responses = n_judgments // PER_RESPONSE
    response = np.repeat(np.arange(n_responses, dtype=np.int64), PER_RESPONSE)
    rater = ((rng.integers(0, N_RATERS, n_responses)[:, None] + np.arange(PER_RESPONSE) * 101) % N_RATERS).ravel()
    label = rng.integers(0, K, response.size).astype(np.int8)
    item, agent = response // N_AGENTS, response % N_AGENTS
    if text_ids:
        frame = pd.DataFrame({"item": _prefixed("q", item), "agent": _prefixed("model-", agent),
                              "rater": _prefixed("rater-", rater), "label": label})
    else:
        frame = pd.DataFrame({"item": item, "agent": agent, "rater": rater, "label": label})
    frame.to_parquet(path, index=False)


def _prefixed(prefix: str, codes: np.ndarray) -> pd.Series:
    distinct, inverse = np.unique(codes, return_inverse=True)
    return pd.Series(pd.Categorical.from_codes(inverse, [f"{prefix}{v}" for v in distinct])).astype(str)


def fast(path: Path) -> object:
    from stableval.data import read_any

    return read_any(path, levels=LEVELS)


def general(path: Path) -> object:
    """The reader every file the integer lookup path hands over goes through (columns coded in their own type)."""
    from stableval.data import read_table_file
    from stableval.data.annotations import annotations_from_frame

    return annotations_from_frame(read_table_file(path, categorical=True), levels=LEVELS, source=str(path))


def simple(path: Path) -> object:
    from stableval.data import read_table_file
    from stableval.data.annotations import annotations_from_frame

    return annotations_from_frame(read_table_file(path), levels=LEVELS, source=str(path))


def best_of(function: object, path: Path, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(path)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, result


def same(a: object, b: object) -> bool:
    names = ("response", "rater", "label", "response_item", "response_agent")
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in names) and all(
        getattr(a, n).tolist() == getattr(b, n).tolist() for n in ("items", "agents", "raters"))


def previous(src: str, path: Path, repeat: int) -> float:
    """Best seconds of ``read_any`` from the checkout ``src`` in a fresh interpreter."""
    code = ("import sys, time; from stableval.data import read_any; best = 1e9\n"
            f"for _ in range({repeat}):\n"
            "    t = time.perf_counter(); read_any(sys.argv[1], levels=('0', '1', '2'))\n"
            "    best = min(best, time.perf_counter() - t)\n"
            "print(best)")
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7", help="judgments per file, comma-separated (default 1e6,1e7)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per path; the best is reported (default 2)")
    parser.add_argument("--previous", metavar="SRC", help="also time read_any of this src folder (subprocess)")
    args = parser.parse_args()
    print(f"{'judgments':>10} {'ids':>7} {'fast s':>7} {'M/s':>6} {'general s':>9} {'ratio':>6} {'simple s':>9} "
          f"{'M/s':>6} {'ratio':>6}"
          + (f" {'previous s':>10} {'ratio':>6}" if args.previous else "") + "  same")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        for text_ids in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "judgments.parquet"
                write_parquet(path, n, text_ids=text_ids)
                fast_s, fast_table = best_of(fast, path, args.repeat)
                general_s, general_table = best_of(general, path, args.repeat)
                simple_s, simple_table = best_of(simple, path, args.repeat)
                line = (f"{n:>10.0e} {'string' if text_ids else 'integer':>7} {fast_s:>7.2f} {n / fast_s / 1e6:>6.1f} "
                        f"{general_s:>9.2f} {general_s / fast_s:>5.1f}x "
                        f"{simple_s:>9.2f} {n / simple_s / 1e6:>6.1f} {simple_s / fast_s:>5.1f}x")
                if args.previous:
                    previous_s = previous(args.previous, path, args.repeat)
                    line += f" {previous_s:>10.2f} {previous_s / fast_s:>5.1f}x"
                agree = same(fast_table, simple_table) and same(general_table, simple_table)
                print(line + f"  {agree}", flush=True)
                del fast_table, general_table, simple_table


if __name__ == "__main__":
    main()
