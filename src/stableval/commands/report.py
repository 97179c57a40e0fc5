"""``stableval report`` (one self-contained HTML file) and ``stableval plot`` (one figure)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands.common import (
    AgentCol,
    AgentOpt,
    CreditOpt,
    Duplicates,
    DuplicatesOpt,
    FileArg,
    InputFormatOpt,
    ItemCol,
    LabelCol,
    LevelsOpt,
    PairwiseOpt,
    RaterCol,
    SeedOpt,
    fail,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

PLOT_KINDS = ("forest", "win-probability", "stability", "raters", "confusion", "ratings", "win-rate")


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(plot)


def _read_options(levels: str | None, credit: str | None, item_col: str | None, agent_col: str | None,
                  rater_col: str | None, label_col: str | None, default_agent: str | None, pairwise: bool | None,
                  input_format: str | None) -> dict[str, Any]:
    columns = {role: name for role, name in (("item", item_col), ("agent", agent_col), ("rater", rater_col),
                                             ("label", label_col)) if name}
    return {"levels": levels, "credit": credit, "columns": columns or None, "default_agent": default_agent,
            "pairwise": pairwise, "format": input_format}


def report(
    file: FileArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    quick: Annotated[bool, typer.Option("--quick", help="Fewer bootstrap draws (200) for a fast first look.")
                     ] = False,
    bootstrap: Annotated[int | None, typer.Option("--bootstrap", "-B", min=0, help="Bootstrap replicates "
                                                  "(default 1000, or 200 with --quick).")] = None,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    item_col: ItemCol = None,
    agent_col: AgentCol = None,
    rater_col: RaterCol = None,
    label_col: LabelCol = None,
    default_agent: AgentOpt = None,
    pairwise: PairwiseOpt = None,
    input_format: InputFormatOpt = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Worker processes for the stability analysis "
                                      "(0 = one per core).")] = 1,
    qc_rater: Annotated[str | None, typer.Option("--qc-rater", help="Add reliability against QC: the QC rater "
                                                 "id(s), comma-separated.", rich_help_panel="Quality control")] = None,
    qc_file: Annotated[Path | None, typer.Option("--qc-file", help="Add reliability against QC labels from a file "
                                                 "(item[, agent], label).", rich_help_panel="Quality control")] = None,
    qc_consensus: Annotated[bool, typer.Option("--qc-consensus", help="Add reliability against the consensus of the "
                                               "other raters.", rich_help_panel="Quality control")] = False,
) -> None:
    """Write one self-contained HTML report (inline figures, printable) of every analysis of FILE."""
    from stableval.errors import StableValError
    from stableval.report import build_report

    try:
        import os

        if sum(x is not None and x is not False for x in (qc_rater, qc_file, qc_consensus or None)) > 1:
            raise typer.BadParameter("give one of --qc-rater, --qc-file, --qc-consensus", param_hint="--qc-*")
        qc = {"rater": [r.strip() for r in qc_rater.split(",") if r.strip()] if qc_rater else None,
              "file": qc_file, "consensus": qc_consensus} if (qc_rater or qc_file or qc_consensus) else None
        html = build_report(file, quick=quick, seed=seed, bootstrap=bootstrap, duplicates=duplicates.value,
                            command="stableval " + " ".join(sys.argv[1:]), progress=True,
                            read_options=_read_options(levels, credit, item_col, agent_col, rater_col, label_col,
                                                       default_agent, pairwise, input_format),
                            options={"jobs": jobs or os.cpu_count() or 1, "qc": qc})
    except StableValError as error:
        raise fail(str(error)) from None
    output.write_text(html, encoding="utf-8")
    typer.echo(f"wrote {output} ({len(html) / 1024:.0f} KiB)", err=True)


def plot(
    kind: Annotated[str, typer.Argument(help=f"Figure: {', '.join(PLOT_KINDS)}.", show_default=False)],
    file: FileArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Image file: .png, .svg or .pdf.")] = Path("fig.png"),
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0, help="Bootstrap replicates.")] = 1000,
    seed: SeedOpt = 0,
    levels: LevelsOpt = None,
    credit: CreditOpt = None,
    duplicates: DuplicatesOpt = Duplicates.ERROR,
    item_col: ItemCol = None,
    agent_col: AgentCol = None,
    rater_col: RaterCol = None,
    label_col: LabelCol = None,
    default_agent: AgentOpt = None,
    pairwise: PairwiseOpt = None,
    input_format: InputFormatOpt = None,
) -> None:
    """Draw one figure of the report to an image file."""
    from stableval.errors import StableValError

    if kind not in PLOT_KINDS:
        raise typer.BadParameter(f"{kind!r}; allowed: {', '.join(PLOT_KINDS)}", param_hint="KIND")
    if output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise typer.BadParameter(f"{output.name!r}: use a .png, .svg or .pdf file name", param_hint="--output")
    options = _read_options(levels, credit, item_col, agent_col, rater_col, label_col, default_agent, pairwise,
                            input_format)
    try:
        fig = _make_figure(kind, file, bootstrap, seed, duplicates.value, options)
    except StableValError as error:
        raise fail(str(error)) from None
    fig.savefig(output, dpi=150, bbox_inches="tight")
    typer.echo(f"wrote {output}", err=True)


def _make_figure(kind: str, file: Path, bootstrap: int, seed: int, duplicates: str,
                 options: dict[str, Any]) -> Figure:
    from stableval.report import forest_plot, rating_plot, win_heatmap

    if kind in ("ratings", "win-rate"):
        from stableval.data import read_pairwise
        from stableval.evaluate.pairwise import pairwise_leaderboard

        votes = read_pairwise(file, columns=options["columns"], duplicates=duplicates, format=options["format"])
        board = pairwise_leaderboard(votes, bootstrap=bootstrap, seed=seed, progress=True)
        if kind == "ratings":
            return rating_plot(board)
        criterion = next(iter(board.win_rate))
        order = board.ratings[board.ratings["criterion"] == criterion]["agent"].tolist()
        return win_heatmap(board.win_rate[criterion].loc[order, order], f"Observed win rate — {criterion}")
    from stableval.data import read_any
    from stableval.evaluate import score_agents

    table = read_any(file, duplicates=duplicates, **options)
    if kind == "stability":
        from stableval.evaluate.stability import ranking_stability, stability_figure

        return stability_figure(ranking_stability(table, seed=seed, progress=True))
    if kind in ("raters", "confusion"):
        from stableval.evaluate.diagnostics import diagnose
        from stableval.report.figures import confusion_grid, rater_scatter

        diagnostics = diagnose(table)
        return rater_scatter(diagnostics) if kind == "raters" else confusion_grid(diagnostics)
    result = score_agents(table, bootstrap=bootstrap, seed=seed, progress=True)
    if kind == "forest":
        return forest_plot(result)
    method = "stableval"
    order = result.leaderboard()["agent"].tolist()
    return win_heatmap(result.win_probability[method].loc[order, order],
                       "P(row agent scores above column agent) — STABLEVAL")
