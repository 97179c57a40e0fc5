"""``stableval export``: export the evaluation portal's judgments without the web server.

The same command as ``stableval portal export`` (the very same function, registered at the top level as the
portal issue asks): confirmed judgments of one track (or all) as stableval's annotation table (one row per
rated answer: ``item, agent, rater, label 1-5, criterion, position, rater_group, track``) or pairwise table
(``item, agent_a, agent_b, rater, winner, criterion, reason, rater_group, track``), as CSV, JSONL or Parquet.
"""

from __future__ import annotations

import typer

from stableval.commands.serve import export

HELP = ("Export the portal's confirmed judgments (one row per rater × item × criterion) as stableval annotation or "
        "pairwise tables, without the web server; same as 'stableval portal export'. Score one criterion with "
        "'stableval score FILE --levels 1,2,3,4,5'.")


def register(app: typer.Typer) -> None:
    app.command("export", help=HELP)(export)
