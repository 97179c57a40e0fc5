"""``stableval export`` and ``stableval portal export``: export the evaluation portal's judgments without the web
server. One command, implemented and registered (under both names) here.

Confirmed judgments of one track (or all) as stableval's annotation table (one row per rated answer: ``item,
agent, rater, label 1-5, criterion, position, rater_group, track``) or pairwise table (``item, agent_a, agent_b,
rater, winner, criterion, reason, rater_group, track``), as CSV, JSONL or Parquet. The ``portal`` group itself
is declared in :mod:`stableval.commands.portal`. A SQLite database that does not exist is refused
(exit 1), never created. CSV cells that a spreadsheet would run as formulas are written with a leading ``'``
(see :mod:`stableval.portal.admin.export`).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import OutputOpt, bad_input_exits, fail
from stableval.commands.output import say
from stableval.commands.portal import DEFAULT_DB, DatabaseOpt, open_database, portal_app, require_existing
from stableval.wording import plural

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
    """Register :func:`export` twice, the same function: ``stableval export`` and ``stableval portal export``; and
    with it the ``portal`` group (declared in :mod:`stableval.commands.portal`)."""
    app.command("export", help=HELP)(export)
    if not any(info.callback is export for info in portal_app.registered_commands):
        portal_app.command("export")(export)
    app.add_typer(portal_app, name="portal")


def export(
    slug: Annotated[str | None, typer.Argument(help="Track name (default: every track).")] = None,
    kind: Annotated[ExportKind | None, typer.Option(
        "--kind", help="Pairwise tracks: annotations (item, agent, rater, label 1-5; the default) or pairwise (item, "
                       "agent_a, agent_b, rater, winner). Other task types export their own format (single: "
                       "annotations; mcq: stableval medqa's columns; ddx: stableval ddx's JSON; rank-documents: "
                       "qid, item, rank).", show_default=False)] = None,
    output_format: Annotated[ExportFormat, typer.Option("--format", "-f", help="csv, jsonl or parquet.")
                             ] = ExportFormat.CSV,
    criterion: Annotated[str | None, typer.Option("--criterion", help="Only this criterion (needed to score "
                                                                      "ratings with stableval score).")] = None,
    rater: Annotated[str | None, typer.Option("--rater", help="Only this rater's answers (rater-7; needs a track), "
                                              "e.g. one ranking per file for stableval nrp agree.")] = None,
    output: OutputOpt = None,
    database_url: DatabaseOpt = DEFAULT_DB,
) -> None:
    """Export confirmed judgments (one row per rater × item × criterion) for stableval score and friends."""
    from stableval.portal.admin.export import export as run_export

    if output is None and output_format is ExportFormat.PARQUET:
        raise typer.BadParameter("Parquet needs --output FILE", param_hint="--format")
    require_existing(database_url)  # never create an empty database by exporting from a wrong path
    db = open_database(database_url)
    if slug is None:
        if rater is not None:
            raise typer.BadParameter("--rater needs a track", param_hint="--rater")
        with bad_input_exits():
            result = run_export(db, (kind or ExportKind.ANNOTATIONS).value, criterion=criterion)
        _write_table(result.frame, result.notes, output_format, output)
        return
    from stableval.portal.store.answers import task_of
    from stableval.portal.tasks.registry import TASKS

    with bad_input_exits():
        task = TASKS[task_of(db, slug)]
    if kind is not None and kind.value not in task.export_kinds:
        raise typer.BadParameter(f"{slug} is a {task.name} track: it exports its own format, without --kind",
                                 param_hint="--kind")
    _export_track(db, slug, kind, criterion, rater, output_format, output, one_format=not task.export_kinds)


def _write_table(frame: Any, notes: Any, output_format: ExportFormat, output: Path | None) -> None:
    """Write an export table to ``output`` (or stdout) in ``output_format``, then its notes on stderr."""
    from stableval.portal.admin.export import write

    if output is None:
        write(frame, sys.stdout.buffer, output_format.value)
        sys.stdout.flush()
    else:
        write(frame, output, output_format.value)
        say(f"wrote {plural(len(frame), 'row')} to {output}")
    for note in notes:
        say(f"note: {note}")


def _export_track(db: Any, slug: str, kind: ExportKind | None, criterion: str | None, rater: str | None,
                  output_format: ExportFormat, output: Path | None, *, one_format: bool) -> None:
    """Write the export of a track in its task type's format (:mod:`stableval.portal.admin.export`) and, for a type
    with one format, print the command that analyses it; a ddx export is JSON with its condition names and case ids
    beside it (needs --output)."""
    from stableval.portal.admin.export import analysis_command, export
    from stableval.portal.tasks.ddx import cases_path, conditions_path, ddx_json

    with bad_input_exits():
        result = export(db, None if kind is None else kind.value, track=slug, criterion=criterion, rater=rater)
    if result.selectors is not None:  # the stableval ddx JSON, with the condition names and case ids beside it
        if output is None or output.suffix.lower() != ".json":
            raise typer.BadParameter(f"a {result.task} track exports stableval ddx's JSON: give --output FILE.json",
                                     param_hint="--output")
        if not result.selectors:
            raise fail(f"track {slug} has no confirmed answers yet: nothing to export")
        output.write_text(ddx_json(result), encoding="utf-8")
        Path(conditions_path(str(output))).write_text("\n".join(result.conditions) + "\n", encoding="utf-8")
        Path(cases_path(str(output))).write_text("\n".join(result.cases) + "\n", encoding="utf-8")
        say(f"wrote {plural(len(result.cases), 'case')} to {output}, the condition names to "
            f"{conditions_path(str(output))} and the case ids to {cases_path(str(output))}")
        for note in result.notes:
            say(f"note: {note}")
    else:
        _write_table(result.frame, result.notes, output_format, output)
    if one_format:
        say(f"analyse with: {analysis_command(result, str(output) if output else 'FILE')}")
