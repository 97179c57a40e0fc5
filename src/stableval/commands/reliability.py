"""``stableval reliability``: each evaluator's accuracy against quality control (QC)."""

from __future__ import annotations

import io
import json
import shutil
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval._version import __version__
from stableval.commands.common import (
    AgentCol,
    AgentOpt,
    Duplicates,
    FormatOpt,
    InputFormatOpt,
    ItemCol,
    LabelCol,
    LevelsOpt,
    OutputFormat,
    OutputOpt,
    RaterCol,
    fail,
    write_output,
)


class QcMode(StrEnum):
    CONSENSUS = "consensus"


def register(app: typer.Typer) -> None:
    app.command()(reliability)


def reliability(
    file: Annotated[Path, typer.Argument(
        help="Judgments: CSV, TSV, JSONL or Parquet with item, rater, label, an optional agent and optional "
             "flag / skip columns (yes/no); or a .json file in NVIDIA's reliability-notebook format (QC embedded).",
        show_default=False)],
    qc_rater: Annotated[str | None, typer.Option(
        "--qc-rater", help="QC is this rater (comma-separate several QC ids; at most one QC judgment per item).",
        rich_help_panel="QC")] = None,
    qc_file: Annotated[Path | None, typer.Option(
        "--qc-file", help="QC (gold) file: item, label, and optionally agent, flag and skip; one row per item.",
        rich_help_panel="QC")] = None,
    qc: Annotated[QcMode | None, typer.Option(
        "--qc", help="consensus: QC is the strict majority of the other raters of the item (leave-one-out); items "
                     "without one are excluded and counted.", rich_help_panel="QC")] = None,
    consensus_min: Annotated[int, typer.Option(
        "--consensus-min", min=1, help="With --qc consensus: fewest other raters an item needs.",
        rich_help_panel="QC")] = 2,
    min_items: Annotated[int, typer.Option(
        "--min-items", min=0, help="Warn about evaluators with fewer applicable items than this.")] = 10,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the Wilson intervals.")] = 0.95,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Save the evaluators × metrics matrix (reliability %, flag mismatch %, total items; N in "
                       "each cell) as a PNG file.", rich_help_panel="Output")] = None,
    duplicates: Annotated[Duplicates, typer.Option(
        "--duplicates", help="Same (item, agent, rater) twice: error, or keep the first or last.",
        rich_help_panel="Input")] = Duplicates.ERROR,
    levels: LevelsOpt = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
    item_col: ItemCol = None,
    agent_col: AgentCol = None,
    rater_col: RaterCol = None,
    label_col: LabelCol = None,
    flag_col: Annotated[str | None, typer.Option("--flag-col", help="Column holding the flag (item not "
                                                 "ratable, e.g. NSFW): yes/no.", rich_help_panel="Input")] = None,
    skip_col: Annotated[str | None, typer.Option("--skip-col", help="Column holding the skip mark: yes/no.",
                                                 rich_help_panel="Input")] = None,
    default_agent: AgentOpt = None,
    input_format: InputFormatOpt = None,
) -> None:
    """Reliability of every evaluator against QC: matches with QC over the items neither flagged nor skipped,
    flag-mismatch %, total items, a Wilson interval; pooled overall and the share of items QC flagged.

    Give the QC as --qc-rater ID, --qc-file FILE or --qc consensus; a notebook-format .json carries its own QC.
    """
    from stableval.errors import StableValError
    from stableval.evaluate.reliability import plot_reliability, read_gold, read_judgments, reliability_vs_qc

    given = [name for name, value in (("--qc-rater", qc_rater), ("--qc-file", qc_file), ("--qc", qc)) if value]
    if len(given) > 1:
        raise typer.BadParameter(f"give one QC source, not {' and '.join(given)}", param_hint="--qc")
    if duplicates is Duplicates.KEEP:
        raise typer.BadParameter("'keep' does not apply here: an evaluator has one judgment per item",
                                 param_hint="--duplicates")
    columns = {role: name for role, name in (("item", item_col), ("agent", agent_col), ("rater", rater_col),
                                             ("label", label_col), ("flag", flag_col), ("skip", skip_col)) if name}
    try:
        judgments = read_judgments(file, columns=columns or None, levels=levels, format=input_format,
                                   default_agent=default_agent)
        if not given and not judgments["qc"].any():
            raise typer.BadParameter("say where QC comes from: --qc-rater ID, --qc-file FILE or --qc consensus",
                                     param_hint="--qc")
        gold = None
        if qc_file is not None:
            gold_columns = {role: name for role, name in columns.items() if role != "rater"}
            gold = read_gold(qc_file, columns=gold_columns or None, levels=levels)
        ids = [part.strip() for part in qc_rater.split(",") if part.strip()] if qc_rater else None
        result = reliability_vs_qc(judgments, qc_rater=ids, gold=gold, consensus=qc is QcMode.CONSENSUS,
                                   consensus_min=consensus_min, min_items=min_items, confidence=confidence,
                                   duplicates=duplicates.value, source=str(file))
    except StableValError as error:
        raise fail(str(error)) from None
    if plot is not None:
        plot_reliability(result, plot)
        typer.echo(f"wrote {plot}", err=True)
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(["stableval", *sys.argv[1:]]), "version": __version__, **result.to_dict()}
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.table().to_csv(index=False)
    else:
        text = _render(result, to_file=output is not None)
    write_output(text, output)


def _pct(value: float, digits: int = 1) -> str:
    return "N/A" if value != value else f"{100 * value:.{digits}f}%"


def _render(result: Any, *, to_file: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    terminal = not to_file and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 40)).columns if terminal else 120
    console = Console(file=buffer, force_terminal=terminal, width=width, highlight=False)
    overall, settings = result.overall, result.settings
    qc = {"rater": f"rater(s) {', '.join(settings['qc_rater'] or [])}", "gold": "the QC file",
          "consensus": f"consensus of the other raters (>= {settings['consensus_min']})",
          "embedded": "QC judgments in the input"}[settings["qc"]]
    console.print(f"[bold]{settings['source']}[/]: {overall['evaluators']} evaluators, {overall['total_items']:,} "
                  f"evaluator judgments with QC; QC = {qc}")
    confidence = round(settings["confidence"] * 100)
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Reliability against QC", title_justify="left")
    for name in ("Evaluator", "Reliability", "Correct / applicable", f"{confidence}% CI (Wilson)",
                 "Flag mismatch", "Total items", "Skipped", "Excluded"):
        table.add_column(name, justify="left" if name == "Evaluator" else "right")
    for row in result.table().itertuples(index=False):
        name = str(row.evaluator) + (" *" if row.few_items else "")
        style = "bold" if row.evaluator == "Overall" else None
        interval = "" if row.ci_low != row.ci_low else f"[{_pct(row.ci_low)}, {_pct(row.ci_high)}]"
        table.add_row(name, _pct(row.reliability, 2), f"{int(row.correct)}/{int(row.applicable)}", interval,
                      "N/A" if row.flag_mismatch_pct != row.flag_mismatch_pct else f"{row.flag_mismatch_pct:.1f}%",
                      f"{int(row.total_items):,}", f"{int(row.skipped):,}", f"{int(row.excluded):,}", style=style)
    console.print(table)
    flagged = overall["qc_flagged_pct"]
    console.print(f"Overall prompts flagged as non-ratable by QC: "
                  f"{'N/A' if flagged != flagged else f'{flagged:.2f}%'} ({overall['qc_flagged']:,} of "
                  f"{overall['qc_items']:,})")
    console.print(f"Overall reliability across all evaluators: {_pct(overall['reliability'], 2)} "
                  f"({overall['correct']:,}/{overall['applicable']:,})")
    if result.evaluators["few_items"].any():
        console.print(f"* fewer than {settings['min_items']} applicable items: read that reliability with care.")
    for note in result.notes:
        console.print(f"note: {note}")
    return buffer.getvalue()
