"""What every command shares: input options, the error exit, output choices.

A command module (``stableval/commands/NAME.py``) defines ``register(app)`` and reuses these annotated option
types so every command spells its flags the same way.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


class Duplicates(StrEnum):
    ERROR = "error"
    FIRST = "first"
    LAST = "last"
    KEEP = "keep"


class Ties(StrEnum):
    SPLIT = "split"
    LOWEST = "lowest"
    HIGHEST = "highest"
    RANDOM = "random"


def fail(message: str) -> typer.Exit:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def parse_methods(text: str) -> list[str]:
    from stableval.evaluate.credit import check_methods

    try:
        return check_methods(part for part in text.split(",") if part.strip())
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--method") from None


# ------------------------------------------------------------------ shared input options
FileArg = Annotated[Path, typer.Argument(help="Ratings file: CSV, TSV, JSONL or Parquet; one row per judgment "
                                              "(item, agent, rater, label) or per pairwise vote "
                                              "(item, agent_a, agent_b, rater, winner).",
                                         show_default=False)]
LevelsOpt = Annotated[str | None, typer.Option(
    "--levels", help="Ordered level names, worst first, e.g. incorrect,partial,correct. "
                     "Default: integer labels 0..K-1.", rich_help_panel="Input")]
CreditOpt = Annotated[str | None, typer.Option(
    "--credit", help="Credit per level, e.g. 0,0.5,1. Default: evenly spaced from 0 to 1.",
    rich_help_panel="Input")]
DuplicatesOpt = Annotated[Duplicates, typer.Option(
    "--duplicates", help="Same (item, agent, rater) judged twice: error, keep the first or last, or keep all "
                         "as independent repeated judgments.", rich_help_panel="Input")]
ItemCol = Annotated[str | None, typer.Option("--item-col", help="Column holding the item id.",
                                             rich_help_panel="Input")]
AgentCol = Annotated[str | None, typer.Option("--agent-col", help="Column holding the agent (system) name.",
                                              rich_help_panel="Input")]
RaterCol = Annotated[str | None, typer.Option("--rater-col", help="Column holding the rater id.",
                                              rich_help_panel="Input")]
LabelCol = Annotated[str | None, typer.Option("--label-col", help="Column holding the label.",
                                              rich_help_panel="Input")]
AgentOpt = Annotated[str | None, typer.Option(
    "--default-agent", help="Agent name for every row when the file has no agent column.",
    rich_help_panel="Input")]
AgentACol = Annotated[str | None, typer.Option("--agent-a-col", help="Pairwise votes: column of the first agent.",
                                               rich_help_panel="Input")]
AgentBCol = Annotated[str | None, typer.Option("--agent-b-col", help="Pairwise votes: column of the second agent.",
                                               rich_help_panel="Input")]
WinnerCol = Annotated[str | None, typer.Option("--winner-col", help="Pairwise votes: column of the winner "
                                               "(a, b or tie).", rich_help_panel="Input")]
CriterionCol = Annotated[str | None, typer.Option("--criterion-col", help="Pairwise votes: column of the "
                                                  "criterion, if any.", rich_help_panel="Input")]
WeightCol = Annotated[str | None, typer.Option("--weight-col", help="Pairwise votes: column of the vote weight "
                                              "(a number >= 0; default 1).", rich_help_panel="Input")]
PairwiseOpt = Annotated[bool | None, typer.Option(
    "--pairwise/--no-pairwise", help="Treat the file as pairwise votes (default: detected from the columns).",
    rich_help_panel="Input", show_default=False)]
InputFormatOpt = Annotated[str | None, typer.Option(
    "--input-format", help="csv, tsv, jsonl or parquet (default: from the file suffix).", rich_help_panel="Input")]


def read_input(file: Path, *, levels: str | None, credit: str | None, duplicates: Duplicates,
               agent: str | None, pairwise: bool | None, input_format: str | None, item_col: str | None = None,
               agent_col: str | None = None, rater_col: str | None = None, label_col: str | None = None,
               agent_a_col: str | None = None, agent_b_col: str | None = None, winner_col: str | None = None,
               criterion_col: str | None = None) -> Any:
    """Read FILE as an annotation table from the shared input flags (the ``--*-col`` flags name columns)."""
    from stableval.data import read_any

    columns = {"item": item_col, "agent": agent_col, "rater": rater_col, "label": label_col,
               "agent_a": agent_a_col, "agent_b": agent_b_col, "winner": winner_col, "criterion": criterion_col}
    chosen = {role: name for role, name in columns.items() if name}
    return read_any(file, pairwise=pairwise, columns=chosen or None, levels=levels, credit=credit,
                    duplicates=duplicates.value, format=input_format, default_agent=agent)


# ------------------------------------------------------------------ shared method options
MethodOpt = Annotated[str, typer.Option("--method", "-m", help="Comma-separated methods: mv, ds, stableval.")]
TiesOpt = Annotated[Ties, typer.Option("--ties", help="Majority-vote ties: split the credit, lowest, highest or "
                                                      "random level.", rich_help_panel="Methods")]
AlphaMuOpt = Annotated[float, typer.Option("--alpha-mu", min=1.0, help="STABLEVAL Dirichlet prior on the class "
                                           "priors (1 = none).", rich_help_panel="Methods")]
AlphaPiOpt = Annotated[float, typer.Option("--alpha-pi", min=1.0, help="STABLEVAL Dirichlet prior on each "
                                           "confusion row (1 = none; larger for sparse raters).",
                                           rich_help_panel="Methods")]
EpsilonOpt = Annotated[float, typer.Option("--epsilon", min=1e-6, max=0.999, help="STABLEVAL off-diagonal mass "
                                           "of the initial confusion matrices.", rich_help_panel="Methods")]
MaxIterOpt = Annotated[int, typer.Option("--max-iter", min=1, help="Most EM iterations.", rich_help_panel="Methods")]
TolOpt = Annotated[float, typer.Option("--tol", min=0.0, help="EM stops when the objective improves by less than "
                                       "tol × |objective|.", rich_help_panel="Methods")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="table (readable), json or csv.",
                                                 rich_help_panel="Output")]
OutputOpt = Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.",
                                                rich_help_panel="Output")]


def write_output(text: str, output: Path | None) -> None:
    """Print ``text``, or write it to ``output`` and say so on stderr."""
    import sys

    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
