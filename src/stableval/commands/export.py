"""``stableval export`` and ``stableval portal export``: export the evaluation portal's judgments without the web
server. One command, implemented and registered (under both names) here.

Confirmed judgments of one track (or all) as stableval's annotation table (one row per rated answer: ``item,
agent, rater, label 1-5, criterion, position, rater_group, track``) or pairwise table (``item, agent_a, agent_b,
rater, winner, criterion, reason, rater_group, track``), as CSV, JSONL or Parquet. The ``portal`` group itself
(and ``serve``) is declared in :mod:`stableval.commands.serve`. A SQLite database that does not exist is refused
(exit 1), never created. CSV cells that a spreadsheet would run as formulas are written with a leading ``'``
(see :mod:`stableval.portal.export`).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from stableval.commands.common import OutputOpt, bad_input_exits
from stableval.commands.serve import DEFAULT_DB, DatabaseOpt, open_database, portal_app, require_existing

__all__ = ["HELP", "ExportFormat", "ExportKind", "export", "register"]

#: Help of the top-level ``stableval export`` (``stableval portal export`` shows the function's docstring).
HELP = ("Export the portal's confirmed judgments (one row per rater × item × criterion) as stableval annotation or "
        "pairwise tables, without the web server; same as 'stableval portal export'. Score one criterion with "
        "'stableval score FILE --levels 1,2,3,4,5'.")


class ExportKind(StrEnum):
    ANNOTATIONS = "annotations"
    PAIRWISE = "pairwise"


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


def register(app: typer.Typer) -> None:
    """Register :func:`export` twice, the same function: ``stableval export`` and ``stableval portal export``."""
    app.command("export", help=HELP)(export)
    portal_app.command("export")(export)


def export(
    slug: Annotated[str | None, typer.Argument(help="Track name (default: every track).")] = None,
    kind: Annotated[ExportKind, typer.Option("--kind", help="annotations (item, agent, rater, label 1-5) or "
                                                            "pairwise (item, agent_a, agent_b, rater, winner).")
                    ] = ExportKind.ANNOTATIONS,
    output_format: Annotated[ExportFormat, typer.Option("--format", "-f", help="csv, jsonl or parquet.")
                             ] = ExportFormat.CSV,
    criterion: Annotated[str | None, typer.Option("--criterion", help="Only this criterion (needed to score "
                                                                      "ratings with stableval score).")] = None,
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Export confirmed judgments (one row per rater × item × criterion) for stableval score and friends."""
    from stableval.portal.export import export as run_export
    from stableval.portal.export import write

    if output is None and output_format is ExportFormat.PARQUET:
        raise typer.BadParameter("Parquet needs --output FILE", param_hint="--format")
    require_existing(database_url)  # never create an empty database by exporting from a wrong path
    db = open_database(database_url)
    with bad_input_exits():
        result = run_export(db, kind.value, track=slug, criterion=criterion)
    if output is None:
        write(result.frame, sys.stdout.buffer, output_format.value)
        sys.stdout.flush()
    else:
        write(result.frame, output, output_format.value)
        typer.echo(f"wrote {len(result.frame):,} rows to {output}", err=True)
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
