"""``stableval reliability``: each evaluator's accuracy against quality control (QC)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stableval.commands.common import (
    ConfidenceOpt,
    Output,
    bad_input_exits,
    input_options,
    output_options,
    qc_options,
)
from stableval.commands.output import Appended, save_plot

if TYPE_CHECKING:  # pragma: no cover
    from stableval.data import InputOptions
    from stableval.report.options import QualityControl


def register(app: typer.Typer) -> None:
    app.command()(reliability)


@input_options("judgments")
@qc_options()
@output_options()
def reliability(
    file: Annotated[Path, typer.Argument(
        help="Judgments: CSV, TSV, JSONL or Parquet with item, rater, label, an optional agent and optional "
             "flag / skip columns (yes/no); or a .json file in NVIDIA's reliability-notebook format (QC embedded).",
        show_default=False)],
    inputs: InputOptions,
    qc: QualityControl | None,
    out: Output,
    consensus_min: Annotated[int, typer.Option(
        "--consensus-min", min=1, help="With --qc-consensus: fewest other raters an item needs.",
        rich_help_panel="Quality control")] = 2,
    min_items: Annotated[int, typer.Option(
        "--min-items", min=0, help="Warn about evaluators with fewer applicable items than this.")] = 10,
    confidence: ConfidenceOpt = 0.95,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Save the evaluators × metrics matrix (reliability %, flag mismatch %, total items; N in "
                       "each cell) as a PNG file.", rich_help_panel="Output")] = None,
    flag_reasons: Annotated[bool, typer.Option(
        "--flag-reasons", help="Also break the flags down by reason (PII, medical advice, NSFW, ...: a "
                               "flag_reason column, or the notebook JSON's flag_reason) per evaluator against QC.",
        rich_help_panel="Quality control")] = False,
) -> None:
    """Reliability of every evaluator against QC: matches with QC over the items neither flagged nor skipped,
    flag-mismatch %, total items, a Wilson interval; pooled overall and the share of items QC flagged.

    Give the QC as --qc-rater ID, --qc-file FILE or --qc-consensus; a notebook-format .json carries its own QC.
    """
    import dataclasses

    from stableval.datasets.gold import read_gold
    from stableval.datasets.judgments import read_judgments
    from stableval.evaluate.reliability import reliability_vs_qc
    from stableval.report.figures import check_figure_path, reliability_figure

    columns = dict(inputs.columns or {})
    with bad_input_exits():
        if plot is not None:
            check_figure_path(plot, option="plot")
        recoded = inputs.merge_levels is not None or inputs.bins is not None
        if recoded and file.suffix.lower() == ".json" and inputs.format is None:
            raise typer.BadParameter("a notebook-format .json carries its own labels; recode a table instead",
                                     param_hint="--merge-levels / --bins")
        if recoded and qc is not None and qc.file is not None:
            raise typer.BadParameter("the QC file's labels would not be recoded: give QC as --qc-rater or "
                                     "--qc-consensus, or recode the QC file's labels first",
                                     param_hint="--merge-levels / --bins")
        judgments = read_judgments(file, columns=columns or None, levels=inputs.levels, format=inputs.format,
                                   default_agent=inputs.default_agent, merge_levels=inputs.merge_levels,
                                   bins=inputs.bins)
        if qc is None and not judgments["qc"].any():
            raise typer.BadParameter("say where QC comes from: --qc-rater ID, --qc-file FILE or --qc-consensus",
                                     param_hint="--qc-consensus")
        gold = None
        if qc is not None and qc.file is not None:
            gold_columns = {role: name for role, name in columns.items() if role != "rater"}
            gold = read_gold(qc.file, columns=gold_columns or None, levels=inputs.levels, every_agent=True)
        ids = list(qc.raters) if qc is not None and qc.raters else None
        result = reliability_vs_qc(judgments, qc_rater=ids, gold=gold, consensus=qc is not None and qc.consensus,
                                   consensus_min=consensus_min, min_items=min_items, confidence=confidence,
                                   duplicates=inputs.duplicates, source=str(file))
    breakdown = None
    if flag_reasons:
        from stableval.evaluate.flag_reasons import flags_by_reason

        if qc is not None and (qc.file is not None or qc.consensus):
            raise typer.BadParameter("the flags by reason compare with QC's own flags: give QC as --qc-rater ID or "
                                     "use the notebook JSON's embedded QC", param_hint="--flag-reasons")
        breakdown = flags_by_reason(judgments, qc_rater=list(qc.raters) if qc is not None and qc.raters else None)
    recoding = judgments.attrs.get("recoding")
    if recoding is not None:
        result = dataclasses.replace(result, notes=(recoding["note"], *result.notes),
                                     settings={**result.settings, "recoding": recoding})
    if plot is not None:
        save_plot(reliability_figure(result), plot)
    if breakdown is None:
        out.emit(result)
        return
    out.emit(Appended(result, json=breakdown.to_dict() | {"notes": [*result.notes, *breakdown.notes]},
                      render_more=breakdown.render))
