"""``stableval rater-bootstrap``, ``stableval medqa`` and ``stableval ddx``: accuracy over bootstrapped ground truths.

    stableval rater-bootstrap labels.csv --predictions model=preds.csv
    stableval medqa medqa_relabelling.csv --predictions gemini=answers.csv --plot medqa.png
    stableval ddx dermatology_selectors.json --predictions modelA=scores.txt
"""

from __future__ import annotations

import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval._version import __version__
from stableval.commands.common import FormatOpt, OutputFormat, OutputOpt, SeedOpt, fail, write_output


class Rule(StrEnum):
    MAJORITY = "majority"
    UNANIMOUS = "unanimous"


class GenericTies(StrEnum):
    SPLIT = "split"
    RANDOM = "random"
    LOWEST = "lowest"
    EXCLUDE = "exclude"


DrawsOpt = Annotated[int, typer.Option("--draws", "-B", min=1, help="Bootstrap draws of raters.")]
RatersOpt = Annotated[int, typer.Option("--raters", "-k", min=0, help="Ratings drawn per item with replacement "
                                        "(0 = as many as the item has).")]
ConfidenceOpt = Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Coverage of the percentile intervals over draws.")]
PredictionsOpt = Annotated[list[str] | None, typer.Option(
    "--predictions", "-p", help="Model predictions as NAME=FILE (or FILE: the name is the file stem); repeatable.",
    show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("rater-bootstrap")(rater_bootstrap)
    app.command("medqa")(medqa)
    app.command("ddx")(ddx)


def _named(values: list[str] | None) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for value in values or []:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = Path(value).stem, value
        name = name.strip()
        if not name or not path.strip():
            raise typer.BadParameter(f"expected NAME=FILE, got {value!r}", param_hint="--predictions")
        if name in out:
            raise typer.BadParameter(f"model name {name!r} given twice", param_hint="--predictions")
        out[name] = Path(path.strip())
    return out


def _header(command: str) -> dict[str, Any]:
    return {"command": " ".join(["stableval", *sys.argv[1:]]) if sys.argv else command, "version": __version__}


def _interval(mean: Any, low: Any, high: Any, scale: float = 100.0, digits: int = 1) -> str:
    if mean != mean:
        return "—"
    text = f"{scale * mean:.{digits}f}"
    if low == low and high == high and abs(high - low) > 1e-12:
        text += f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
    return text


def _console(buffer: io.StringIO) -> Any:
    from rich.console import Console

    return Console(file=buffer, force_terminal=False, width=160, highlight=False)


# ====================================================================================== generic
def rater_bootstrap(
    file: Annotated[Path, typer.Argument(help="Per-item labels: one row per rating (item, label) or one row per "
                                              "item with one count column per label (CSV, TSV, JSONL, Parquet).",
                                         show_default=False)],
    predictions: PredictionsOpt = None,
    item_col: Annotated[str, typer.Option("--item-col", help="Column holding the item id (ratings and "
                                                             "predictions).")] = "item",
    label_col: Annotated[str | None, typer.Option("--label-col", help="Column holding the label (long layout; "
                                                  "default 'label' if present, else the file is read as counts).")
                         ] = None,
    levels: Annotated[str | None, typer.Option("--levels", help="Comma-separated label names in order (default: "
                                               "sorted distinct labels, or the count columns).")] = None,
    rule: Annotated[Rule, typer.Option("--rule", help="Aggregate each draw by majority (plurality) or unanimity "
                                       "(items without agreement are left out of that draw).")] = Rule.MAJORITY,
    ties: Annotated[GenericTies, typer.Option("--ties", help="Majority ties: split credit among tied labels, "
                                              "random (seeded), lowest label, or exclude the item from the draw.")
                    ] = GenericTies.SPLIT,
    raters: RatersOpt = 3,
    draws: DrawsOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Accuracy of each model against bootstrapped ground truths: per item, draw k ratings with replacement,
    aggregate, score; mean and interval over draws."""
    from stableval.errors import StableValError
    from stableval.evaluate.rater_bootstrap import rater_bootstrap as run
    from stableval.evaluate.rater_bootstrap import read_label_sets, read_predictions_file

    models = _named(predictions)
    try:
        sets = read_label_sets(file, item_col=item_col, label_col=label_col,
                               levels=[v.strip() for v in levels.split(",") if v.strip()] if levels else None)
        preds = {name: read_predictions_file(path, item_col=item_col) for name, path in models.items()}
        result = run(sets, preds, k=raters or None, n_draws=draws, rule=rule.value, ties=ties.value, seed=seed,
                     confidence=confidence, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if output_format is OutputFormat.JSON:
        text = json.dumps({**_header("rater-bootstrap"), **result.to_dict()}, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.summary.to_csv(index=False)
    else:
        buffer = io.StringIO()
        console = _console(buffer)
        s = result.settings
        console.print(f"[bold]{s['source']}[/]: {s['items']:,} items, {s['ratings']:,} ratings, labels "
                      f"{', '.join(s['levels'])}")
        for note in s["notes"]:
            console.print(f"  note: {note}")
        share = result.to_dict()["excluded_share"]
        how = "all of its ratings" if raters == 0 else f"{raters} rating(s)"
        console.print(f"Per draw each item gets {how} drawn with replacement; rule {s['rule']}"
                      + (f", ties {s['ties']}" if s["rule"] == "majority" else "")
                      + f"; {s['n_draws']:,} draws (seed {s['seed']}).")
        if s["draws_with_no_item"]:
            console.print(f"{s['draws_with_no_item']:,} draw(s) left every item out; they are not averaged.")
        if share["mean"] > 0:
            console.print(f"Items left out per draw: {100 * share['mean']:.1f}% "
                          f"[{100 * share['ci_low']:.1f}, {100 * share['ci_high']:.1f}].")
        from rich import box
        from rich.table import Table

        pct = round(100 * confidence)
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        for column in ("Model", f"Accuracy % [{pct}% interval]", "Frozen key %"):
            table.add_column(column, justify="left" if column == "Model" else "right")
        for row in result.summary.itertuples(index=False):
            table.add_row(str(row.model), _interval(row.accuracy, row.ci_low, row.ci_high),
                          _interval(row.frozen_accuracy, float("nan"), float("nan")))
        if len(result.summary):
            console.print(table)
        else:
            console.print("No --predictions given: nothing to score.")
        text = buffer.getvalue()
    write_output(text, output)


# ====================================================================================== MedQA
def medqa(
    ratings: Annotated[Path, typer.Argument(help="medqa_relabelling.csv (Relabeled MedQA ratings).",
                                            show_default=False)],
    predictions: PredictionsOpt = None,
    raters: Annotated[int, typer.Option("--raters", "-k", min=1, help="Ratings drawn per question with "
                                        "replacement.")] = 3,
    draws: DrawsOpt = 1000,
    vote: Annotated[Rule, typer.Option("--vote", help="Exclude a question for a reason when all drawn raters "
                                       "(unanimous) or more than half (majority) flag it.")] = Rule.UNANIMOUS,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write a bar plot (PNG) of questions kept and "
                                              "accuracy per exclusion step.")] = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Relabeled MedQA: share of questions excluded for missing information, label errors and multiple correct
    answers, and each model's accuracy (predictions: CSV with qid,answer) after each exclusion."""
    from stableval.errors import StableValError
    from stableval.evaluate.medqa import evaluate_medqa, load_medqa, plot_medqa, read_medqa_predictions

    models = _named(predictions)
    try:
        data = load_medqa(ratings)
        preds = {name: read_medqa_predictions(path) for name, path in models.items()}
        result = evaluate_medqa(data, preds, k=raters, n_draws=draws, how=vote.value, seed=seed,
                                confidence=confidence, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if plot is not None:
        plot_medqa(result, plot)
        typer.echo(f"wrote {plot}", err=True)
    if output_format is OutputFormat.JSON:
        text = json.dumps({**_header("medqa"), **result.to_dict()}, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        import pandas as pd

        ex = result.exclusions.assign(metric="excluded_share", model="").rename(columns={"share": "mean"})
        acc = result.accuracy.assign(metric="accuracy").rename(columns={"accuracy": "mean"})
        columns = ["metric", "model", "filter", "mean", "ci_low", "ci_high"]
        text = pd.concat([ex[columns], acc[columns]], ignore_index=True).to_csv(index=False)
    else:
        text = _medqa_table(result)
    write_output(text, output)


def _medqa_table(result: Any) -> str:
    from rich import box
    from rich.table import Table

    buffer = io.StringIO()
    console = _console(buffer)
    s = result.settings
    console.print(f"[bold]{s['source']}[/]: {s['questions']:,} questions, {s['ratings']:,} ratings by "
                  f"{s['raters']} raters; per draw {s['k']} ratings per question with replacement, {s['vote']} vote; "
                  f"{s['n_draws']:,} draws (seed {s['seed']}).")
    for note in s["notes"]:
        console.print(f"  note: {note}")
    pct = round(100 * s["confidence"])
    table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Questions excluded", title_justify="left")
    table.add_column("Exclusion")
    table.add_column(f"% excluded [{pct}% interval]", justify="right")
    table.add_column("questions kept", justify="right")
    table.add_column("% excluded, vote of all raters", justify="right")
    for row in result.exclusions.itertuples(index=False):
        if row.filter == "none":
            continue
        table.add_row(row.label, _interval(row.share, row.ci_low, row.ci_high), f"{row.questions:,.1f}",
                      f"{100 * row.share_all_raters:.1f}")
    console.print(table)
    if s["models"]:
        acc = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"Accuracy % on the original key [{pct}% interval]",
                    title_justify="left")
        acc.add_column("Model")
        labels = list(dict.fromkeys(result.accuracy["label"]))
        for label in labels:
            acc.add_column(label, justify="right")
        for model in s["models"]:
            rows = result.accuracy[result.accuracy["model"] == model]
            acc.add_row(model, *(_interval(r.accuracy, r.ci_low, r.ci_high) for r in rows.itertuples(index=False)))
        console.print(acc)
    else:
        console.print("No --predictions given: exclusion shares only.")
    return buffer.getvalue()


# ====================================================================================== DDx
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
    raters: RatersOpt = 3,
    draws: DrawsOpt = 1000,
    top_k: Annotated[str, typer.Option("--top-k", help="Comma-separated k of the top-k accuracies.")] = "1,3,5",
    least_certain: Annotated[int, typer.Option("--least-certain", min=0, help="How many of the least certain "
                                               "cases to list.")] = 10,
    certainty_out: Annotated[Path | None, typer.Option("--certainty-out", help="Write every case's annotation "
                                                       "certainty to this CSV file.")] = None,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Dermatology DDx: top-k accuracy of N × C score matrices (.npy or numpy.savetxt text) against bootstrapped
    IRN ground truths, by risk category, and per-case annotation certainty."""
    from stableval.errors import StableValError
    from stableval.evaluate.ddx import evaluate_ddx, load_ddx, load_scores

    models = _named(predictions)
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
    try:
        data = load_ddx(selectors, conditions=conditions, risks=risks)
        shape = (data.n_cases, data.n_conditions)
        scores = {name: load_scores(path, shape=shape) for name, path in models.items()}
        result = evaluate_ddx(data, scores, k=raters or None, n_draws=draws, top_k=ks, seed=seed,
                              confidence=confidence, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if certainty_out is not None:
        result.certainty.to_csv(certainty_out, index=False)
        typer.echo(f"wrote {certainty_out}", err=True)
    if output_format is OutputFormat.JSON:
        text = json.dumps({**_header("ddx"), **result.to_dict(least_certain)}, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = result.accuracy.to_csv(index=False)
    else:
        text = _ddx_table(result, least_certain, raters)
    write_output(text, output)


def _beside(selectors: Path, name: str) -> Path | None:
    path = selectors.parent / name
    return path if path.exists() else None


def _ddx_table(result: Any, least_certain: int, raters: int) -> str:
    from rich import box
    from rich.table import Table

    buffer = io.StringIO()
    console = _console(buffer)
    s = result.settings
    how = "all of its rankings" if raters == 0 else f"{raters} ranking(s)"
    console.print(f"[bold]{s['source']}[/]: {s['cases']:,} cases, {s['rankings']:,} partial rankings, "
                  f"{s['conditions']} conditions; per draw each case gets {how} drawn with replacement, "
                  f"aggregated by {s['aggregation']}; {s['n_draws']:,} draws (seed {s['seed']}).")
    for note in s["notes"]:
        console.print(f"  note: {note}")
    pct = round(100 * s["confidence"])
    if s["models"]:
        strata = list(dict.fromkeys(result.accuracy["risk"]))
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"Top-k accuracy % [{pct}% interval] by risk "
                      "of the ground-truth condition", title_justify="left")
        table.add_column("Model")
        table.add_column("k", justify="right")
        for stratum in strata:
            table.add_column(stratum if stratum == "all" else f"{stratum} risk", justify="right")
        table.add_column("frozen key (all)", justify="right")
        for (model, k), rows in result.accuracy.groupby(["model", "k"], sort=False):
            cells = [_interval(r.accuracy, r.ci_low, r.ci_high) for r in rows.itertuples(index=False)]
            table.add_row(str(model), str(k), *cells, f"{100 * rows['frozen_accuracy'].iloc[0]:.1f}")
        console.print(table)
        if len(strata) > 1:
            cases = result.accuracy.drop_duplicates("risk").set_index("risk")["cases"]
            console.print("Cases per stratum (mean per draw): "
                          + ", ".join(f"{k} {v:,.1f}" for k, v in cases.items()))
    else:
        console.print("No --predictions given: annotation certainty only.")
    cert = result.certainty["certainty"]
    console.print(f"Annotation certainty (P(drawn top-1 = top-1 of all rankings)): mean {cert.mean():.3f}; "
                  f"{int((cert == 1).sum()):,} of {len(cert):,} cases always agree.")
    if least_certain:
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"{least_certain} least certain cases",
                      title_justify="left")
        for column in ("case", "rankings", "certainty", "top-1 of all rankings", "drawn top-1 (share)"):
            table.add_column(column, justify="right" if column in ("case", "rankings", "certainty") else "left")
        for row in result.least_certain(least_certain).itertuples(index=False):
            table.add_row(str(row.case), str(row.rankings), f"{row.certainty:.3f}", row.top1, row.drawn_top1)
        console.print(table)
    return buffer.getvalue()
