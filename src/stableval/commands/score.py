"""``stableval score`` and ``stableval demo``: the leaderboard with every method side by side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.commands.common import (
    BootstrapOpt,
    ClusterChoice,
    Combine,
    CombineOpt,
    ConfidenceOpt,
    FileArg,
    GoldOpt,
    IntervalOpt,
    MethodSelection,
    Output,
    OutputFormat,
    RaterInfoOpt,
    RaterKinds,
    RatersOpt,
    SeedOpt,
    bad_input_exits,
    executor_options,
    input_options,
    method_options,
    output_options,
    read_table,
)
from stableval.commands.output import Appended

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from stableval.data import InputOptions



def register(app: typer.Typer) -> None:
    app.command()(score)
    app.command()(demo)


@input_options("ratings")
@method_options()
@output_options()
@executor_options()
def score(
    file: FileArg,
    inputs: InputOptions,
    methods: MethodSelection,
    out: Output,
    cluster: ClusterChoice,
    bootstrap: BootstrapOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    refit: Annotated[bool, typer.Option("--refit", help="Re-run the aggregation on every bootstrap replicate "
                                                        "(slower; includes rater-model uncertainty).")] = False,
    gold: GoldOpt = None,
    rater_info: RaterInfoOpt = None,
    raters: RatersOpt = RaterKinds.ALL,
    combine: CombineOpt = Combine.POOL,
    interval: IntervalOpt = None,
    rating_probability: Annotated[Path | None, typer.Option(
        "--rating-probability", help="With --combine ppi: a file (columns item, agent and probability, or plan's "
        "p_active) giving, for every answer people rated, the known probability it was chosen with; the PPI++ and "
        "people-only scores are then weighted by its inverse (active inference), unbiased under an unequal "
        "selection such as plan's active draw.", rich_help_panel="Raters", show_default=False)] = None,
) -> None:
    """Score every agent under MV, Dawid–Skene and STABLEVAL, with bootstrap CIs and rank intervals.

    --raters human or --raters llm scores from one kind of rater only (kinds from --rater-info or a rater_kind
    column); --combine ppi combines both kinds by prediction-powered inference.
    """
    from stableval.evaluate import score_agents

    if combine is Combine.PPI:
        _check_ppi(cluster, refit, raters, gold)
        with bad_input_exits():
            combined = ppi_result(file, inputs, methods, rater_info, bootstrap=bootstrap, seed=seed,
                                  confidence=confidence, interval=interval, probability=rating_probability)
        out.emit(combined)
        return
    if interval is not None:
        raise typer.BadParameter("only with --combine ppi (the other scores' intervals are percentile bootstrap "
                                 "intervals)", param_hint="--interval")
    if rating_probability is not None:
        raise typer.BadParameter("only with --combine ppi", param_hint="--rating-probability")
    if cluster.dask:
        _check_dask_score(cluster, methods, refit, rater_info, raters)
    with bad_input_exits(), cluster.session() as dask:
        table = read_table(file, inputs, dask, rater_info, raters)
        result = score_agents(table, methods.chosen(seed=seed), bootstrap=bootstrap, seed=seed,
                              confidence=confidence, refit=refit, progress=True)
        emitted: Any = result if gold is None else with_gold_accuracy(result, table, result.posteriors, gold)
    out.emit(emitted)


def _check_dask_score(cluster: ClusterChoice, methods: MethodSelection, refit: bool, rater_info: Path | None,
                      raters: RaterKinds) -> None:
    """Refuse what ``score --executor dask`` does not do (usage errors, exit 2)."""
    from stableval.evaluate.scores import REFIT_IN_MEMORY

    if refit:
        cluster.refuse("--refit", REFIT_IN_MEMORY)
    if rater_info is not None or raters is not RaterKinds.ALL:
        cluster.refuse("--rater-info/--raters", "select the raters' judgments before (e.g. filter the Parquet "
                                                "files)")
    cluster.check_methods(methods.names)


def _check_ppi(cluster: ClusterChoice, refit: bool, raters: RaterKinds, gold: Path | None) -> None:
    """Refuse what ``score --combine ppi`` does not do (usage errors, exit 2)."""
    if cluster.dask:
        cluster.refuse("--combine ppi", "prediction-powered scores fit people and judges separately in memory")
    for used, flag in ((refit, "--refit"), (raters is not RaterKinds.ALL, "--raters"), (gold is not None, "--gold")):
        if used:
            raise typer.BadParameter("not with --combine ppi, which uses both kinds of rater and CLT and bootstrap "
                                     "intervals over the fitted credits", param_hint=flag)


def ppi_result(file: Path, inputs: InputOptions, methods: MethodSelection, rater_info: Path | None, *,
               bootstrap: int, seed: int, confidence: float, interval: str | None = None,
               probability: Path | None = None) -> Any:
    """The prediction-powered scores of FILE (:func:`stableval.evaluate.ppi_scores`): the people's and the judges'
    credit from the headline method of ``--method`` (STABLEVAL by default), intervals of the kind ``interval``
    (default :data:`~stableval.evaluate.ppi_options.INTERVAL`'s), weighted by the rating probabilities of the file
    ``probability`` (:func:`~stableval.evaluate.ppi.response_probabilities`) when given."""
    from stableval.aggregate.registry import primary_method
    from stableval.commands.common import read_rated_input
    from stableval.data.files.read import read_table_file
    from stableval.errors import InputError
    from stableval.evaluate import ppi_scores
    from stableval.evaluate.ppi import response_probabilities
    from stableval.evaluate.ppi_options import INTERVAL

    loaded, info, _ = read_rated_input(file, inputs, rater_info)
    if info is None:
        raise InputError("--combine ppi needs to know which raters are people and which are LLM judges",
                         file=loaded.table.source, allowed="a rater metadata file ({rater_info}; columns name, "
                         "kind, family) or a rater_kind column in the ratings", options={"rater_info": "FILE"})
    chosen = methods.chosen(seed=seed)
    headline = primary_method([c.key for c in chosen])
    method = next(c for c in chosen if c.key == headline)
    weights = (response_probabilities(loaded.table, read_table_file(probability), source=str(probability))
               if probability is not None else None)
    return ppi_scores(loaded.table, info, method, bootstrap=bootstrap, seed=seed, confidence=confidence,
                      interval=interval or INTERVAL.default, probability=weights)


def with_gold_accuracy(result: Any, table: Any, posteriors: dict[str, Any], path: Path) -> Appended:
    """``result`` with each method's accuracy against the gold labels of ``path`` (JSON and table)."""
    from stableval.datasets import gold_accuracy, read_gold

    labels = read_gold(path, default_agent=str(table.agents[0]) if table.n_agents == 1 else None)
    accuracy = gold_accuracy(table, posteriors, labels)

    def render(console: Console) -> None:
        from stableval.aggregate.registry import method_label

        console.print("Accuracy against gold (each method's reported level; majority vote after --ties) and "
                      "expected accuracy (mean probability of the gold level):")
        for row in accuracy[accuracy["agent"] == "(all)"].itertuples(index=False):
            console.print(f"  {method_label(str(row.method))}: {row.accuracy:.4f} on {row.gold_responses:,} "
                          f"responses with gold (expected accuracy {row.expected_accuracy:.4f})")
        for note in accuracy.attrs.get("notes", []):
            console.print(f"  note: {note}")

    return Appended(result, json={"gold_accuracy": accuracy.to_dict("records"),
                                  "gold_notes": list(accuracy.attrs.get("notes", []))}, render_more=render)


def demo(
    bootstrap: BootstrapOpt = 1000,
    output_format: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or csv.")
                             ] = OutputFormat.TABLE,
) -> None:
    """Score the bundled MT-Bench expert votes (turn 1, CC BY 4.0): the whole pipeline in one command."""
    from stableval.aggregate.registry import default_methods
    from stableval.data import InputOptions, example_path

    path = example_path("mt_bench")
    if output_format is OutputFormat.TABLE:
        typer.echo(f"Bundled example: {path.name} — 1,689 MT-Bench turn-1 pairwise votes by 65 expert and author "
                   "judges (Zheng et al. 2023, CC BY 4.0).\nOne judge voted twice on the same pair, so both votes "
                   f"are kept.\nSame as: stableval score {path} --duplicates keep\n")
    score(file=path, inputs=InputOptions(duplicates="keep"), methods=MethodSelection(default_methods()),
          out=Output(output_format), cluster=ClusterChoice(), bootstrap=bootstrap)
