"""``stableval score`` and ``stableval demo``: the leaderboard with every method side by side."""

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
    app.command()(score)
    app.command()(demo)


def score(
    file: FileArg,
    method: MethodOpt = "mv,ds,stableval",
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0,
                                           help="Bootstrap replicates for CIs (0 = none).")] = 1000,
    seed: SeedOpt = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    refit: Annotated[bool, typer.Option("--refit", help="Re-run the aggregation on every bootstrap replicate "
                                                        "(slower; includes rater-model uncertainty).")] = False,
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
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold labels (item[,agent],gold), e.g. a truth.csv: "
                                              "also report each method's accuracy against them.",
                                              rich_help_panel="Input")] = None,
) -> None:
    """Score every agent under MV, Dawid–Skene and STABLEVAL, with bootstrap CIs and rank intervals."""
    from stableval.errors import StableValError
    from stableval.evaluate import MethodOptions, score_agents

    methods = parse_methods(method)
    try:
        table = read_input(file, levels=levels, credit=credit, duplicates=duplicates, agent=default_agent,
                           pairwise=pairwise, input_format=input_format, item_col=item_col, agent_col=agent_col,
                           rater_col=rater_col, label_col=label_col, agent_a_col=agent_a_col,
                           agent_b_col=agent_b_col, winner_col=winner_col, criterion_col=criterion_col)
        options = MethodOptions(ties=ties.value, seed=seed, alpha_mu=alpha_mu, alpha_pi=alpha_pi, epsilon=epsilon,
                                max_iter=max_iter, tol=tol)
        result = score_agents(table, methods, bootstrap=bootstrap, seed=seed, confidence=confidence, refit=refit,
                              options=options, progress=True)
        accuracy = _gold_accuracy(table, result, gold) if gold is not None else None
    except StableValError as error:
        raise fail(str(error)) from None
    _emit(result, output_format, output, command=["stableval", *sys.argv[1:]], accuracy=accuracy)


def _gold_accuracy(table: Any, result: Any, path: Path) -> Any:
    from stableval.datasets import gold_accuracy, read_gold

    labels = read_gold(path, default_agent=str(table.agents[0]) if table.n_agents == 1 else None)
    return gold_accuracy(table, result.posteriors, labels)


def demo(
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0, help="Bootstrap replicates.")] = 1000,
    output_format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or csv.")
                             ] = OutputFormat.TABLE,
) -> None:
    """Score the bundled MT-Bench expert votes (turn 1, CC BY 4.0): the whole pipeline in one command."""
    from stableval.data import example_path

    path = example_path("mt_bench")
    if output_format is OutputFormat.TABLE:
        typer.echo(f"Bundled example: {path.name} — 1,689 MT-Bench turn-1 pairwise votes by 65 expert and author "
                   "judges\n(Zheng et al. 2023, CC BY 4.0). One judge voted twice on the same pair, so both votes "
                   "are kept.\nSame as: stableval score "
                   f"{path} --duplicates keep\n")
    score(file=path, duplicates=Duplicates.KEEP, bootstrap=bootstrap, output_format=output_format,
          method="mv,ds,stableval", levels=None, credit=None, seed=0, confidence=0.95, refit=False,
          ties=Ties.SPLIT, alpha_mu=1.01, alpha_pi=1.01, epsilon=0.1, max_iter=500, tol=1e-8, output=None,
          item_col=None, agent_col=None, rater_col=None, label_col=None, default_agent=None, agent_a_col=None,
          agent_b_col=None, winner_col=None, criterion_col=None, pairwise=None, input_format=None)


# ------------------------------------------------------------------ output
def _emit(result: Any, output_format: OutputFormat, output: Path | None, *, command: list[str],
          accuracy: Any = None) -> None:
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(command), "version": __version__, **result.to_dict()}
        if accuracy is not None:
            payload["gold_accuracy"] = json.loads(accuracy.to_json(orient="records"))
            payload["gold_notes"] = list(accuracy.attrs.get("notes", []))
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.scores.to_csv(index=False)
    else:
        text = _render_table(result, to_file=output is not None)
        if accuracy is not None:
            text += _render_accuracy(accuracy)
    write_output(text, output)


def _render_accuracy(accuracy: Any) -> str:
    from stableval.evaluate.credit import METHOD_LABELS

    overall = accuracy[accuracy["agent"] == "(all)"]
    lines = ["Accuracy against gold (argmax level; ties split):"]
    for row in overall.itertuples(index=False):
        lines.append(f"  {METHOD_LABELS.get(row.method, row.method)}: {row.accuracy:.4f} on {row.gold_responses:,} "
                     f"responses with gold (expected accuracy {row.expected_accuracy:.4f})")
    lines += [f"  note: {note}" for note in accuracy.attrs.get("notes", [])]
    return "\n".join(lines) + "\n"


def _render_table(result: Any, *, to_file: bool) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from stableval.evaluate.credit import METHOD_LABELS

    buffer = io.StringIO()
    terminal = not to_file and sys.stdout.isatty()
    width = shutil.get_terminal_size((140, 40)).columns if terminal else 140
    console = Console(file=buffer, force_terminal=terminal, width=width, highlight=False)
    data = result.dataset
    credit = ", ".join(f"{c:g}" for c in data["credit"])
    console.print(
        f"[bold]{data['source']}[/]: {data['judgments']:,} judgments of {data['responses']:,} responses "
        f"({data['items']:,} items × {data['agents']} agents) by {data['raters']:,} raters; "
        f"{data['mean_judgments_per_response']:.2f} judgments per response; levels "
        f"{' < '.join(data['levels'])} (credit {credit})"
    )
    for note in data["notes"]:
        console.print(f"  note: {note}")
    settings = result.settings
    board = result.leaderboard()
    confidence = round(settings["confidence"] * 100)
    table = Table(box=box.SIMPLE_HEAVY, title="Leaderboard (best first)", title_justify="left", show_edge=False)
    display = result.display_frame()
    for k, column in enumerate(display.columns):
        table.add_column("rank" if column.endswith(" rank") else column, justify="left" if k == 0 else "right",
                         style="bold" if k == 0 else None)
    for row in display.itertuples(index=False):
        table.add_row(*row)
    console.print(table)
    lines = []
    if settings["bootstrap"]:
        how = "refitting every method per replicate" if settings["refit"] else "over each agent's responses"
        lines.append(f"{confidence}% percentile bootstrap intervals {how} (B={settings['bootstrap']:,}, "
                     f"seed {settings['seed']}); rank intervals in parentheses.")
        main = "stableval" if "stableval" in result.methods else result.methods[0]
        if len(board) >= 2:
            first, second = str(board["agent"].iloc[0]), str(board["agent"].iloc[1])
            p = result.win_probability[main].loc[first, second]
            lines.append(f"P({first} scores above {second}) = {p:.2f} under {METHOD_LABELS[main]}.")
    for method, fit in result.fits.items():
        state = "converged" if fit["converged"] else "[bold red]did NOT converge[/] (raise --max-iter)"
        lines.append(f"{METHOD_LABELS[method]}: EM {state} in {fit['n_iter']} iterations, "
                     f"log-likelihood {fit['log_likelihood']:.2f}.")
    if "stableval" in result.methods:
        lines.append(f"STABLEVAL priors: alpha_mu={settings['alpha_mu']:g}, alpha_pi={settings['alpha_pi']:g}; "
                     f"MV ties: {settings['ties']}.")
    for line in lines:
        console.print(line)
    return buffer.getvalue()


