"""Benchmark the ablation grid: trials per second serial vs --jobs 2, and the whole default grid's wall time.

    python benchmarks/bench_ablation.py                 # throughput on a sample + the whole default grid (jobs 2)
    python benchmarks/bench_ablation.py --sample-only   # only the throughput comparison (about a minute)

The sample is the base setting of the default grid (6 agents × 100 items, 30 raters, 5 labels per response,
3 methods, stability over 10 subsets of half the raters). "per-table" times the same trials fitted one table at a
time with the library estimators (DawidSkene / Stableval / MajorityVote on AnnotationTable.subset), to show what
the batched EM kernel saves. The goal (issue 4): the whole default grid — 26 settings (21 distinct), 100 trials,
3 methods, stability included — in under 10 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from stableval.evaluate.credit import credits_by_method, fit_methods
from stableval.evaluate.scores import agent_means
from stableval.parallel import ProcessExecutor, SerialExecutor
from stableval.simulate import TrialTask, default_grid, run_grid, run_trials, simulate
from stableval.simulate.grid import subsample_size


def per_table(task: TrialTask) -> None:
    """The same work as run_trials, one AnnotationTable and one library fit at a time."""
    for trial in task.trials:
        sim_seed, subset_seed = np.random.SeedSequence([task.seed, trial]).spawn(2)
        table = simulate(task.config, np.random.default_rng(sim_seed)).table()
        rng = np.random.default_rng(subset_seed)
        tables = [table] + [table.subset(np.isin(table.rater, rng.choice(
            table.n_raters, subsample_size(task.config.raters, task.subsample_fraction), replace=False)))
            for _ in range(task.subsamples)]
        for t in tables:
            agent_means(credits_by_method(fit_methods(t, task.methods), t.credit), t.response_agent, t.n_agents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample-trials", type=int, default=40, help="trials in the throughput sample")
    parser.add_argument("--sample-only", action="store_true", help="skip the whole default grid")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    grid = default_grid()
    base = grid.base
    print(f"machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")

    n = args.sample_trials
    tasks = [TrialTask(base, tuple(range(s, min(n, s + 10))), 0) for s in range(0, n, 10)]
    timings = {}
    with SerialExecutor() as executor:
        started = time.perf_counter()
        serial = executor.map(run_trials, tasks)
        timings["serial"] = time.perf_counter() - started
    with ProcessExecutor(args.jobs, preload=("stableval.simulate.grid",)) as executor:
        executor.map(run_trials, [TrialTask(base, (0,), 0, subsamples=1)] * args.jobs)  # start the workers
        started = time.perf_counter()
        parallel = executor.map(run_trials, tasks)
        timings[f"--jobs {args.jobs}"] = time.perf_counter() - started
    identical = all(a.equals(b) for a, b in zip(serial, parallel, strict=True))
    reference_trials = 4
    started = time.perf_counter()
    per_table(TrialTask(base, tuple(range(reference_trials)), 0))
    per_table_rate = reference_trials / (time.perf_counter() - started)
    print(f"\nthroughput on the base setting ({n} trials; each = 1 full + 10 subset tables × 3 methods):")
    print("| executor | trials/s | seconds |")
    print("|---|---|---|")
    print(f"| per-table library fits, serial ({reference_trials} trials) | {per_table_rate:.2f} | "
          f"{reference_trials / per_table_rate:.1f} |")
    for name, seconds in timings.items():
        print(f"| batched, {name} | {n / seconds:.2f} | {seconds:.1f} |")
    print(f"speed-up --jobs {args.jobs} vs serial: {timings['serial'] / timings[f'--jobs {args.jobs}']:.2f}x; "
          f"batched serial vs per-table: {n / timings['serial'] / per_table_rate:.1f}x; "
          f"results identical: {identical}")
    if args.sample_only:
        return

    settings = grid.settings()
    distinct = len({grid.setting_id(c) for _, _, c in settings})
    print(f"\nwhole default grid: {len(settings)} settings ({distinct} distinct) × {grid.trials} trials "
          f"= {distinct * grid.trials} simulated studies, --jobs {args.jobs}")
    with tempfile.TemporaryDirectory() as folder, ProcessExecutor(args.jobs, preload=("stableval.simulate.grid",)
                                                                  ) as executor:
        started = time.perf_counter()
        result = run_grid(grid, folder, executor=executor)
        seconds = time.perf_counter() - started
    print(f"wall time {seconds:.0f} s ({seconds / 60:.1f} min; goal < 10 min) — "
          f"{distinct * grid.trials / seconds:.1f} trials/s; {len(result.files)} files written")
    rows = result.trials.drop_duplicates(["setting", "trial", "method"])
    print(f"EM fits that hit max_iter in some subset: {int((~rows['converged']).sum())} of {len(rows)} "
          "(trial, method) rows")


if __name__ == "__main__":
    main()
