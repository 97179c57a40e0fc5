"""``stableval report`` (one self-contained HTML file) and ``stableval plot`` (one figure)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands.common import (
    BootstrapOpt,
    FileArg,
    JobsOpt,
    LengthColOpt,
    MethodSelection,
    RaterInfoOpt,
    SeedOpt,
    bad_input_exits,
    bootstrap_flag,
    input_options,
    method_options,
    qc_options,
    read_input,
    read_rated_input,
)
from stableval.commands.studies import RankingMethodName, RankingParamOpt, ddx_case, default_ranking_method

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from stableval.data import InputOptions, Loaded
    from stableval.report.options import QualityControl

PLOT_KINDS = ("forest", "win-probability", "stability", "raters", "confusion", "ratings", "win-rate", "ddx-case")


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(plot)


@input_options("ratings")
@method_options()
@qc_options()
def report(
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    qc: QualityControl | None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    quick: Annotated[bool, typer.Option("--quick", help="Fewer bootstrap draws (200) for a fast first look.")
                     ] = False,
    bootstrap: Annotated[int | None, bootstrap_flag("Bootstrap replicates (default 1000, or 200 with --quick).")
                         ] = None,
    seed: SeedOpt = 0,
    jobs: JobsOpt = 0,
    rater_info: RaterInfoOpt = None,
    length_col: LengthColOpt = None,
) -> None:
    """Write one self-contained HTML report (inline figures, printable) of every analysis of FILE.

    With rater kinds (--rater-info or a rater_kind column) it adds the leaderboards of the people and of the LLM
    judges side by side, with rank changes, and each judge against the human consensus; with a QC source
    (--qc-rater, --qc-file or --qc-consensus) the reliability of every rater against it.
    """
    import os

    from stableval.commands.output import check_output_path, write_file, wrote
    from stableval.report import ReportOptions, build_report

    check_output_path(output)
    with bad_input_exits():
        loaded, info, lengths = read_rated_input(file, inputs, rater_info, length_col)
        html = build_report(loaded, methods=methods.chosen(seed=seed), quick=quick, seed=seed,
                            bootstrap=bootstrap, command="stableval " + " ".join(sys.argv[1:]), progress=True,
                            options=ReportOptions(jobs=jobs or os.cpu_count() or 1, qc=qc, rater_info=info,
                                                  lengths=lengths))
    wrote(write_file(html, output), f" ({len(html) / 1024:.0f} KiB)")


@input_options("ratings")
@method_options()
def plot(
    kind: Annotated[str, typer.Argument(help=f"Figure: {', '.join(PLOT_KINDS)}.", show_default=False)],
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    output: Annotated[Path, typer.Option("--output", "-o", help="Image file: .png, .svg or .pdf.")] = Path("fig.png"),
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    case: Annotated[str | None, typer.Option("--case", help="ddx-case: the case to draw, by its id (the 0-based "
                                             "'case' of `stableval ddx` tables).")] = None,
    least_certain: Annotated[int | None, typer.Option("--least-certain", min=1, help="ddx-case: print the ids of "
                                                      "the N least certain cases (one per line) instead of "
                                                      "drawing.")] = None,
    ranking_method: Annotated[RankingMethodName, typer.Option("--ranking-method", help="ddx-case: the ranking "
                                                              "aggregation method of the plausibility.")
                              ] = RankingMethodName(default_ranking_method()),
    ranking_param: RankingParamOpt = None,
) -> None:
    """Draw one figure of the report to an image file; 'ddx-case' draws one case of a DDx selectors FILE (its
    raters' partial rankings and the aggregated plausibility)."""
    from stableval.commands.output import save_plot
    from stableval.errors import InputError
    from stableval.report.figures import check_figure_path

    if kind not in PLOT_KINDS:
        raise typer.BadParameter(f"{kind!r}; allowed: {', '.join(PLOT_KINDS)}", param_hint="KIND")
    if kind == "ddx-case":
        ddx_case(file, case=case, least_certain=least_certain, method=ranking_method.value, output=output,
                 draws=bootstrap or 1, seed=seed, ranking_param=ranking_param)
        return
    try:
        check_figure_path(output)
    except InputError as error:
        raise typer.BadParameter(str(error), param_hint="--output") from None
    with bad_input_exits():
        loaded = read_input(file, inputs)
        fig = _make_figure(kind, loaded, methods.chosen(seed=seed), bootstrap, seed)
    save_plot(fig, output)


def _make_figure(kind: str, loaded: Loaded, methods: list[Any], bootstrap: int, seed: int) -> Figure:
    from stableval.report.figures import forest_plot, win_heatmap

    if kind in ("ratings", "win-rate"):
        from stableval.errors import InputError
        from stableval.evaluate.pairwise import pairwise_leaderboard
        from stableval.report.figures import rating_plot

        if loaded.votes is None:
            raise InputError(f"the {kind} figure needs pairwise votes", file=loaded.table.source,
                             allowed="a file with agent_a, agent_b and winner columns (or --pairwise with "
                                     "--agent-a-col / --agent-b-col / --winner-col)")
        board = pairwise_leaderboard(loaded.votes, bootstrap=bootstrap, seed=seed, progress=True)
        if kind == "ratings":
            return rating_plot(board)
        criterion = next(iter(board.win_rate))
        order = board.ratings[board.ratings["criterion"] == criterion]["agent"].tolist()
        return win_heatmap(board.win_rate[criterion].loc[order, order], f"Observed win rate — {criterion}")
    table = loaded.table
    if kind == "stability":
        from stableval.evaluate.stability import ranking_stability
        from stableval.report.figures.stability import stability_figure

        return stability_figure(ranking_stability(table, methods, seed=seed, progress=True))
    if kind in ("raters", "confusion"):
        from stableval.aggregate.registry import headline_rater_model
        from stableval.evaluate.diagnostics import diagnose
        from stableval.report.figures import confusion_grid, rater_scatter

        diagnostics = diagnose(table, headline_rater_model(methods))
        return rater_scatter(diagnostics) if kind == "raters" else confusion_grid(diagnostics)
    from stableval.aggregate.registry import method_label, primary_method
    from stableval.evaluate import score_agents

    result = score_agents(table, methods, bootstrap=bootstrap, seed=seed, progress=True)
    if kind == "forest":
        return forest_plot(result)
    method = primary_method(result.methods)
    order = result.leaderboard()["agent"].tolist()
    return win_heatmap(result.win_probability[method].loc[order, order],
                       f"P(row agent scores above column agent) — {method_label(method)}")
