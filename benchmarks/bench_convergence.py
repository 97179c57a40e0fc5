"""EM convergence before and after issue 12: iterations and wall time of plain EM against SQUAREM, side by side.

Per dataset it fits, in one process and on the same table:

- ``DS plain`` / ``DS squarem`` / ``DS anderson``: Dawid–Skene with plain EM, SQUAREM (Varadhan & Roland 2008) and
  Anderson acceleration (Henderson & Varadhan 2019); the default ``auto`` is Anderson from 250,000 judgments and
  500 per rater, SQUAREM otherwise (issue 14);
- ``SV before``: STABLEVAL as it was before issue 12 (Algorithm-1 start, alpha_pi = 1.01, plain EM);
- ``SV paper plain`` / ``SV paper squarem`` / ``SV paper anderson``: the Algorithm-1 start at today's alpha_pi = 1,
  plain and with each accelerator;
- ``SV default``: today's default (several starts screened for 50 E-steps, the best run on with ``auto``).

Columns: E-steps of the fit kept (``n_iter_``; every E-step counts, SQUAREM's three per cycle included), E-steps
of all starts together (the multi-start default screens every start for up to 50), converged, wall seconds of
``fit`` (best of ``--repeat``), final log-likelihood, and the ratios plain / SQUAREM. Datasets: the bundled MT-Bench
votes, MSLR (2 raters, 39 responses; plain EM stops at the 500-iteration cap), s5_AdultContent, and a synthetic set
of ``--synthetic`` judgments (default 1e7, the generator of ``bench_em.py``).

Goals (issue 12): SQUAREM reaches the same optimum (log-likelihoods equal to 1e-3 relative) in fewer E-steps on the
slow fits; MSLR converges under the default cap; no fit in the table hits the cap.

Run:  python benchmarks/bench_convergence.py [--data ../shared/data] [--synthetic 1e7] [--repeat 1]
      (about 4 minutes on 2 cores with 1e7; --synthetic 0 skips it)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

import stableval
from stableval import DawidSkene, Stableval
from stableval.aggregate import Aggregator
from stableval.data.table import AnnotationTable
from stableval.datasets import load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_em import synthetic  # the shared synthetic generator

#: (label, factory), fitted on every dataset in this order.
SETTINGS: list[tuple[str, Callable[[], Aggregator]]] = [
    ("DS plain", lambda: DawidSkene(acceleration="none")),
    ("DS squarem", lambda: DawidSkene(acceleration="squarem")),
    ("DS anderson", lambda: DawidSkene(acceleration="anderson")),
    ("SV before", lambda: Stableval(init="paper", alpha_pi=1.01, acceleration="none")),
    ("SV paper plain", lambda: Stableval(init="paper", acceleration="none")),
    ("SV paper squarem", lambda: Stableval(init="paper", acceleration="squarem")),
    ("SV paper anderson", lambda: Stableval(init="paper", acceleration="anderson")),
    ("SV default", lambda: Stableval()),
]


def datasets(data: Path, synthetic_size: int) -> list[tuple[str, Callable[[], AnnotationTable]]]:
    """(name, loader) of every benchmarked table; loaders run lazily so a missing folder only skips its row."""
    out: list[tuple[str, Callable[[], AnnotationTable]]] = [
        ("MT-Bench", lambda: stableval.read_any(stableval.example_path(), duplicates="keep")),
        ("MSLR", lambda: load_dataset("mslr", data / "mslr").table),
        ("S_Adult", lambda: load_dataset("truth-inference",
                                         data / "zheng2017_truth_inference" / "s5_AdultContent").table),
    ]
    if synthetic_size:
        out.append((f"synthetic {synthetic_size:.0e}", lambda: synthetic(synthetic_size)[0]))
    return out


def measure(table: AnnotationTable, repeat: int) -> pd.DataFrame:
    """One row per setting: E-steps, converged, fit seconds (best of ``repeat``), log-likelihood."""
    table.response_matrix()  # built once, outside the timings
    rows = []
    for label, factory in SETTINGS:
        best = float("inf")
        for _ in range(repeat):
            model = factory()
            start = time.perf_counter()
            model.fit(table)
            best = min(best, time.perf_counter() - start)
        summary = model.fit_summary()
        starts = summary.get("starts", [])
        screened = sum(row["n_iter"] for row in starts if row["start"] != summary.get("start"))
        rows.append({"setting": label, "e_steps": summary["n_iter"], "all_e_steps": summary["n_iter"] + screened,
                     "converged": summary["converged"], "seconds": best,
                     "log_likelihood": summary["log_likelihood"]})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data",
                        help="folder holding mslr/ and zheng2017_truth_inference/ (default ../shared/data)")
    parser.add_argument("--synthetic", type=float, default=1e7, help="judgments in the synthetic set (0: skip)")
    parser.add_argument("--repeat", type=int, default=1, help="fits per cell; the fastest is shown")
    parser.add_argument("--out", type=Path, help="also write the long table as CSV")
    args = parser.parse_args(argv)
    frames, capped = [], []
    for name, load in datasets(args.data, int(args.synthetic)):
        try:
            table = load()
        except (OSError, ValueError) as error:
            print(f"{name}: skipped ({error})")
            continue
        print(f"{name}: {table.n_judgments:,} judgments, {table.n_responses:,} responses, {table.n_raters:,} raters",
              flush=True)
        frame = measure(table, args.repeat).assign(dataset=name)
        frames.append(frame)
        capped += [f"{name} / {row.setting}" for row in frame.itertuples() if not row.converged]
    if not frames:
        print("no dataset could be read; pass --data")
        return 1
    long = pd.concat(frames, ignore_index=True)
    if args.out:
        long.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        shown = long.assign(seconds=long["seconds"].map("{:.3f}".format),
                            log_likelihood=long["log_likelihood"].map("{:.2f}".format))
        print(shown.pivot(index="dataset", columns="setting", values="e_steps")[[s for s, _ in SETTINGS]]
              .to_string(), "\n")
        print(shown[["dataset", "setting", "e_steps", "all_e_steps", "converged", "seconds", "log_likelihood"]]
              .to_string(index=False))
    print()
    for dataset, frame in long.groupby("dataset", sort=False):
        by = frame.set_index("setting")

        def cell(setting: str, column: str, by: pd.DataFrame = by) -> float:
            return float(by.at[setting, column])  # type: ignore[arg-type]

        for method, plain, fast in (("DS", "DS plain", "DS squarem"), ("DS", "DS plain", "DS anderson"),
                                    ("SV paper", "SV paper plain", "SV paper squarem"),
                                    ("SV paper", "SV paper plain", "SV paper anderson")):
            same = abs(cell(plain, "log_likelihood") - cell(fast, "log_likelihood")) <= 1e-3 * abs(
                cell(plain, "log_likelihood"))
            steps = cell(plain, "e_steps") / cell(fast, "e_steps")
            time_ratio = cell(plain, "seconds") / cell(fast, "seconds")
            print(f"{dataset!s:>16} {method:>8}: plain/{fast.split()[-1]} E-steps {steps:.2f}x, "
                  f"time {time_ratio:.2f}x, same optimum: {'yes' if same else 'NO'}")
    print("goal: no fit at the cap: " + ("met" if not capped else "NOT met (" + "; ".join(capped) + ")"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
