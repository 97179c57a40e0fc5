"""``stableval stability``: how much the ranking of agents depends on which raters judged."""

from __future__ import annotations

import io
import json
import shutil
import sys
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
    MethodOpt,
    OutputFormat,
    OutputOpt,
    PairwiseOpt,
    RaterCol,
    SeedOpt,
    Ties,
    TiesOpt,
    TolOpt,
    WinnerCol,
    fail,
    parse_methods,
    read_input,
    write_output,
)


def register(app: typer.Typer) -> None:
    app.command()(stability)


def _parse_sizes(text: str) -> list[str]:
    from stableval.evaluate.stability import parse_size

    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise typer.BadParameter("no subset size given", param_hint="--sizes")
    for part in parts:
        try:
            parse_size(part)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--sizes") from None
    return parts


def stability(
    file: FileArg,
    method: MethodOpt = "mv,ds,stableval",
    sizes: Annotated[str, typer.Option(
        "--sizes", "-s", help="Comma-separated subset sizes: fractions of the raters (0.25 or 25%) and/or whole "
                              "rater counts (10).")] = "0.25,0.5,0.75",
    repetitions: Annotated[int, typer.Option("--repetitions", "-R", min=1,
                                             help="Random rater subsets drawn per size.")] = 50,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes for the repetitions (0 = one per CPU "
                                      "core). Results do not depend on it.")] = 1,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the interval for the mean tau-b.")] = 0.95,
    plot: Annotated[Path | None, typer.Option("--plot", help="Save a plot of tau-b against subset size per method "
                                              "(.png, .svg or .pdf).", rich_help_panel="Output")] = None,
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    ties: TiesOpt = Ties.SPLIT,
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
) -> None:
    """Ranking stability: Kendall tau-b between the all-rater ranking and rankings from random rater subsets.

    Every method is refit on each random subset of raters (drawn without replacement, seeded).

    Per method and subset size: mean tau-b with a 95% CI, per-agent rank SD and range, P(top agent changes).
    """
    from stableval.errors import StableValError
    from stableval.evaluate import MethodOptions
    from stableval.evaluate.stability import plot_stability, ranking_stability

    methods = parse_methods(method)
    size_list = _parse_sizes(sizes)
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise typer.BadParameter(f"{plot}: the plot file must end in .png, .svg or .pdf", param_hint="--plot")
    try:
        table = read_input(file, levels=levels, credit=credit, duplicates=duplicates, agent=default_agent,
                           pairwise=pairwise, input_format=input_format, item_col=item_col, agent_col=agent_col,
                           rater_col=rater_col, label_col=label_col, agent_a_col=agent_a_col,
                           agent_b_col=agent_b_col, winner_col=winner_col, criterion_col=criterion_col)
        options = MethodOptions(ties=ties.value, seed=seed, alpha_mu=alpha_mu, alpha_pi=alpha_pi, epsilon=epsilon,
                                max_iter=max_iter, tol=tol)
        try:
            result = ranking_stability(table, methods, sizes=size_list, repetitions=repetitions, seed=seed,
                                       jobs=jobs, confidence=confidence, options=options, progress=True)
        except ValueError as error:
            if isinstance(error, StableValError):
                raise
            raise typer.BadParameter(str(error), param_hint="--sizes") from None
    except StableValError as error:
        raise fail(str(error)) from None
    if plot is not None:
        plot_stability(result, plot)
        typer.echo(f"wrote {plot}", err=True)
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(["stableval", *sys.argv[1:]]), "version": __version__, **result.to_dict()}
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.summary.to_csv(index=False)
    else:
        text = _render(result, to_file=output is not None)
    write_output(text, output)


def _render(result: Any, *, to_file: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from stableval.evaluate.credit import METHOD_LABELS

    buffer = io.StringIO()
    terminal = not to_file and sys.stdout.isatty()
    width = shutil.get_terminal_size((140, 40)).columns if terminal else 140
    console = Console(file=buffer, force_terminal=terminal, width=width, highlight=False)
    data, settings = result.dataset, result.settings
    console.print(f"[bold]{data['source']}[/]: {data['judgments']:,} judgments of {data['responses']:,} responses "
                  f"({data['agents']} agents) by {data['raters']:,} raters")
    for note in data["notes"]:
        console.print(f"  note: {note}")
    level = round(settings["confidence"] * 100)
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title_justify="left",
                  title=f"Ranking stability: Kendall tau-b against all {data['raters']:,} raters "
                        f"({settings['repetitions']} subsets per size)")
    table.add_column("Subset")
    table.add_column("Measure")
    methods = result.methods
    for method in methods:
        table.add_column(METHOD_LABELS[method], justify="right")
    summary = result.summary.set_index(["raters", "method"])
    for size in settings["sizes"]:
        m = size["raters"]
        rows = {method: summary.loc[(m, method)] for method in methods}
        first = next(iter(rows.values()))
        label = f"{size['size']} ({m} raters)" if size["size"].endswith("%") else f"{m} raters"
        dropped = f"{first['responses_dropped_mean']:.1f} (max {int(first['responses_dropped_max'])})"

        def cells(render: Any, rows: dict[str, Any] = rows) -> list[str]:
            return [render(rows[method]) for method in methods]

        table.add_row(label, f"tau-b [{level}% CI]", *cells(_tau_cell))
        table.add_row("", "mean rank SD", *cells(lambda row: f"{row['mean_rank_sd']:.2f}"))
        table.add_row("", "mean rank range", *cells(lambda row: f"{row['mean_rank_range']:.2f}"))
        table.add_row("", "P(top agent changes)", *cells(lambda row: f"{row['p_top_change']:.2f}"))
        table.add_row("", "responses dropped", *([dropped] * len(methods)), end_section=True)
    console.print(table)
    console.print(f"tau-b: scipy's Kendall tau-b between agent scores from all raters and from the subset; "
                  f"{level}% Student-t interval for the mean over repetitions. Rank SD and range (max − min) are "
                  f"per agent over repetitions, averaged over agents. Seed {settings['seed']}.")
    undefined = result.summary[result.summary["tau_undefined"] > 0]
    for row in undefined.itertuples(index=False):
        console.print(f"[yellow]note:[/] {METHOD_LABELS[row.method]} at {row.raters} raters: tau-b undefined in "
                      f"{row.tau_undefined} of {row.repetitions} subsets (all scores tied or < 2 agents scored); "
                      f"left out of the mean.")
    missing = result.summary[result.summary["agents_missing"] > 0].drop_duplicates("raters")
    for row in missing.itertuples(index=False):
        console.print(f"[yellow]note:[/] at {row.raters} raters, {row.agents_missing} (subset, agent) cases had no "
                      f"response left; those agents are left out of tau-b and ranks in those subsets.")
    return buffer.getvalue()


def _tau_cell(row: Any) -> str:
    mean, low, high = row["tau_mean"], row["tau_ci_low"], row["tau_ci_high"]
    if mean != mean:
        return "undefined"
    if low != low:
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"
