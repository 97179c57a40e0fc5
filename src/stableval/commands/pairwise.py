"""``stableval pairwise``: a Bradley–Terry leaderboard from pairwise votes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands.common import (
    Combine,
    CombineOpt,
    ConfidenceOpt,
    FileArg,
    Output,
    RaterInfoOpt,
    SeedOpt,
    bad_input_exits,
    bootstrap_flag,
    input_options,
    output_options,
    read_input,
)

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data import InputOptions


def register(app: typer.Typer) -> None:
    app.command()(pairwise)


@input_options("votes")
@output_options()
def pairwise(
    file: FileArg,
    inputs: InputOptions,
    out: Output,
    ties: Annotated[str, typer.Option("--ties", help="half: a tie is half a win for each side; davidson: "
                                                     "Davidson's (1970) tie model.")] = "half",
    prior: Annotated[float, typer.Option("--prior", min=0.0, help="Virtual ties added between every pair of agents "
                                                                  "(needed when an agent never lost).")] = 0.0,
    bootstrap: Annotated[int, bootstrap_flag("Bootstrap replicates over votes (0 = none).")] = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    rater_info: RaterInfoOpt = None,
    combine: CombineOpt = Combine.POOL,
) -> None:
    """Bradley–Terry ratings (Elo-like scale) with bootstrap CIs, rank intervals, win rates and position bias.

    --combine ppi: prediction-powered Bradley–Terry from the votes of people and LLM judges (kinds from
    --rater-info or a rater_kind column); --bootstrap then sets the draws behind the rank intervals.
    """
    from stableval.data import read_pairwise
    from stableval.evaluate.pairwise import pairwise_leaderboard

    if combine is Combine.PPI:
        for used, flag in ((ties != "half", "--ties"), (prior != 0.0, "--prior")):
            if used:
                raise typer.BadParameter("not with --combine ppi, whose Bradley–Terry fit counts a tie as half a "
                                         "win and adds no virtual ties", param_hint=flag)
        with bad_input_exits():
            out.emit(_ppi_board(file, inputs, rater_info, draws=bootstrap, seed=seed, confidence=confidence))
        return

    if not math.isfinite(prior) or prior > 1e6:
        raise typer.BadParameter(f"{prior!r}; allowed: a finite number of virtual ties from 0 to 1e6",
                                 param_hint="--prior")
    if ties not in ("half", "davidson"):
        raise typer.BadParameter(f"{ties!r}; allowed: half, davidson", param_hint="--ties")
    with bad_input_exits():
        votes = (read_pairwise(file, columns=inputs.columns, duplicates=inputs.duplicates, format=inputs.format)
                 if inputs.importer is None else read_input(file, replace(inputs, pairwise=True)).votes)
        board = pairwise_leaderboard(votes, ties=ties, prior=prior, bootstrap=bootstrap, seed=seed,
                                     confidence=confidence, progress=True)
    out.emit(board)


def _ppi_board(file: Path, inputs: InputOptions, rater_info: Path | None, *, draws: int, seed: int,
               confidence: float) -> Any:
    """Prediction-powered Bradley–Terry of FILE's votes (:func:`stableval.evaluate.ppi_bradley_terry`)."""
    from stableval.commands.common import read_rated_input
    from stableval.errors import InputError
    from stableval.evaluate import ppi_bradley_terry

    loaded, info, _ = read_rated_input(file, replace(inputs, pairwise=True), rater_info)
    if info is None:
        raise InputError("--combine ppi needs to know which raters are people and which are LLM judges",
                         file=loaded.table.source, allowed="a rater metadata file ({rater_info}; columns name, "
                         "kind, family) or a rater_kind column in the votes", options={"rater_info": "FILE"})
    return ppi_bradley_terry(loaded.votes, info, draws=draws, seed=seed, confidence=confidence)
