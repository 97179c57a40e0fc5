"""``stableval diagnose``: which raters to trust and which responses are ambiguous."""

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
    AgentACol,
    AgentBCol,
    AgentCol,
    AgentOpt,
    AlphaMuOpt,
    AlphaPiOpt,
    CreditOpt,
    CriterionCol,
    Duplicates,
    DuplicatesOpt,
    EpsilonOpt,
    FileArg,
    FormatOpt,
    InputFormatOpt,
    ItemCol,
    LabelCol,
    LevelsOpt,
    MaxIterOpt,
    OutputFormat,
    OutputOpt,
    PairwiseOpt,
    RaterCol,
    TolOpt,
    WinnerCol,
    fail,
    read_input,
    write_output,
)


class DiagnoseMethod(StrEnum):
    STABLEVAL = "stableval"
    DS = "ds"


class CsvTable(StrEnum):
    RATERS = "raters"
    RESPONSES = "responses"
    AMBIGUOUS = "ambiguous"


def register(app: typer.Typer) -> None:
    app.command()(diagnose)


def diagnose(
    file: FileArg,
    method: Annotated[DiagnoseMethod, typer.Option(
        "--method", "-m", help="Model whose rater confusion matrices are diagnosed: stableval or ds "
                               "(Dawid–Skene).")] = DiagnoseMethod.STABLEVAL,
    ambiguity_threshold: Annotated[float, typer.Option(
        "--ambiguity-threshold", min=0.0, max=0.999,
        help="List responses whose ambiguity (1 − largest posterior probability) is above this.")] = 0.3,
    spammer_threshold: Annotated[float, typer.Option(
        "--spammer-threshold", min=0.0, max=1.0,
        help="Flag raters whose spammer score (Raykar & Yu 2012; 0 = labels independent of the truth, 1 = "
             "perfect) is below this as near-uniform.")] = 0.05,
    top: Annotated[int, typer.Option("--top", "-n", min=0, help="Ambiguous responses shown in the table "
                                     "(JSON and CSV list them all).", rich_help_panel="Output")] = 20,
    csv_table: Annotated[CsvTable, typer.Option(
        "--csv-table", help="Which table --format csv writes: raters, responses (all, with posteriors) or "
                            "ambiguous.", rich_help_panel="Output")] = CsvTable.RATERS,
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    alpha_mu: AlphaMuOpt = 1.01,
    alpha_pi: AlphaPiOpt = 1.01,
    epsilon: EpsilonOpt = 0.1,
    max_iter: MaxIterOpt = 500,
    tol: TolOpt = 1e-8,
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
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold labels (item[,agent],gold), e.g. a truth.csv: "
                                              "also report the predicted levels' accuracy against them.",
                                              rich_help_panel="Input")] = None,
) -> None:
    """Rater and item diagnostics from the fitted confusion matrices and posteriors.

    Per rater: accuracy (class-balanced and prior-weighted), leniency, strictness, over-/under-rating, spammer score.

    Flags raters at or below chance and near-uniform ones; the confusion matrices are in the JSON output.

    Per response: posterior, predicted level, confidence, ambiguity and entropy (nats); ambiguous ones are listed.
    """
    from stableval.errors import StableValError
    from stableval.evaluate import MethodOptions
    from stableval.evaluate.diagnostics import diagnose as run_diagnose

    try:
        table = read_input(file, levels=levels, credit=credit, duplicates=duplicates, agent=default_agent,
                           pairwise=pairwise, input_format=input_format, item_col=item_col, agent_col=agent_col,
                           rater_col=rater_col, label_col=label_col, agent_a_col=agent_a_col,
                           agent_b_col=agent_b_col, winner_col=winner_col, criterion_col=criterion_col)
        options = MethodOptions(alpha_mu=alpha_mu, alpha_pi=alpha_pi, epsilon=epsilon, max_iter=max_iter, tol=tol)
        result = run_diagnose(table, method.value, ambiguity_threshold=ambiguity_threshold,
                              spammer_threshold=spammer_threshold, options=options)
        accuracy = None
        if gold is not None:
            from stableval.datasets import gold_accuracy, read_gold

            labels = read_gold(gold, default_agent=str(table.agents[0]) if table.n_agents == 1 else None)
            posteriors = result.responses[[f"p_{level}" for level in result.levels]].to_numpy(float)
            accuracy = gold_accuracy(table, {method.value: posteriors}, labels)
    except StableValError as error:
        raise fail(str(error)) from None
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(["stableval", *sys.argv[1:]]), "version": __version__, **result.to_dict()}
        if accuracy is not None:
            payload["gold_accuracy"] = json.loads(accuracy.to_json(orient="records"))
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        frame = {CsvTable.RATERS: result.raters, CsvTable.RESPONSES: result.responses,
                 CsvTable.AMBIGUOUS: result.ambiguous}[csv_table]
        text = frame.to_csv(index=False)
    else:
        text = _render(result, top=top, to_file=output is not None)
        if accuracy is not None:
            overall = accuracy[accuracy["agent"] == "(all)"].iloc[0]
            text += (f"Accuracy of the predicted levels against gold: {overall['accuracy']:.4f} on "
                     f"{int(overall['gold_responses']):,} responses with gold (expected accuracy "
                     f"{overall['expected_accuracy']:.4f}).\n")
    write_output(text, output)


def _render(result: Any, *, top: int, to_file: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    terminal = not to_file and sys.stdout.isatty()
    width = shutil.get_terminal_size((140, 40)).columns if terminal else 140
    console = Console(file=buffer, force_terminal=terminal, width=width, highlight=False)
    data, settings = result.dataset, result.settings
    console.print(f"[bold]{data['source']}[/]: {data['judgments']:,} judgments of {data['responses']:,} responses "
                  f"by {data['raters']:,} raters; levels {' < '.join(data['levels'])}")
    for note in data["notes"]:
        console.print(f"  note: {note}")
    fit = result.fit
    state = "converged" if fit["converged"] else "[bold red]did NOT converge[/] (raise --max-iter)"
    priors = ", ".join(f"{level} {p:.3f}" for level, p in zip(result.levels, result.priors, strict=True))
    console.print(f"{settings['method']}: EM {state} in {fit['n_iter']} iterations; estimated class priors: {priors}")

    raters = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                   title="Raters (best class-balanced accuracy first)")
    for name, justify in (("Rater", "left"), ("Ratings", "right"), ("Accuracy", "right"), ("Weighted acc.", "right"),
                          ("Leniency", "right"), ("Strictness", "right"), ("Over", "right"), ("Under", "right"),
                          ("Spammer", "right"), ("Flags", "left")):
        raters.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in result.raters.itertuples(index=False):
        flags = [text for flag, text in ((row.below_chance, "[red]at/below chance[/]"),
                                         (row.near_uniform, "[yellow]near-uniform[/]")) if flag]
        raters.add_row(str(row.rater), f"{row.ratings:,}", f"{row.accuracy:.3f}", f"{row.weighted_accuracy:.3f}",
                       f"{row.leniency:.3f}", f"{row.strictness:.3f}", f"{row.over_rating:.3f}",
                       f"{row.under_rating:.3f}", f"{row.spammer_score:.3f}", ", ".join(flags))
    console.print(raters)
    below = int(result.raters["below_chance"].sum())
    uniform = int(result.raters["near_uniform"].sum())
    console.print(f"Accuracy = mean over true levels of P(correct); weighted by the class priors in 'Weighted acc.'. "
                  f"Over/Under = P(label above/below the truth). {below} rater(s) at or below chance "
                  f"(accuracy <= 1/{len(result.levels)}), {uniform} near-uniform (spammer score < "
                  f"{settings['spammer_threshold']:g}).")

    total = len(result.responses)
    count = len(result.ambiguous)
    share = count / total if total else 0.0
    console.print(f"\n{count:,} of {total:,} responses ({share:.1%}) are ambiguous (ambiguity > "
                  f"{settings['ambiguity_threshold']:g}); mean entropy {result.responses['entropy'].mean():.3f} nats.")
    if count and top:
        shown = result.ambiguous.head(top)
        items = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                      title=f"Most ambiguous responses (top {len(shown)} of {count:,})")
        for name, justify in (("Item", "left"), ("Agent", "left"), ("Predicted", "left"), ("Confidence", "right"),
                              ("Ambiguity", "right"), ("Entropy", "right"), ("Judgments", "left")):
            items.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for row in shown.itertuples(index=False):
            items.add_row(str(row.item), str(row.agent), str(row.predicted), f"{row.confidence:.3f}",
                          f"{row.ambiguity:.3f}", f"{row.entropy:.3f}", str(row.details))
        console.print(items)
    return buffer.getvalue()
