"""``stableval rater-bootstrap``: accuracy of models over bootstrapped ground truths.

    stableval rater-bootstrap labels.csv --predictions model=preds.csv

The studies built on the same idea have their own commands (``medqa``, ``ddx``: :mod:`stableval.commands.studies`).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.aggregate.ties import describe_ties
from stableval.commands.common import (
    BinsOpt,
    ConfidenceOpt,
    DrawnRatersOpt,
    DrawsOpt,
    MergeLevelsOpt,
    Output,
    PredictionsOpt,
    SeedOpt,
    VoteRule,
    bad_input_exits,
    named_files,
    output_options,
)
from stableval.evaluate.vote_rules import TIES

#: ``--ties``: the rater bootstrap's tie rules (:data:`stableval.evaluate.rater_bootstrap.TIES`)
if TYPE_CHECKING:
    GenericTies = StrEnum
else:
    GenericTies = StrEnum("GenericTies", {name: name for name in TIES})


def register(app: typer.Typer) -> None:
    app.command("rater-bootstrap")(rater_bootstrap)


@output_options()
def rater_bootstrap(
    file: Annotated[Path, typer.Argument(help="Per-item labels: one row per rating (item, label) or one row per "
                                              "item with one count column per label (CSV, TSV, JSONL, Parquet).",
                                         show_default=False)],
    predictions: PredictionsOpt = None,
    item_col: Annotated[str, typer.Option("--item-col", help="Column holding the item id (ratings and "
                                                             "predictions).")] = "item",
    label_col: Annotated[str | None, typer.Option("--label-col", help="Column holding the label (long layout; "
                                                  "default 'label' if present, else the file is read as counts).")
                         ] = None,
    levels: Annotated[str | None, typer.Option("--levels", help="Comma-separated label names in order (default: "
                                               "sorted distinct labels, or the count columns).")] = None,
    merge_levels: MergeLevelsOpt = None,
    bins: BinsOpt = None,
    rule: Annotated[VoteRule, typer.Option("--rule", help="Aggregate each draw by majority (plurality) or unanimity "
                                           "(items without agreement are left out of that draw).")
                    ] = VoteRule.MAJORITY,
    ties: Annotated[GenericTies, typer.Option("--ties", help=f"What a tie for the majority earns: "
                                                             f"{describe_ties(TIES)}.")] = GenericTies(TIES[0]),
    raters: DrawnRatersOpt = 3,
    draws: DrawsOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    out: Output = Output(),
) -> None:
    """Accuracy of each model against bootstrapped ground truths: per item, draw k ratings with replacement,
    aggregate, score; mean and interval over draws."""
    from stableval.datasets.label_sets import read_label_sets, read_predictions_file
    from stableval.evaluate.rater_bootstrap import rater_bootstrap as run

    models = named_files(predictions)
    with bad_input_exits():
        sets = read_label_sets(file, item_col=item_col, label_col=label_col,
                               levels=[v.strip() for v in levels.split(",") if v.strip()] if levels else None,
                               merge_levels=merge_levels, bins=bins)
        preds = {name: read_predictions_file(path, item_col=item_col) for name, path in models.items()}
        result = run(sets, preds, k=raters or None, n_draws=draws, rule=rule.value, ties=ties.value, seed=seed,
                     confidence=confidence, progress=True)
    out.emit(result)
