"""The commands of the published studies (:mod:`stableval.studies`): ``stableval medqa`` and ``stableval ddx``,
accuracy of models over bootstrapped ground truths on the Relabeled MedQA and dermatology DDx data.

    stableval medqa medqa_relabelling.csv --predictions gemini=answers.csv --plot medqa.png
    stableval ddx dermatology_selectors.json --predictions modelA=scores.txt
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stableval.commands.common import (
    ConfidenceOpt,
    DrawnRatersOpt,
    DrawsOpt,
    Output,
    PredictionsOpt,
    SeedOpt,
    VoteRule,
    bad_input_exits,
    named_files,
    output_options,
)
from stableval.commands.output import check_output_path, save_plot, write_csv


def register(app: typer.Typer) -> None:
    app.command("medqa")(medqa)
    app.command("ddx")(ddx)


# ====================================================================================== MedQA
@output_options()
def medqa(
    ratings: Annotated[Path, typer.Argument(help="medqa_relabelling.csv (Relabeled MedQA ratings).",
                                            show_default=False)],
    predictions: PredictionsOpt = None,
    raters: Annotated[int, typer.Option("--raters", "-k", min=1, help="Ratings drawn per question with "
                                        "replacement.")] = 3,
    draws: DrawsOpt = 1000,
    vote: Annotated[VoteRule, typer.Option("--vote", help="Exclude a question for a reason when all drawn raters "
                                           "(unanimous) or more than half (majority) flag it.")
                    ] = VoteRule.UNANIMOUS,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a bar plot (PNG) of questions kept and "
                                              "accuracy per exclusion step.")] = None,
    out: Output = Output(),
) -> None:
    """Relabeled MedQA: share of questions excluded for missing information, label errors and multiple correct
    answers, and each model's accuracy (predictions: CSV with qid,answer) after each exclusion."""
    from stableval.datasets.medqa import load_medqa, read_medqa_predictions
    from stableval.report.figures import check_figure_path, medqa_figure
    from stableval.studies.medqa import evaluate_medqa

    models = named_files(predictions)
    with bad_input_exits():
        if plot is not None:
            check_figure_path(plot, option="plot")
        data = load_medqa(ratings)
        preds = {name: read_medqa_predictions(path) for name, path in models.items()}
        result = evaluate_medqa(data, preds, k=raters, n_draws=draws, how=vote.value, seed=seed,
                                confidence=confidence, progress=True)
    if plot is not None:
        save_plot(medqa_figure(result), plot)
    out.emit(result)


# ====================================================================================== DDx
@output_options()
def ddx(
    selectors: Annotated[Path, typer.Argument(help="dermatology_selectors.json: per case a list of partial "
                                              "rankings (ordered groups of condition indices).",
                                              show_default=False)],
    predictions: PredictionsOpt = None,
    conditions: Annotated[Path | None, typer.Option("--conditions", help="Condition names, one per line "
                                                    "(default: dermatology_conditions.txt beside SELECTORS, if "
                                                    "present).")] = None,
    risks: Annotated[Path | None, typer.Option("--risks", help="Risk category per condition, one per line: 0 low, "
                                               "1 medium, 2 high (default: dermatology_risks.txt beside "
                                               "SELECTORS, if present).")] = None,
    raters: DrawnRatersOpt = 3,
    draws: DrawsOpt = 1000,
    top_k: Annotated[str, typer.Option("--top-k", help="Comma-separated k of the top-k accuracies.")] = "1,3,5",
    least_certain: Annotated[int, typer.Option("--least-certain", min=0, help="How many of the least certain "
                                               "cases to list.")] = 10,
    certainty_out: Annotated[Path | None, typer.Option("--certainty-out", help="Write every case's annotation "
                                                       "certainty to this CSV file.")] = None,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    out: Output = Output(),
) -> None:
    """Dermatology DDx: top-k accuracy of N × C score matrices (.npy or numpy.savetxt text) against bootstrapped
    IRN ground truths, by risk category, and per-case annotation certainty."""
    import dataclasses

    from stableval.datasets.ddx import load_ddx, load_scores
    from stableval.studies.ddx import evaluate_ddx

    models = named_files(predictions)
    try:
        ks = [int(v) for v in top_k.split(",") if v.strip()]
        if not ks or min(ks) < 1:
            raise ValueError
    except ValueError:
        raise typer.BadParameter(f"expected positive integers such as 1,3,5, got {top_k!r}",
                                 param_hint="--top-k") from None
    for given, default, flag in ((conditions, "dermatology_conditions.txt", "conditions"),
                                 (risks, "dermatology_risks.txt", "risks")):
        if given is None and (selectors.parent / default).exists():
            typer.echo(f"using --{flag} {selectors.parent / default}", err=True)
    conditions = conditions or _beside(selectors, "dermatology_conditions.txt")
    risks = risks or _beside(selectors, "dermatology_risks.txt")
    check_output_path(certainty_out, "--certainty-out")  # before the work, as --output is
    with bad_input_exits():
        data = load_ddx(selectors, conditions=conditions, risks=risks)
        shape = (data.n_cases, data.n_conditions)
        scores = {name: load_scores(path, shape=shape) for name, path in models.items()}
        result = evaluate_ddx(data, scores, k=raters or None, n_draws=draws, top_k=ks, seed=seed,
                              confidence=confidence, progress=True)
    if certainty_out is not None:
        write_csv(result.certainty, certainty_out)
    out.emit(dataclasses.replace(result, shown=least_certain))


def _beside(selectors: Path, name: str) -> Path | None:
    path = selectors.parent / name
    return path if path.exists() else None
