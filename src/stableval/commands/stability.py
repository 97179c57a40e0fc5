"""``stableval stability``: how much the ranking of agents depends on which raters judged."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.commands.common import (
    ClusterChoice,
    FileArg,
    JobsOpt,
    MethodSelection,
    Output,
    RaterInfoOpt,
    RaterKinds,
    RatersOpt,
    SeedOpt,
    bad_input_exits,
    executor_options,
    input_options,
    method_options,
    output_options,
    read_table,
    replicates_flag,
)
from stableval.commands.output import save_plot

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data import InputOptions


def register(app: typer.Typer) -> None:
    app.command()(stability)


def _parse_sizes(text: str) -> list[str]:
    from stableval.evaluate.stability import parse_size

    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise typer.BadParameter("no subset size given", param_hint="--sizes")
    for part in parts:
        try:
            parse_size(part)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--sizes") from None
    return parts


def _check_plot(plot: Path | None) -> None:
    from stableval.errors import InputError
    from stableval.report.figures import check_figure_path

    if plot is not None:
        try:
            check_figure_path(plot)
        except InputError as error:
            raise typer.BadParameter(str(error), param_hint="--plot") from None


@input_options("ratings")
@method_options()
@output_options()
@executor_options()
def stability(
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    out: Output,
    cluster: ClusterChoice,
    sizes: Annotated[str, typer.Option(
        "--sizes", "-s", help="Comma-separated subset sizes: fractions of the raters (0.25 or 25%) and/or whole "
                              "rater counts (10).")] = "0.25,0.5,0.75",
    repetitions: Annotated[int, replicates_flag("--repetitions", "-R", minimum=1,
                                                help="Random rater subsets drawn per size.")] = 50,
    jobs: JobsOpt = 0,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the interval for the mean tau-b.")] = 0.95,
    plot: Annotated[Path | None, typer.Option("--plot", help="Save a plot of tau-b against subset size per method "
                                              "(.png, .svg or .pdf).", rich_help_panel="Output")] = None,
    rater_info: RaterInfoOpt = None,
    raters: RatersOpt = RaterKinds.ALL,
) -> None:
    """Ranking stability: Kendall tau-b between the all-rater ranking and rankings from random rater subsets.

    Every method is refit on each random subset of raters (drawn without replacement, seeded). --raters human
    or --raters llm keeps one kind of rater (kinds from --rater-info or a rater_kind column). --executor dask
    reads the Parquet dataset onto a Dask cluster and keeps the judgments there: each subset is filtered on the
    workers and each refit is spread over the partitions (for data larger than this machine's memory).

    Per method and subset size: mean tau-b with a 95% CI, per-agent rank SD and range, P(top agent changes).
    """
    from stableval.errors import StableValError
    from stableval.evaluate.stability import ranking_stability

    size_list = _parse_sizes(sizes)
    _check_plot(plot)
    if cluster.dask:
        if rater_info is not None or raters is not RaterKinds.ALL:
            cluster.refuse("--rater-info/--raters", "select the raters' judgments before (e.g. filter the Parquet "
                                                    "files)")
        cluster.check_methods(methods.names)
    with bad_input_exits():
        try:
            with cluster.session() as dask:
                table = read_table(file, inputs, dask, rater_info, raters)
                result = ranking_stability(table, methods.chosen(seed=seed), sizes=size_list,
                                           repetitions=repetitions, seed=seed, jobs=jobs, confidence=confidence,
                                           progress=True)
        except ValueError as error:
            if isinstance(error, StableValError):
                raise
            sizes_problem = str(error).startswith(("subset size", "no subset size"))
            raise typer.BadParameter(str(error), param_hint="--sizes" if sizes_problem else None) from None
    if plot is not None:
        from stableval.report.figures.stability import stability_figure

        save_plot(stability_figure(result), plot)
    out.emit(result)
