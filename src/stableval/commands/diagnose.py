"""``stableval diagnose``: which raters to trust and which responses are ambiguous."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands.common import (
    ClusterChoice,
    FileArg,
    GoldOpt,
    LengthColOpt,
    MethodSelection,
    Output,
    RaterInfoOpt,
    bad_input_exits,
    executor_options,
    input_options,
    method_options,
    output_options,
    read_rated_input,
)
from stableval.commands.output import Appended

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from stableval.data import InputOptions


class CsvTable(StrEnum):
    RATERS = "raters"
    RESPONSES = "responses"
    AMBIGUOUS = "ambiguous"
    JUDGES = "judges"


def register(app: typer.Typer) -> None:
    app.command()(diagnose)


@input_options("ratings")
@method_options("stableval", single=True, rater_model=True)
@output_options()
@executor_options()
def diagnose(
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    out: Output,
    cluster: ClusterChoice,
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
    gold: GoldOpt = None,
    difficulty: Annotated[bool | None, typer.Option(
        "--difficulty/--no-difficulty",
        help="Each response's GLAD difficulty 1/β (Whitehill et al. 2009) beside its ambiguity, and the hardest "
             "responses. Default: shown when the method is glad; --difficulty also fits GLAD beside another "
             "method.")] = None,
    rater_info: RaterInfoOpt = None,
    length_col: LengthColOpt = None,
    judge_bootstrap: Annotated[int, typer.Option(
        "--judge-bootstrap", min=0, rich_help_panel="Raters",
        help="Item-bootstrap replicates for the LLM judges' intervals (0 = none).")] = 1000,
    item_text: Annotated[str | None, typer.Option(
        "--item-text", show_default=False, rich_help_panel="Output",
        help="Show each ambiguous response with its item's text: a column of FILE (e.g. prompt), or a file of "
             "item texts (columns item, text).")] = None,
) -> None:
    """Rater and item diagnostics from the fitted confusion matrices and posteriors.

    Per rater: accuracy (class-balanced and prior-weighted), leniency, strictness, over-/under-rating, spammer score.

    Flags raters at or below chance and near-uniform ones; the confusion matrices are in the JSON output.

    Per response: posterior, predicted level, confidence, ambiguity and entropy (nats); ambiguous ones are listed
    (with their item text: --item-text). Key findings: the mean ambiguity and the fragile majorities (responses
    whose majority changes when one rater is removed).

    With rater kinds (--rater-info or a rater_kind column), each LLM judge against the human consensus: agreement,
    leniency, self-preference, length bias (--length-col) and position bias (pairwise votes).
    """
    from stableval.evaluate.diagnostics import diagnose as run_diagnose

    if cluster.dask:
        _check_dask_diagnose(cluster, methods, difficulty, rater_info, length_col, csv_table)
    with bad_input_exits(), cluster.session() as dask:
        loaded, info, lengths = read_rated_input(file, inputs, rater_info, length_col, dask)
        table = loaded.table
        result = run_diagnose(table, methods.chosen()[0].estimator, ambiguity_threshold=ambiguity_threshold,
                              spammer_threshold=spammer_threshold, difficulty=difficulty)
        if item_text is not None:
            from stableval.data.item_text import read_item_text

            result = result.with_item_text(read_item_text(item_text, file, columns=inputs.columns,
                                                          format=inputs.format))
        emitted: Any = Appended(result, render_options={"top": top})
        if gold is not None:
            emitted = _with_accuracy(emitted, table, result, gold)
        judges = _judges(table, info, loaded.votes, lengths, methods, judge_bootstrap, length_col)
        if isinstance(judges, str):  # skipped, and why
            result = replace(result, dataset={**result.dataset, "notes": [*result.dataset["notes"], judges]})
            emitted = replace(emitted, result=result)
            judges = None
        if judges is not None:
            emitted = Appended(emitted.result, json={**emitted.json, "llm_judges": judges.to_dict()},
                               render_more=_then(emitted.render_more, judges.render),
                               render_options=emitted.render_options)
    if csv_table is CsvTable.JUDGES:
        if judges is None:
            raise typer.BadParameter("the judges table needs rater kinds with LLM judges and human raters to "
                                     "measure them against (--rater-info FILE or a rater_kind column)",
                                     param_hint="--csv-table")
        out.emit(emitted, frame=judges.to_frame())
        return
    out.emit(emitted, frame=result.to_frame(csv_table.value))


def _check_dask_diagnose(cluster: ClusterChoice, methods: MethodSelection, difficulty: bool | None,
                         rater_info: Any, length_col: str | None, csv_table: CsvTable) -> None:
    """Refuse what ``diagnose --executor dask`` does not do (usage errors, exit 2)."""
    cluster.check_methods(methods.names)
    if difficulty:
        cluster.refuse("--difficulty", "GLAD is fitted in memory only")
    if rater_info is not None or length_col is not None or csv_table is CsvTable.JUDGES:
        cluster.refuse("--rater-info/--length-col/--csv-table judges", "the LLM-judge diagnostics run in memory "
                                                                      "only")


def _judges(table: Any, info: Any, votes: Any, lengths: Any, methods: MethodSelection, bootstrap: int,
            length_col: str | None) -> Any:
    """The LLM judges against the human consensus, when the raters' kinds are known and some are LLMs; a note
    (a string) instead when every rater is an LLM judge, as in LLM-as-judge exports: no consensus to measure the
    judges against, so they are diagnosed as raters only."""
    from stableval.errors import InputError
    from stableval.evaluate.judges import judge_diagnostics

    if info is None or not info.counts()["llm"]:
        if length_col is not None:
            raise InputError("--length-col is for the LLM judges' length bias, but no rater is an LLM judge",
                             file=table.source, allowed="raters of kind llm (--rater-info FILE or a rater_kind "
                                                        "column), or no --length-col")
        return None
    if not info.counts()["human"]:
        return ("no human raters: the LLM judge statistics, measured against the human consensus, are skipped; "
                "the judges are diagnosed as raters only")
    return judge_diagnostics(table, info, methods.chosen()[0], votes=votes, lengths=lengths, bootstrap=bootstrap)


def _then(first: Any, second: Any) -> Any:
    """Print ``first`` (if any), then ``second``."""
    def both(console: Any) -> None:
        if first is not None:
            first(console)
        second(console)

    return both


def _with_accuracy(emitted: Appended, table: Any, result: Any, path: Any) -> Appended:
    """The predicted levels' accuracy against gold labels, after the diagnostics."""
    from stableval.datasets import gold_accuracy, read_gold

    labels = read_gold(path, default_agent=str(table.agents[0]) if table.n_agents == 1 else None)
    posteriors = result.responses[[f"p_{level}" for level in result.levels]].to_numpy(float)
    accuracy = gold_accuracy(table, {result.method: posteriors}, labels)
    overall = accuracy[accuracy["agent"] == "(all)"].iloc[0]
    notes = list(accuracy.attrs.get("notes", []))

    def render(console: Console) -> None:
        console.print(f"Accuracy of the predicted levels against gold: {overall['accuracy']:.4f} on "
                      f"{int(overall['gold_responses']):,} responses with gold (expected accuracy "
                      f"{overall['expected_accuracy']:.4f}).")
        for note in notes:
            console.print(f"  note: {note}")

    return Appended(emitted.result, json={"gold_accuracy": accuracy.to_dict("records"), "gold_notes": notes},
                    render_more=render, render_options=emitted.render_options)
