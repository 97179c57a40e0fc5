"""``stableval pairwise``: a Bradley–Terry leaderboard from pairwise votes."""

from __future__ import annotations

import io
import json
from typing import Annotated, Any

import typer

from stableval._version import __version__
from stableval.commands.common import (
    AgentACol,
    AgentBCol,
    CriterionCol,
    Duplicates,
    DuplicatesOpt,
    FileArg,
    FormatOpt,
    InputFormatOpt,
    ItemCol,
    OutputFormat,
    OutputOpt,
    RaterCol,
    SeedOpt,
    WeightCol,
    WinnerCol,
    fail,
    write_output,
)


def register(app: typer.Typer) -> None:
    app.command()(pairwise)


def pairwise(
    file: FileArg,
    ties: Annotated[str, typer.Option("--ties", help="half: a tie is half a win for each side; davidson: "
                                                     "Davidson's (1970) tie model.")] = "half",
    prior: Annotated[float, typer.Option("--prior", min=0.0, help="Virtual ties added between every pair of agents "
                                                                  "(needed when an agent never lost).")] = 0.0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0, help="Bootstrap replicates over votes "
                                                                            "(0 = none).")] = 1000,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    item_col: ItemCol = None,
    agent_a_col: AgentACol = None,
    agent_b_col: AgentBCol = None,
    rater_col: RaterCol = None,
    winner_col: WinnerCol = None,
    criterion_col: CriterionCol = None,
    weight_col: WeightCol = None,
    input_format: InputFormatOpt = None,
) -> None:
    """Bradley–Terry ratings (Elo-like scale) with bootstrap CIs, rank intervals, win rates and position bias."""
    from stableval.data import read_pairwise
    from stableval.errors import StableValError
    from stableval.evaluate.pairwise import pairwise_leaderboard

    if ties not in ("half", "davidson"):
        raise typer.BadParameter(f"{ties!r}; allowed: half, davidson", param_hint="--ties")
    columns = {role: name for role, name in (("item", item_col), ("agent_a", agent_a_col), ("agent_b", agent_b_col),
                                             ("rater", rater_col), ("winner", winner_col),
                                             ("criterion", criterion_col), ("weight", weight_col)) if name}
    try:
        votes = read_pairwise(file, columns=columns or None, duplicates=duplicates.value, format=input_format)
        board = pairwise_leaderboard(votes, ties=ties, prior=prior, bootstrap=bootstrap, seed=seed,
                                     confidence=confidence, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if output_format is OutputFormat.JSON:
        text = json.dumps({"version": __version__, **board.to_dict()}, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = board.ratings.to_csv(index=False)
    else:
        text = _render(board, to_file=output is not None)
    write_output(text, output)


def _render(board: Any, *, to_file: bool) -> str:
    import sys

    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=not to_file and sys.stdout.isatty(), width=140, highlight=False)
    settings = board.settings
    console.print(f"[bold]{settings['source']}[/]: {settings['votes']:,} pairwise votes; Bradley–Terry, ties "
                  f"{'as half wins' if settings['ties'] == 'half' else 'by the Davidson model'}"
                  + (f", prior {settings['prior']:g} virtual ties per pair" if settings["prior"] else ""))
    for note in settings["notes"]:
        console.print(f"  note: {note}")
    confidence = round(settings["confidence"] * 100)
    for criterion, part in board.ratings.groupby("criterion", sort=False):
        table = Table(box=box.SIMPLE_HEAVY, title=f"Leaderboard — {criterion}", title_justify="left",
                      show_edge=False)
        for name, justify in (("Agent", "left"), ("Rating", "right"), (f"{confidence}% CI", "right"),
                              ("Rank", "right"), ("Games", "right"), ("W / L / T", "right")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for row in part.itertuples(index=False):
            interval = f"[{row.ci_low:.0f}, {row.ci_high:.0f}]" if row.ci_low == row.ci_low else ""
            rank = f"{row.rank}" + (f" ({row.rank_low}–{row.rank_high})" if row.rank_low != row.rank_high else "")
            table.add_row(str(row.agent), f"{row.rating:.0f}", interval, rank, f"{row.games:g}",
                          f"{row.wins:g} / {row.losses:g} / {row.ties:g}")
        console.print(table)
        rate = board.win_rate[criterion]
        order = list(part["agent"])
        matrix = Table(box=box.MINIMAL, title="Win rate of row vs column (ties = ½)", title_justify="left")
        matrix.add_column("")
        for agent in order:
            matrix.add_column(agent[:14], justify="right")
        for agent in order:
            matrix.add_row(agent, *[("—" if a == agent else (f"{rate.loc[agent, a]:.2f}"
                                                             if rate.loc[agent, a] == rate.loc[agent, a] else ""))
                                    for a in order])
        console.print(matrix)
        bias = board.position_bias.set_index("criterion").loc[criterion]
        console.print(f"Position bias: the first-shown (left) answer won {bias['share_left']:.1%} of decisive votes "
                      f"({int(bias['left_wins'])} vs {int(bias['right_wins'])}; {confidence}% CI "
                      f"[{bias['ci_low']:.1%}, {bias['ci_high']:.1%}]; 50% = no bias). Ties: {int(bias['ties'])}.")
        if settings["ties"] == "davidson":
            console.print(f"Davidson tie parameter nu = {board.tie_parameter[criterion]:.3f}.")
    console.print(f"Ratings: 1000 + 400·log10(strength / geometric mean); intervals from {settings['bootstrap']:,} "
                  f"bootstrap resamples of the votes (seed {settings['seed']}).")
    return buffer.getvalue()
