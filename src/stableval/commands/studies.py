"""The commands of the published studies (:mod:`stableval.studies`): ``stableval medqa`` and ``stableval ddx``,
accuracy of models over bootstrapped ground truths on the Relabeled MedQA and dermatology DDx data.

    stableval medqa medqa_relabelling.csv --predictions gemini=answers.csv --plot medqa.png
    stableval medqa medqa_relabelling.csv --per-question questions.csv --two-step --reason info_missing
    stableval ddx dermatology_selectors.json --predictions modelA=scores.txt
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stableval.aggregate.rankings.registry import (
    RANKING_REGISTRY,
    default_ranking_method,
    parse_ranking_params,
    ranking_method_names,
)
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
from stableval.commands.output import Appended, check_output_path, save_plot, write_csv, wrote
from stableval.datasets.medqa_format import MISSING_OPTION

#: ``stableval ddx --method``: the registered ranking aggregation methods (:mod:`stableval.aggregate.rankings`)
if TYPE_CHECKING:
    RankingMethodName = StrEnum
else:
    RankingMethodName = StrEnum("RankingMethodName", {name: name for name in ranking_method_names()})


def _ranking_param_help() -> str:
    listed = "; ".join(f"{name}.{option.name} ({option.default!r})" for name, method in RANKING_REGISTRY.items()
                       for option in method.params)
    return ("A ranking method's hyper-parameter, METHOD.NAME=VALUE (repeatable), e.g. pl.prior_shape=3; the method "
            f"must be among those chosen. Available (default): {listed}. What each does and allows: "
            "docs/rankings.md.")


#: ``--ranking-param METHOD.NAME=VALUE`` of every command that runs a ranking method (``ddx``, ``plot ddx-case``,
#: ``nrp agree --aggregate``); read with :func:`ranking_params`.
RankingParamOpt = Annotated[list[str] | None, typer.Option("--ranking-param", help=_ranking_param_help(),
                                                           show_default=False)]


def ranking_params(entries: list[str] | None, chosen: list[str]) -> dict[str, dict[str, Any]]:
    """``--ranking-param`` values → ``{method: {name: value}}`` for the ``chosen`` ranking methods (usage error,
    naming the flag, otherwise)."""
    try:
        return parse_ranking_params(entries or [], chosen=chosen)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--ranking-param") from None


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
    reason: Annotated[str, typer.Option(MISSING_OPTION.cli, help=MISSING_OPTION.describe(), show_default=False)
                      ] = MISSING_OPTION.default,
    per_question: Annotated[Path | None, typer.Option(
        "--per-question", help="Write one row per question (raters; share and bootstrap probability of each "
        "exclusion reason; exclusion probability; blind answers) to this file: .csv, .tsv, .jsonl or .parquet.",
        show_default=False)] = None,
    two_step: Annotated[bool, typer.Option("--two-step", help="Also show the two-step design: how often raters "
                                           "changed their answer after seeing the key, by their blind answer, and "
                                           "agreement blind versus seen.")] = False,
    two_step_plot: Annotated[Path | None, typer.Option("--two-step-plot", help="Write the two-step design's bar "
                                                       "plot (implies --two-step).", show_default=False)] = None,
    out: Output = Output(),
) -> None:
    """Relabeled MedQA: share of questions excluded for missing information, label errors and multiple correct
    answers, and each model's accuracy (predictions: CSV with qid,answer) after each exclusion."""
    from stableval.data.files import output_format, write_frame
    from stableval.datasets.medqa import load_medqa, read_medqa_predictions
    from stableval.report.figures import check_figure_path, medqa_figure, two_step_figure
    from stableval.studies.medqa import evaluate_medqa
    from stableval.studies.medqa_two_step import two_step as analyse_two_step

    models = named_files(predictions)
    for value, flag, check in ((reason, MISSING_OPTION.cli, MISSING_OPTION.check),
                               (per_question, "--per-question", output_format)):
        try:
            if value is not None:
                check(value)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint=flag) from None
    check_output_path(per_question, "--per-question")
    with bad_input_exits():
        for figure_path, flag in ((plot, "plot"), (two_step_plot, "two-step-plot")):
            if figure_path is not None:
                check_figure_path(figure_path, option=flag)
        data = load_medqa(ratings, missing=reason)
        preds = {name: read_medqa_predictions(path) for name, path in models.items()}
        result = evaluate_medqa(data, preds, k=raters, n_draws=draws, how=vote.value, seed=seed,
                                confidence=confidence, progress=True)
    if plot is not None:
        save_plot(medqa_figure(result), plot)
    if per_question is not None and result.per_question is not None:
        per_question.parent.mkdir(parents=True, exist_ok=True)
        wrote(write_frame(result.per_question, per_question))
    if not (two_step or two_step_plot):
        out.emit(result)
        return
    steps = analyse_two_step(data)
    if two_step_plot is not None:
        save_plot(two_step_figure(steps), two_step_plot)
    out.emit(Appended(result, json={"two_step": steps.to_dict()}, render_more=steps.render))


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
    method: Annotated[RankingMethodName, typer.Option("--method", help="Ranking aggregation method that turns "
                                                      "each case's rankings into its plausibility.")
                      ] = RankingMethodName(default_ranking_method()),
    ranking_param: RankingParamOpt = None,
    plausibility_out: Annotated[Path | None, typer.Option("--plausibility-out", help="Write each case's 5 most "
                                                          "plausible conditions (case, rank, condition, "
                                                          "plausibility) to this CSV file.")] = None,
    compare_methods: Annotated[str | None, typer.Option("--compare-methods", help="Compare ranking methods "
                                                        "(comma-separated, or 'all'; the first is the reference): "
                                                        "top-1/top-3 of every model, certainty, rank order, "
                                                        "winner changes. Without --predictions: synthetic "
                                                        "models A-D.")] = None,
    conformal: Annotated[float | None, typer.Option("--conformal", min=0.0, max=1.0, help="Monte Carlo conformal "
                                                    "prediction sets at this miscoverage ALPHA (e.g. 0.1), "
                                                    "calibrated on half the cases (split by --seed), coverage "
                                                    "and set size on the rest.")] = None,
    sets_out: Annotated[Path | None, typer.Option("--sets-out", help="With --conformal: write every held-out "
                                                  "case's prediction set to this CSV file.")] = None,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    out: Output = Output(),
) -> None:
    """Dermatology DDx: top-k accuracy of N × C score matrices (.npy or numpy.savetxt text) against ground truths
    sampled by a ranking aggregation method (rater bootstrap, or posterior samples), by risk category, per-case
    plausibility and annotation certainty; or a comparison of methods, or conformal prediction sets."""
    import dataclasses

    from stableval.aggregate.rankings.registry import resolve_ranking_methods
    from stableval.datasets.ddx import load_ddx, load_scores
    from stableval.studies.ddx import check_draws_not_in_params, evaluate_ddx
    from stableval.studies.ddx_methods import compare_ddx_methods, conformal_ddx, synthetic_models

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
    for path, flag in ((certainty_out, "--certainty-out"), (plausibility_out, "--plausibility-out"),
                       (sets_out, "--sets-out")):
        check_output_path(path, flag)  # before the work, as --output is
    if conformal is not None and not 0 < conformal < 1:
        raise typer.BadParameter(f"expected a miscoverage strictly between 0 and 1, got {conformal}",
                                 param_hint="--conformal")
    chosen = [method.value]
    if compare_methods is not None:
        try:
            chosen = [name for name, _, _ in resolve_ranking_methods(compare_methods)]
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--compare-methods") from None
    params = ranking_params(ranking_param, chosen)
    try:
        check_draws_not_in_params(params)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--ranking-param") from None
    with bad_input_exits():
        data = load_ddx(selectors, conditions=conditions, risks=risks)
        shape = (data.n_cases, data.n_conditions)
        scores = {name: load_scores(path, shape=shape) for name, path in models.items()}
        if (compare_methods is not None or conformal is not None) and not scores:
            scores = synthetic_models(data)
            typer.echo("no --predictions: using the synthetic models A-D (stableval.studies.ddx_methods)", err=True)
        if compare_methods is not None:
            try:
                comparison = compare_ddx_methods(data, scores, compare_methods, k=raters or None, n_draws=draws,
                                                 seed=seed, confidence=confidence, synthetic=not models,
                                                 progress=True, params=params)
            except ValueError as error:
                raise typer.BadParameter(str(error), param_hint="--compare-methods") from None
            out.emit(comparison)
            return
        if conformal is not None:
            sets = conformal_ddx(data, scores, conformal, method=method.value, seed=seed, params=params)
            if sets_out is not None:
                write_csv(sets.sets, sets_out)
            out.emit(sets)
            return
        result = evaluate_ddx(data, scores, method=method.value, params=params, k=raters or None, n_draws=draws,
                              top_k=ks, seed=seed, confidence=confidence, progress=True)
    if certainty_out is not None:
        write_csv(result.certainty, certainty_out)
    if plausibility_out is not None:
        write_csv(result.plausibility_frame(), plausibility_out)
    out.emit(dataclasses.replace(result, shown=least_certain))


def _beside(selectors: Path, name: str) -> Path | None:
    path = selectors.parent / name
    return path if path.exists() else None


def ddx_case(selectors: Path, *, case: str | None, least_certain: int | None, method: str, output: Path,
             draws: int, seed: int, ranking_param: list[str] | None = None) -> None:
    """``stableval plot ddx-case``: one case's rankings and plausibility (condition names from
    dermatology_conditions.txt beside the selectors), or the ids of the least certain cases."""
    from stableval.aggregate.rankings.registry import resolve_ranking_methods
    from stableval.datasets.ddx import load_ddx
    from stableval.report.figures import check_figure_path, ddx_case_figure
    from stableval.studies.ddx import evaluate_ddx

    if (case is None) == (least_certain is None):
        raise typer.BadParameter("ddx-case needs either --case ID or --least-certain N", param_hint="--case")
    params = ranking_params(ranking_param, [method])
    with bad_input_exits():
        if case is not None:
            check_figure_path(output, option="output")
        data = load_ddx(selectors, conditions=_beside(selectors, "dermatology_conditions.txt"))
        if least_certain is not None:
            result = evaluate_ddx(data, method=method, params=params, n_draws=draws, seed=seed)
            for value in result.least_certain(least_certain)["case"]:
                typer.echo(str(value))
            return
        fit = resolve_ranking_methods([method], params)[0][2].fit(data.rankings())
        try:
            figure = ddx_case_figure(fit, str(case).strip())
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--case") from None
    save_plot(figure, output)
