"""``stableval plan``: how many more human ratings a pilot needs, and on which responses."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.commands.common import (
    ConfidenceOpt,
    FileArg,
    Output,
    RaterInfoOpt,
    SeedOpt,
    bad_input_exits,
    input_options,
    method_options,
    output_options,
    read_rated_input,
)
from stableval.commands.output import save_plot, write_csv

if TYPE_CHECKING:  # pragma: no cover
    from stableval.commands.common import MethodSelection
    from stableval.data import InputOptions


def register(app: typer.Typer) -> None:
    app.command()(plan)


@input_options("ratings")
@method_options("stableval", single=True)
@output_options()
def plan(
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    out: Output,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="The interval width every agent's score should reach "
                                                       "(in credit, e.g. 0.05).", rich_help_panel="Target")] = None,
    target_correct: Annotated[float | None, typer.Option(
        "--target-correct", help="Or: the probability that the whole ranking comes out right (e.g. 0.9).",
        rich_help_panel="Target")] = None,
    rater_info: RaterInfoOpt = None,
    confidence: ConfidenceOpt = 0.95,
    seed: SeedOpt = 0,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Save interval width against the extra human budget (people only, PPI++, active) as a PNG, "
                       "SVG or PDF file.", rich_help_panel="Output")] = None,
    items_out: Annotated[Path | None, typer.Option(
        "--items-out", help="Write the responses not yet rated by people, with each plan's probability of rating "
                            "them and one seeded draw, as CSV.", rich_help_panel="Output")] = None,
) -> None:
    """Plan the human budget from a pilot (people on some responses, LLM judges on all): how many more
    people-rated responses each agent needs to reach --target-width or --target-correct, people only, with PPI++
    on a random sample, and with active selection (the judges' least certain responses first)."""
    from stableval.errors import InputError
    from stableval.evaluate.ppi_plan import plan_ppi
    from stableval.report.figures import check_figure_path, plan_figure

    if (target_width is None) == (target_correct is None):
        raise typer.BadParameter("give one target: --target-width W or --target-correct P",
                                 param_hint="--target-width")
    if target_width is not None and not 0 < target_width < float("inf"):
        raise typer.BadParameter(f"{target_width}; allowed: a number > 0", param_hint="--target-width")
    if target_correct is not None and not 0 < target_correct < 1:
        raise typer.BadParameter(f"{target_correct}; allowed: a probability strictly between 0 and 1",
                                 param_hint="--target-correct")
    with bad_input_exits():
        if plot is not None:
            check_figure_path(plot, option="plot")
        loaded, info, _ = read_rated_input(file, inputs, rater_info)
        if info is None:
            raise InputError("plan needs to know which raters are people and which are LLM judges",
                             file=loaded.table.source, allowed="a rater metadata file ({rater_info}; columns name, "
                             "kind, family) or a rater_kind column in the ratings", options={"rater_info": "FILE"})
        result = plan_ppi(loaded.table, info, methods.chosen(seed=seed)[0], target_width=target_width,
                          target_correct=target_correct, confidence=confidence, seed=seed)
    if plot is not None:
        save_plot(plan_figure(result.curve, target=float(result.agents["target_width"].iloc[0])), plot)
    if items_out is not None:
        write_csv(result.items, items_out)
    out.emit(result)
