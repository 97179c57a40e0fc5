"""The ``stableval`` command.

    stableval score ratings.csv --levels incorrect,partial,correct
    stableval score votes.jsonl --method stableval --bootstrap 2000 --format json -o scores.json
    stableval demo

Exit codes: 0 success, 1 bad input (the message names file, row, column, value and what is allowed),
2 usage error (unknown option or option value).
"""

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

app = typer.Typer(
    name="stableval",
    help="Disagreement-aware, stable evaluation of AI systems from human and LLM-judge ratings.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


class Duplicates(StrEnum):
    ERROR = "error"
    FIRST = "first"
    LAST = "last"
    KEEP = "keep"


class Ties(StrEnum):
    SPLIT = "split"
    LOWEST = "lowest"
    HIGHEST = "highest"
    RANDOM = "random"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stableval {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """stableval: which model is better, how sure you can be, and which raters and items to trust."""


def _fail(message: str) -> typer.Exit:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code=1)


def _parse_methods(text: str) -> list[str]:
    from stableval.evaluate.credit import check_methods

    try:
        return check_methods(part for part in text.split(",") if part.strip())
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--method") from None


# ------------------------------------------------------------------ shared input options
FileArg = Annotated[Path, typer.Argument(help="Ratings file: CSV, TSV, JSONL or Parquet; one row per judgment "
                                              "(item, agent, rater, label) or per pairwise vote "
                                              "(item, agent_a, agent_b, rater, winner).",
                                         show_default=False)]
LevelsOpt = Annotated[str | None, typer.Option(
    "--levels", help="Ordered level names, worst first, e.g. incorrect,partial,correct. "
                     "Default: integer labels 0..K-1.", rich_help_panel="Input")]
CreditOpt = Annotated[str | None, typer.Option(
    "--credit", help="Credit per level, e.g. 0,0.5,1. Default: evenly spaced from 0 to 1.",
    rich_help_panel="Input")]
DuplicatesOpt = Annotated[Duplicates, typer.Option(
    "--duplicates", help="Same (item, agent, rater) judged twice: error, keep the first or last, or keep all "
                         "as independent repeated judgments.", rich_help_panel="Input")]
ItemCol = Annotated[str | None, typer.Option("--item-col", help="Column holding the item id.",
                                             rich_help_panel="Input")]
AgentCol = Annotated[str | None, typer.Option("--agent-col", help="Column holding the agent (system) name.",
                                              rich_help_panel="Input")]
RaterCol = Annotated[str | None, typer.Option("--rater-col", help="Column holding the rater id.",
                                              rich_help_panel="Input")]
LabelCol = Annotated[str | None, typer.Option("--label-col", help="Column holding the label.",
                                              rich_help_panel="Input")]
AgentOpt = Annotated[str | None, typer.Option(
    "--default-agent", help="Agent name for every row when the file has no agent column.",
    rich_help_panel="Input")]
AgentACol = Annotated[str | None, typer.Option("--agent-a-col", help="Pairwise votes: column of the first agent.",
                                               rich_help_panel="Input")]
AgentBCol = Annotated[str | None, typer.Option("--agent-b-col", help="Pairwise votes: column of the second agent.",
                                               rich_help_panel="Input")]
WinnerCol = Annotated[str | None, typer.Option("--winner-col", help="Pairwise votes: column of the winner "
                                               "(a, b or tie).", rich_help_panel="Input")]
CriterionCol = Annotated[str | None, typer.Option("--criterion-col", help="Pairwise votes: column of the "
                                                  "criterion, if any.", rich_help_panel="Input")]
PairwiseOpt = Annotated[bool | None, typer.Option(
    "--pairwise/--no-pairwise", help="Treat the file as pairwise votes (default: detected from the columns).",
    rich_help_panel="Input", show_default=False)]
InputFormatOpt = Annotated[str | None, typer.Option(
    "--input-format", help="csv, tsv, jsonl or parquet (default: from the file suffix).", rich_help_panel="Input")]


def _read(file: Path, *, levels: str | None, credit: str | None, duplicates: Duplicates,
          columns: dict[str, str | None], agent: str | None, pairwise: bool | None, input_format: str | None) -> Any:
    from stableval.data import read_any

    chosen = {role: name for role, name in columns.items() if name}
    return read_any(file, pairwise=pairwise, columns=chosen or None, levels=levels, credit=credit,
                    duplicates=duplicates.value, format=input_format, default_agent=agent)


@app.command()
def score(
    file: FileArg,
    method: Annotated[str, typer.Option("--method", "-m", help="Comma-separated methods: mv, ds, stableval.")
                      ] = "mv,ds,stableval",
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0,
                                           help="Bootstrap replicates for CIs (0 = none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (bootstrap, random tie-breaking).")] = 0,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    refit: Annotated[bool, typer.Option("--refit", help="Re-run the aggregation on every bootstrap replicate "
                                                        "(slower; includes rater-model uncertainty).")] = False,
    ties: Annotated[Ties, typer.Option("--ties", help="Majority-vote ties: split the credit, lowest, highest "
                                                      "or random level.", rich_help_panel="Methods")
                    ] = Ties.SPLIT,
    alpha_mu: Annotated[float, typer.Option("--alpha-mu", min=1.0, help="STABLEVAL Dirichlet prior on the class "
                                            "priors (1 = none).", rich_help_panel="Methods")] = 1.01,
    alpha_pi: Annotated[float, typer.Option("--alpha-pi", min=1.0, help="STABLEVAL Dirichlet prior on each "
                                            "confusion row (1 = none; larger for sparse raters).",
                                            rich_help_panel="Methods")] = 1.01,
    epsilon: Annotated[float, typer.Option("--epsilon", min=1e-6, max=0.999, help="STABLEVAL off-diagonal "
                                           "mass of the initial confusion matrices.", rich_help_panel="Methods")
                       ] = 0.1,
    max_iter: Annotated[int, typer.Option("--max-iter", min=1, help="Most EM iterations.",
                                          rich_help_panel="Methods")] = 500,
    tol: Annotated[float, typer.Option("--tol", min=0.0, help="EM stops when the objective improves by less "
                                       "than tol × |objective|.", rich_help_panel="Methods")] = 1e-8,
    output_format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table (readable), json or csv.",
                                                        rich_help_panel="Output")] = OutputFormat.TABLE,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.",
                                                rich_help_panel="Output")] = None,
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
    """Score every agent under MV, Dawid–Skene and STABLEVAL, with bootstrap CIs and rank intervals."""
    from stableval.errors import StableValError
    from stableval.evaluate import MethodOptions, score_agents

    methods = _parse_methods(method)
    try:
        columns = {"item": item_col, "agent": agent_col, "rater": rater_col, "label": label_col,
                   "agent_a": agent_a_col, "agent_b": agent_b_col, "winner": winner_col, "criterion": criterion_col}
        table = _read(file, levels=levels, credit=credit, duplicates=duplicates, columns=columns,
                      agent=default_agent, pairwise=pairwise, input_format=input_format)
        options = MethodOptions(ties=ties.value, seed=seed, alpha_mu=alpha_mu, alpha_pi=alpha_pi, epsilon=epsilon,
                                max_iter=max_iter, tol=tol)
        result = score_agents(table, methods, bootstrap=bootstrap, seed=seed, confidence=confidence, refit=refit,
                              options=options, progress=True)
    except StableValError as error:
        raise _fail(str(error)) from None
    _emit(result, output_format, output, command=["stableval", *sys.argv[1:]])


@app.command()
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
def _emit(result: Any, output_format: OutputFormat, output: Path | None, *, command: list[str]) -> None:
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(command), "version": __version__, **result.to_dict()}
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.scores.to_csv(index=False)
    else:
        text = _render_table(result, to_file=output is not None)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def _interval(low: float, high: float, digits: int = 3) -> str:
    if low != low or high != high:  # NaN: no bootstrap
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


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
    table = Table(box=box.SIMPLE_HEAVY, title="Leaderboard (best first)", title_justify="left", show_edge=False)
    table.add_column("Agent", style="bold")
    table.add_column("Responses", justify="right")
    confidence = round(settings["confidence"] * 100)
    ci = f" [{confidence}% CI]" if settings["bootstrap"] else ""
    for method in result.methods:
        label = METHOD_LABELS[method]
        table.add_column(f"{label}{ci}", justify="right")
        table.add_column("rank", justify="right")
    for row in board.itertuples(index=False):
        cells = [str(row.agent), f"{row.responses:,}"]
        for method in result.methods:
            interval = _interval(getattr(row, f"{method}_ci_low"), getattr(row, f"{method}_ci_high"))
            cells.append(f"{getattr(row, f'{method}_score'):.3f} {interval}".strip())
            rank, low, high = (int(getattr(row, f"{method}_{k}")) for k in ("rank", "rank_low", "rank_high"))
            cells.append(f"{rank}" + (f" ({low}–{high})" if settings["bootstrap"] and low != high else ""))
        table.add_row(*cells)
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


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
