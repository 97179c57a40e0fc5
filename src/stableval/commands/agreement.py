"""``stableval agreement``: how much the raters agree, response by response."""

from __future__ import annotations

import io
import json
import shutil
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer

from stableval._version import __version__
from stableval.commands.common import (
    AgentACol,
    AgentBCol,
    AgentCol,
    AgentOpt,
    CreditOpt,
    CriterionCol,
    Duplicates,
    DuplicatesOpt,
    FileArg,
    FormatOpt,
    InputFormatOpt,
    ItemCol,
    LabelCol,
    LevelsOpt,
    OutputFormat,
    OutputOpt,
    PairwiseOpt,
    RaterCol,
    SeedOpt,
    WinnerCol,
    fail,
    read_input,
    write_output,
)

QUICK_BOOTSTRAP = 200

LABELS = {
    "unanimous_agreement": "Unanimous agreement",
    "pairwise_agreement": "Pairwise agreement",
    "krippendorff_alpha_nominal": "Krippendorff's alpha (nominal)",
    "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)",
    "krippendorff_alpha_interval": "Krippendorff's alpha (interval)",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac1": "Gwet's AC1",
    "cohen_kappa_mean": "Cohen's kappa, mean over rater pairs",
}


class CohenWeights(StrEnum):
    NONE = "none"
    LINEAR = "linear"
    QUADRATIC = "quadratic"


def register(app: typer.Typer) -> None:
    app.command()(agreement)


def agreement(
    file: FileArg,
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0,
                                           help="Bootstrap replicates over responses for the 95% CIs (0 = none).")
                         ] = 1000,
    quick: Annotated[bool, typer.Option("--quick", help=f"Fewer bootstrap replicates (B={QUICK_BOOTSTRAP}) "
                                                        "for a fast first look.")] = False,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    min_shared: Annotated[int, typer.Option("--min-shared", min=1,
                                            help="Cohen's kappa only for rater pairs that judged at least this "
                                                 "many responses in common.")] = 20,
    cohen_weights: Annotated[CohenWeights, typer.Option(
        "--cohen-weights", help="Weights of the Cohen's kappa averaged over pairs (the levels are ordered, so "
                                "quadratic by default); every pair's unweighted, linear and quadratic kappa "
                                "are in the JSON/CSV output.")] = CohenWeights.QUADRATIC,
    pairs: Annotated[int, typer.Option("--pairs", min=0, help="Rater pairs to list in the table output "
                                                              "(most shared responses first).")] = 10,
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
    item_col: ItemCol = None,
    agent_col: AgentCol = None,
    rater_col: RaterCol = None,
    label_col: LabelCol = None,
    default_agent: AgentOpt = None,
    agent_a_col: AgentACol = None,
    agent_b_col: AgentBCol = None,
    winner_col: WinnerCol = None,
    criterion_col: CriterionCol = None,
    pairwise: PairwiseOpt = None,
    input_format: InputFormatOpt = None,
) -> None:
    """Inter-rater agreement per response: unanimous and pairwise agreement, Krippendorff's alpha (nominal,
    ordinal, interval), Fleiss' kappa, Gwet's AC1 and Cohen's kappa per rater pair, with bootstrap CIs.

    The unit is the response (item, agent); --format csv gives the statistics, --format json also every pair.
    """
    from stableval.errors import StableValError
    from stableval.evaluate.agreement import agreement as compute

    replicates = QUICK_BOOTSTRAP if quick and bootstrap > QUICK_BOOTSTRAP else bootstrap
    try:
        table = read_input(file, levels=levels, credit=credit, duplicates=duplicates, agent=default_agent,
                           pairwise=pairwise, input_format=input_format, item_col=item_col, agent_col=agent_col,
                           rater_col=rater_col, label_col=label_col, agent_a_col=agent_a_col,
                           agent_b_col=agent_b_col, winner_col=winner_col, criterion_col=criterion_col)
        result = compute(table, bootstrap=replicates, seed=seed, confidence=confidence, min_shared=min_shared,
                         cohen_weights=cohen_weights.value, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(["stableval", *sys.argv[1:]]), "version": __version__, **result.to_dict()}
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.statistics.to_csv(index=False)
    else:
        text = _render(result, pairs, to_file=output is not None)
    write_output(text, output)


def _number(value: float, digits: int = 3) -> str:
    return "—" if value != value else f"{value:.{digits}f}"


def _render(result: Any, n_pairs: int, *, to_file: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    terminal = not to_file and sys.stdout.isatty()
    width = shutil.get_terminal_size((120, 40)).columns if terminal else 120
    console = Console(file=buffer, force_terminal=terminal, width=width, highlight=False)
    data = result.dataset
    console.print(
        f"[bold]{data['source']}[/]: {data['judgments']:,} judgments of {data['responses']:,} responses "
        f"({data['items']:,} items × {data['agents']} agents) by {data['raters']:,} raters; "
        f"{data['mean_judgments_per_response']:.2f} judgments per response "
        f"({data['min_judgments_per_response']}–{data['max_judgments_per_response']}); "
        f"{data['responses_with_2_or_more']:,} responses with 2 or more; levels {' < '.join(data['levels'])}"
    )
    settings = result.settings
    ci = f"{round(settings['confidence'] * 100)}% CI" if settings["bootstrap"] else "CI"
    stats = Table(box=box.SIMPLE_HEAVY, title="Agreement", title_justify="left", show_edge=False)
    for name, justify in (("Statistic", "left"), ("Value", "right"), (ci, "right"), ("Units", "right"),
                          ("Note", "left")):
        stats.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in result.statistics.itertuples(index=False):
        interval = "" if row.ci_low != row.ci_low else f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
        unit = "pairs" if row.statistic == "cohen_kappa_mean" else "responses"
        stats.add_row(LABELS.get(row.statistic, row.statistic), _number(row.value), interval,
                      f"{row.units:,} {unit}", row.note)
    console.print(stats)
    if n_pairs and len(result.pairs):
        shown = result.pairs.head(n_pairs)
        weights = settings["cohen_weights"]
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title=f"Cohen's kappa per rater pair ({len(shown)} of {len(result.pairs):,}, most shared "
                            "responses first)")
        for name in ("Rater A", "Rater B", "Shared", "Agreement", "kappa", "linear", "quadratic",
                     f"{ci} ({weights})"):
            table.add_column(name, justify="left" if name.startswith("Rater") else "right")
        for row in shown.itertuples(index=False):
            interval = "" if row.ci_low != row.ci_low else f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
            table.add_row(str(row.rater_a), str(row.rater_b), f"{row.shared:,}", _number(row.agreement),
                          _number(row.kappa), _number(row.kappa_linear), _number(row.kappa_quadratic), interval)
        console.print(table)
    if settings["bootstrap"]:
        console.print(f"Percentile bootstrap over responses (B={settings['bootstrap']:,}, seed {settings['seed']}).")
    for note in result.notes:
        console.print(f"note: {note}")
    return buffer.getvalue()


__all__ = ["agreement", "register"]
