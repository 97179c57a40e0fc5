"""EM speed and memory: stableval's DawidSkene and Stableval against crowd-kit's DawidSkene, side by side.

Synthetic data: K = 3 levels, 5 judgments per response, 200 raters (80% reliable, 20% noisy), sizes 1e5, 1e6
and 1e7 judgments. Per size it prints milliseconds per EM iteration (one E+M step at the fitted parameters, best
of 7) through the kernel a fit uses by default, then through each kernel side by side — the numpy reference and
the compiled one-pass kernel (numba, the ``fast`` extra; :mod:`stableval.aggregate.em_kernel`), wall and CPU
seconds (CPU time is what a loaded machine distorts least) — the amortised time per iteration of the whole fit
(set-up spread over the iterations), iterations, total fit time (matrix build included) and peak memory above the
input arrays (tracemalloc), and, when crowd-kit is importable, crowd-kit's time per iteration and the ratio
(crowd-kit / stableval per iteration). The load average is printed first: compare timings taken at similar load.
A second part times ``stableval score`` end to end on 1e6 judgments from Parquet (all three methods, B = 1000).

Goals (2-core machine, 1e7 judgments): >= 15x faster per iteration than crowd-kit 1.4.2, <= 40 ms per EM
iteration (issue 14), peak memory < 1 GB above the input arrays; ``stableval score`` on 1e6 judgments < 15 s.

``--fit-stage FILE`` instead fits Dawid–Skene and STABLEVAL (defaults) on a Parquet file of ``bench_scale.py``
(read as it reads it) under each accelerator side by side in one process — SQUAREM (the default before issue 14's
schedule work) and ``auto`` (today's default: Anderson acceleration at this size) — and prints, per fit, the
passes (E-steps and expected-counts passes) over all responses and over the screened subset, both as full-data
E-step equivalents (subset passes weighted by its share of the responses), wall and CPU seconds, the seconds
spent inside those passes (the rest: starts, vote counts, the subset's matrix, M-steps) and the final objective.
The counts are deterministic; the seconds depend on the machine's load.

Run:  python benchmarks/bench_em.py [--sizes 1e5,1e6,1e7] [--crowdkit-iters 3] [--skip-score]
      python benchmarks/bench_em.py --fit-stage /tmp/scale/judgments-1e+07.parquet [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np
import pandas as pd

from stableval import DawidSkene, Stableval
from stableval.data.table import AnnotationTable, default_credit

K = 3
LABELS_PER_RESPONSE = 5
N_RATERS = 200


def synthetic(n_judgments: int, seed: int = 0) -> tuple[AnnotationTable, np.ndarray]:
    """A table of ``n_judgments`` judgments (K=3, 5 per response, 200 raters) and the true levels."""
    rng = np.random.default_rng(seed)
    n_responses = n_judgments // LABELS_PER_RESPONSE
    truth = rng.choice(K, size=n_responses, p=[0.3, 0.3, 0.4])
    accuracy = np.where(rng.random(N_RATERS) < 0.8, rng.uniform(0.7, 0.95, N_RATERS), rng.uniform(0.3, 0.5, N_RATERS))
    response = np.repeat(np.arange(n_responses, dtype=np.int32), LABELS_PER_RESPONSE)
    # distinct raters per response: a random offset plus a stride keeps the 5 raters different
    offset = rng.integers(0, N_RATERS, size=n_responses)
    rater = ((offset[:, None] + np.arange(LABELS_PER_RESPONSE) * 37) % N_RATERS).ravel().astype(np.int32)
    correct = rng.random(response.size) < accuracy[rater]
    noise = (truth[response] + rng.integers(1, K, size=response.size)) % K
    label = np.where(correct, truth[response], noise).astype(np.int16)
    table = AnnotationTable(
        response=response, rater=rater, label=label,
        response_item=np.arange(n_responses, dtype=np.int32), response_agent=np.zeros(n_responses, np.int32),
        items=pd.Index(np.arange(n_responses).astype(str), dtype=object), agents=pd.Index(["agent"], dtype=object),
        raters=pd.Index([f"r{r}" for r in range(N_RATERS)], dtype=object),
        levels=("0", "1", "2"), credit=default_credit(K), source="<synthetic>",
    )
    return table, truth


def fit_stats(model: DawidSkene | Stableval, table: AnnotationTable) -> tuple[float, int, float, float]:
    """(EM seconds per iteration, iterations, total fit seconds, peak MB above the input arrays) of one fit.

    The total includes building the sparse response matrix (done once per table); the per-iteration time is
    the EM loop alone (a few E/M steps, with the one-off block split and initial M-step spread over them).
    """
    tracemalloc.start()
    start = time.perf_counter()
    table.response_matrix()
    built = time.perf_counter()
    model.fit(table)
    end = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (end - built) / model.n_iter_, model.n_iter_, end - start, peak / 2**20


def steady_iteration(model: DawidSkene | Stableval, table: AnnotationTable, kernel: str | None = None,
                     repeats: int = 7) -> tuple[float, float]:
    """(wall, CPU) seconds of one EM iteration (E-step with fused M-step counts, then the M-step) at the fitted
    parameters through ``kernel`` (None: the default choice): the best of ``repeats`` runs, so one-off set-up and
    machine noise are left out."""
    from stableval.aggregate.em import ResponseBlocks, parameters_from_counts

    blocks = ResponseBlocks(table.response_matrix(), kernel=kernel)
    out = np.empty((table.n_levels, table.n_responses))
    blocks.e_step(model.priors_, model.confusion_, out)  # the compiled kernel compiles (or loads) on first use
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        _, mass, counts = blocks.e_step(model.priors_, model.confusion_, out)
        parameters_from_counts(mass, counts, table.n_raters)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def crowdkit_per_iteration(table: AnnotationTable, iterations: int) -> float | None:
    """crowd-kit's DawidSkene seconds per iteration (fixed iteration count), or None if not installed."""
    try:
        from crowdkit.aggregation import DawidSkene as CrowdKitDS
    except ImportError:
        return None
    frame = pd.DataFrame({"task": table.response, "worker": table.rater, "label": table.label})
    start = time.perf_counter()
    CrowdKitDS(n_iter=iterations, tol=-1.0).fit(frame)
    return (time.perf_counter() - start) / iterations


def bench_sizes(sizes: list[int], crowdkit_iters: int) -> None:
    from stableval.aggregate.em_kernel import NUMBA

    kernels = ["numpy", "numba"] if NUMBA else ["numpy"]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; kernels compared: {', '.join(kernels)}")
    side = " ".join(f"{k + ' ms':>9} {k + ' cpu':>9}" for k in kernels)
    print(f"{'judgments':>10} {'method':>12} {'ms/iter':>9} {side} {'amortised':>10} {'iters':>6} {'fit s':>7} "
          f"{'peak MB':>8} {'crowd-kit ms/iter':>18} {'speed-up':>9}")
    for n in sizes:
        table, _ = synthetic(n)
        ck = crowdkit_per_iteration(table, crowdkit_iters) if crowdkit_iters else None
        for name, model in (("DawidSkene", DawidSkene()), ("Stableval", Stableval())):
            fresh, _ = synthetic(n)  # new table: the cached matrix build is part of each timed fit
            per_iter, iters, total, peak = fit_stats(model, fresh)
            steady, _ = steady_iteration(model, fresh)
            each = " ".join(f"{w * 1e3:9.1f} {c * 1e3:9.1f}"
                            for w, c in (steady_iteration(model, fresh, kernel) for kernel in kernels))
            ck_text = f"{ck * 1e3:18.1f}" if ck else f"{'n/a':>18}"
            ratio = f"{ck / steady:8.1f}x" if ck else f"{'n/a':>9}"
            print(f"{n:>10.0e} {name:>12} {steady * 1e3:9.1f} {each} {per_iter * 1e3:10.1f} {iters:6d} {total:7.2f} "
                  f"{peak:8.0f} {ck_text} {ratio}", flush=True)


def bench_score(n: int) -> None:
    table, _ = synthetic(n)
    rng = np.random.default_rng(1)
    frame = table.to_frame()
    frame["agent"] = rng.choice([f"model-{i}" for i in range(6)], size=table.n_responses)[table.response]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ratings.parquet")
        frame.to_parquet(path)
        command = [sys.executable, "-m", "stableval", "score", path, "--levels", "0,1,2", "--bootstrap", "1000",
                   "--format", "json", "-o", os.path.join(tmp, "out.json")]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        elapsed = time.perf_counter() - start
    print(f"stableval score end to end, {n:.0e} judgments from Parquet, mv+ds+stableval, B=1000: {elapsed:.1f} s "
          f"(goal < 15 s)")


def fit_stage(path: str, repeat: int) -> None:
    """E-step counts and seconds of the default DS and STABLEVAL fits on ``path``, per accelerator, side by side."""
    from stableval.aggregate import em
    from stableval.data import read_any

    table = read_any(path, levels=("0", "1", "2"))
    X = table.response_matrix()
    n = X.shape[0]
    passes: list[tuple[int, float]] = []  # (rows, seconds) of every E-step and expected-counts pass
    e_step, counts = em.ResponseBlocks.e_step, em.ResponseBlocks.counts

    def counted_e_step(self: em.ResponseBlocks, *args: object) -> object:
        start = time.perf_counter()
        result = e_step(self, *args)  # type: ignore[arg-type]
        passes.append((self.n_responses, time.perf_counter() - start))
        return result

    def counted_counts(self: em.ResponseBlocks, *args: object) -> object:
        start = time.perf_counter()
        result = counts(self, *args)  # type: ignore[arg-type]
        passes.append((self.n_responses, time.perf_counter() - start))
        return result

    em.ResponseBlocks.e_step = counted_e_step  # type: ignore[method-assign,assignment]
    em.ResponseBlocks.counts = counted_counts  # type: ignore[method-assign,assignment]
    warm = em.ResponseBlocks(X)  # load (or compile) the E-step kernel outside the timings
    warm.e_step(np.full(table.n_levels, 1 / table.n_levels),
                np.full((table.n_raters, table.n_levels, table.n_levels), 1 / table.n_levels),
                np.empty((table.n_levels, n)))
    print(f"{path}: {X.nnz:,} judgments, {n:,} responses; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; E-step kernel {warm.kernel}")
    print(f"{'fit':>10} {'acceleration':>12} {'full':>5} {'subset':>7} {'equivalents':>12} {'wall s':>7} "
          f"{'cpu s':>6} {'in passes s':>12} {'objective':>18}")
    totals: dict[str, list[float]] = {}
    for _ in range(repeat):
        for name, build in (("DS", DawidSkene), ("STABLEVAL", Stableval)):
            for acceleration in ("squarem", "auto"):
                passes.clear()
                model = build(acceleration=acceleration)
                start, cpu = time.perf_counter(), time.process_time()
                model.fit_matrix(X, table.n_raters, table.n_levels)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                full = sum(1 for rows, _ in passes if rows == n)
                subset = [rows for rows, _ in passes if rows != n]
                equivalents = full + sum(subset) / n
                in_passes = sum(seconds for _, seconds in passes)
                total = totals.setdefault(acceleration, [0.0, 0.0, 0.0, 0.0])
                for j, value in enumerate((equivalents, wall, cpu, in_passes)):
                    total[j] += value / repeat
                print(f"{name:>10} {acceleration:>12} {full:5d} {len(subset):7d} {equivalents:12.1f} {wall:7.2f} "
                      f"{cpu:6.2f} {in_passes:12.2f} {model.objective_[-1]:18.3f}", flush=True)
    for acceleration, (equivalents, wall, cpu, in_passes) in totals.items():
        print(f"{'DS + SV':>10} {acceleration:>12} {'':>5} {'':>7} {equivalents:12.1f} {wall:7.2f} {cpu:6.2f} "
              f"{in_passes:12.2f}")
    em.ResponseBlocks.e_step, em.ResponseBlocks.counts = e_step, counts  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--crowdkit-iters", type=int, default=3, help="crowd-kit iterations to time (0 = skip)")
    parser.add_argument("--skip-score", action="store_true")
    parser.add_argument("--fit-stage", metavar="FILE", help="only the DS and STABLEVAL fits on this Parquet file "
                        "(bench_scale.py's), SQUAREM against the default side by side")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of --fit-stage (averaged)")
    args = parser.parse_args()
    if args.fit_stage:
        fit_stage(args.fit_stage, args.repeat)
        return
    bench_sizes([int(float(s)) for s in args.sizes.split(",")], args.crowdkit_iters)
    if not args.skip_score:
        bench_score(1_000_000)


if __name__ == "__main__":
    main()
