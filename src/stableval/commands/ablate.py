"""``stableval ablate``: the synthetic stress-test grid (MV, Dawid–Skene, STABLEVAL under controlled raters)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import bad_input_exits
from stableval.wording import plural

RUN_PANEL = "Execution"

#: the tables ``ablate --metric coverage`` writes, name → what each measures (``--sweep NAME`` runs only that one)
COVERAGE_TABLES: dict[str, str] = {
    "ppi": "how often people-only, judge-only and PPI++ 95% intervals (and PPI++ rank intervals) hold the simulated "
           "truth, with LLM judges that are unbiased, lenient or self-preferring, at human budgets of 10/25/50% "
           "(coverage.md, coverage.csv)",
    "score": "how often the 95% score and rank intervals that `score` prints for every default method hold the "
             "simulated truth, as rater noise, raters per response and items per agent vary (score_coverage.md, "
             "score_coverage.csv)",
    "score-refit": "the same for `score --refit` (every aggregation re-run on each bootstrap replicate) beside "
                   "the fixed-credit intervals, on the designs where those under-cover (score_refit_coverage.md, "
                   "score_refit_coverage.csv; slow: one fit of every method per replicate, so only when named)",
}
#: the tables ``ablate --metric coverage`` writes without ``--sweep``
DEFAULT_COVERAGE_TABLES: tuple[str, ...] = ("ppi", "score")


class AblateMetric(StrEnum):
    """What ``ablate`` measures (``--metric``)."""

    RANKING = "ranking"
    COVERAGE = "coverage"
    RANKING_RECOVERY = "ranking-recovery"


def register(app: typer.Typer) -> None:
    app.command()(ablate)


def ablate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Output folder: trials.csv (every trial), "
                                         "summary.csv / summary.md, SWEEP.csv / SWEEP.md / SWEEP.png per sweep, "
                                         "settings/ (finished settings; a rerun skips them).", show_default=False)],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="TOML file defining the grid (see "
                                                "examples/ablation/). Default: the spec's grid.",
                                                show_default=False)] = None,
    sweep: Annotated[list[str] | None, typer.Option("--sweep", "-s", help="Run only this sweep (repeatable), e.g. "
                                                    "--sweep adversarial.", show_default=False)] = None,
    trials: Annotated[int | None, typer.Option("--trials", "-n", min=2, help="Trials per setting (overrides the "
                                               "config; default 100).", show_default=False)] = None,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Random seed (overrides the config; default 0).",
                                             show_default=False)] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Local worker processes (0 = all cores, "
                                      "1 = serial).", rich_help_panel=RUN_PANEL)] = 0,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Run on a Dask distributed cluster at this "
                                                  "address (e.g. tcp://host:8786) instead of local processes; "
                                                  "needs the dask extra.", rich_help_panel=RUN_PANEL,
                                                  show_default=False)] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write one PNG per sweep.",
                                        rich_help_panel=RUN_PANEL)] = True,
    metric: Annotated[AblateMetric, typer.Option(
        "--metric", help="ranking: the methods' MSE, ranking accuracy, Kendall tau and stability over the grid; "
                         "coverage: the tables (--sweep NAME for one; default "
                         + " and ".join(DEFAULT_COVERAGE_TABLES) + "): "
                         + "; ".join(f"{name}: {what}" for name, what in COVERAGE_TABLES.items()) + "; "
                         "ranking-recovery: how well each ranking aggregation (IRN, Borda, PL, Bayes-PL, Rater-PL) "
                         "recovers the planted true ranking from reliable, noisy and truncated partial-ranking "
                         "raters, at 1/2/3/5/8 rankings per item: Kendall tau-b and top-1 accuracy "
                         "(ranking_recovery.md, ranking_recovery.csv).")
    ] = AblateMetric.RANKING,
) -> None:
    """Run the ablation grid: every setting of every sweep, many simulated studies each, scored by MV,
    Dawid–Skene (hard) and STABLEVAL; reports MSE against the true scores, ranking accuracy, Kendall tau and
    ranking stability under rater subsampling, with 95% CIs over trials.

    Results do not depend on --jobs or --scheduler. A rerun with the same --output skips settings that are
    already finished.
    """
    from stableval._options import beyond_size_bound, large_allowed
    from stableval.commands.output import check_output_folder, say, write_failed
    from stableval.parallel import make_executor
    from stableval.simulate.grid import default_grid, load_grid, run_grid
    from stableval.simulate.grid_config import MAX_TRIALS

    check_output_folder(output)
    if trials is not None and trials > MAX_TRIALS and not large_allowed():
        raise typer.BadParameter(f"{trials}; allowed: an integer from 2 to {MAX_TRIALS:,}; " + beyond_size_bound(
            f"{trials:,} would take about {trials / MAX_TRIALS:,.0f}× as long as {MAX_TRIALS:,}"),
                                 param_hint="--trials")
    if metric is AblateMetric.COVERAGE:
        if config is not None or not set(sweep or ()) <= set(COVERAGE_TABLES):
            raise typer.BadParameter("--config defines the ranking grid and the coverage designs are fixed; --sweep "
                                     f"picks coverage tables: {', '.join(COVERAGE_TABLES)}",
                                     param_hint="--metric coverage")
        _coverage(output, tables=sweep or list(DEFAULT_COVERAGE_TABLES), trials=trials or 100, seed=seed or 0,
                  jobs=jobs, scheduler=scheduler)
        return
    if metric is AblateMetric.RANKING_RECOVERY:
        if config is not None or sweep:
            raise typer.BadParameter("--config and --sweep define the ranking grid; the ranking-recovery designs are "
                                     "fixed", param_hint="--metric ranking-recovery")
        _ranking_recovery(output, trials=trials or 100, seed=seed or 0, jobs=jobs, scheduler=scheduler)
        return
    with bad_input_exits():
        grid = load_grid(config) if config is not None else default_grid()
        if sweep:
            grid = grid.select(sweep)
        if trials is not None:
            grid = grid.with_trials(trials)
        if seed is not None:
            import dataclasses

            grid = dataclasses.replace(grid, seed=seed)
        settings = grid.settings()
        unique = len({grid.setting_id(c) for _, _, c in settings})
        started = time.perf_counter()
        with make_executor(jobs=jobs, scheduler=scheduler, preload=("stableval.simulate.grid",)) as executor:
            say(f"ablation: {len(grid.sweeps)} sweeps, {len(settings)} settings ({unique} distinct), "
                f"{grid.trials} trials each, methods {', '.join(grid.methods)}; {executor.describe()}")
            try:
                result = run_grid(grid, output, executor=executor, progress=True)
                if plots:
                    result.files.extend(_sweep_figures(result.summary, grid, output))
            except OSError as error:
                raise write_failed(error.filename or output, error) from None
    elapsed = time.perf_counter() - started
    say(f"computed {result.computed} settings, skipped {result.skipped} already in {output} ({elapsed:.1f} s)")
    rows = result.trials.drop_duplicates(["setting", "trial", "method"])
    not_converged = rows[~rows["converged"].astype(bool)]
    if len(not_converged):
        typer.echo(f"note: {len(not_converged)} (trial, method) rows had an EM fit stop at max_iter without "
                   "converging (column 'converged' in trials.csv)", err=True)
    typer.echo((output / "summary.md").read_text(encoding="utf-8"))
    say(f"wrote {plural(len(result.files), 'file')} to {output}")


def _coverage(output: Path, *, tables: list[str], trials: int, seed: int, jobs: int, scheduler: str | None) -> None:
    """``ablate --metric coverage``: the designs of :func:`stableval.simulate.coverage.default_cells` (``ppi``) and
    of :func:`stableval.simulate.score_coverage.default_score_cells` (``score``) and
    :func:`~stableval.simulate.score_coverage.default_refit_cells` (``score-refit``)."""
    from stableval.commands.output import say
    from stableval.parallel import make_executor
    from stableval.simulate.coverage import default_cells, run_coverage
    from stableval.simulate.score_coverage import (
        default_refit_cells,
        default_score_cells,
        run_refit_coverage,
        run_score_coverage,
    )

    runs: dict[str, tuple[Callable[[], Sequence[Any]], Callable[..., list[Path]]]] = {
        "ppi": (default_cells, run_coverage), "score": (default_score_cells, run_score_coverage),
        "score-refit": (default_refit_cells, run_refit_coverage)}
    files: list[Path] = []
    with bad_input_exits(), make_executor(jobs=jobs, scheduler=scheduler,
                                          preload=("stableval.simulate.coverage",
                                                   "stableval.simulate.score_coverage")) as executor:
        for name in dict.fromkeys(tables):
            cells, run = runs[name]
            designs = cells()
            typer.echo(f"coverage ({name}): {len(designs)} designs, {trials} trials each; {executor.describe()}",
                       err=True)
            written = run(designs, trials, seed, output, executor=executor)
            typer.echo(written[-1].read_text(encoding="utf-8"))
            files.extend(written)
    say(f"wrote {plural(len(files), 'file')} to {output}")


def _ranking_recovery(output: Path, *, trials: int, seed: int, jobs: int, scheduler: str | None) -> None:
    """``ablate --metric ranking-recovery``: every ranking method at the budgets of
    :data:`stableval.simulate.ranking_recovery.RECOVERY_BUDGETS`."""
    from stableval.commands.output import say
    from stableval.parallel import make_executor
    from stableval.simulate.ranking_recovery import RECOVERY_BUDGETS, run_recovery

    with bad_input_exits(), make_executor(jobs=jobs, scheduler=scheduler,
                                          preload=("stableval.simulate.ranking_recovery",)) as executor:
        typer.echo(f"ranking recovery: {len(RECOVERY_BUDGETS)} budgets, {trials} trials each; "
                   f"{executor.describe()}", err=True)
        files = run_recovery(RECOVERY_BUDGETS, trials, seed, output, executor=executor)
    typer.echo(files[-1].read_text(encoding="utf-8"))
    say(f"wrote {plural(len(files), 'file')} to {output}")


def _sweep_figures(summary: Any, grid: Any, output: Path) -> list[Path]:
    """One PNG per sweep (each metric against the setting, one line per method)."""
    from stableval.report.figures import save_figure
    from stableval.report.figures.ablation import sweep_figure

    return [save_figure(sweep_figure(summary[summary["sweep"] == sweep.name], sweep, trials=grid.trials),
                        output / f"{sweep.name}.png", dpi=110)
            for sweep in grid.sweeps]
