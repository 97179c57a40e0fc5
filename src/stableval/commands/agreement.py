"""``stableval agreement``: how much the raters agree, response by response."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.commands.common import (
    ConfidenceOpt,
    FileArg,
    Output,
    SeedOpt,
    bad_input_exits,
    bootstrap_flag,
    input_options,
    output_options,
    read_input,
)
from stableval.commands.output import Appended

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data import InputOptions

QUICK_BOOTSTRAP = 200


class CohenWeights(StrEnum):
    NONE = "none"
    LINEAR = "linear"
    QUADRATIC = "quadratic"


def register(app: typer.Typer) -> None:
    app.command()(agreement)


@input_options("ratings")
@output_options()
def agreement(
    file: FileArg,
    inputs: InputOptions,
    out: Output,
    bootstrap: Annotated[int, bootstrap_flag("Bootstrap replicates over responses for the 95% CIs (0 = none).")
                         ] = 1000,
    quick: Annotated[bool, typer.Option("--quick", help=f"Fewer bootstrap replicates (B={QUICK_BOOTSTRAP}) "
                                                        "for a fast first look.")] = False,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    min_shared: Annotated[int, typer.Option("--min-shared", min=1,
                                            help="Cohen's kappa only for rater pairs that judged at least this "
                                                 "many responses in common.")] = 20,
    cohen_weights: Annotated[CohenWeights, typer.Option(
        "--cohen-weights", help="Weights of the Cohen's kappa averaged over pairs (the levels are ordered, so "
                                "quadratic by default); every pair's unweighted, linear and quadratic kappa "
                                "are in the JSON/CSV output.")] = CohenWeights.QUADRATIC,
    pairs: Annotated[int, typer.Option("--pairs", min=0, help="Rater pairs to list in the table output "
                                                              "(most shared responses first).")] = 10,
) -> None:
    """Inter-rater agreement per response: unanimous and pairwise agreement, Krippendorff's alpha (nominal,
    ordinal, interval), Fleiss' kappa, Gwet's AC1 and Cohen's kappa per rater pair, with bootstrap CIs.

    The unit is the response (item, agent); --format csv gives the statistics, --format json also every pair.
    """
    from stableval.evaluate.agreement import agreement as compute

    replicates = QUICK_BOOTSTRAP if quick and bootstrap > QUICK_BOOTSTRAP else bootstrap
    with bad_input_exits():
        table = read_input(file, inputs).table
        result = compute(table, bootstrap=replicates, seed=seed, confidence=confidence, min_shared=min_shared,
                         cohen_weights=cohen_weights.value, progress=True)
    out.emit(Appended(result, render_options={"pairs": pairs}))


__all__ = ["agreement", "register"]
