"""``stableval nrp``: evaluate generated answers by ranking them among human-judged documents (NRP)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import FormatOpt, OutputFormat, OutputOpt, SeedOpt, fail, write_output

app = typer.Typer(help="NRP: score generated answers by their rank among human-judged documents "
                       "(Heineking et al. 2024); choose the ranker; check agreement with experts.",
                  no_args_is_help=True)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="nrp")


CollectionArg = Annotated[Path, typer.Argument(
    help="Test collection directory: queries.csv (qid, query) or topics.txt, documents.csv (docno, text), "
         "qrels.txt / qrels-<dimension>.txt (TREC) or judgments.csv (qid, docno, grade[, dimension]); "
         "or the liveqa_medical directory.", show_default=False)]
PoolOpt = Annotated[str, typer.Option("--pool", help="LiveQA only: trec, medquad, mediqa or merged.",
                                      rich_help_panel="Input")]
QueryFieldOpt = Annotated[str, typer.Option("--query-field", help="LiveQA only: question text used as query: "
                                            "paraphrase (NIST), summary (NLM) or original.", rich_help_panel="Input")]
MissingTextOpt = Annotated[bool, typer.Option("--drop-missing-text", help="Drop judgments of documents without "
                                              "text (counted in the notes) instead of failing.",
                                              rich_help_panel="Input")]
ModelPathOpt = Annotated[Path | None, typer.Option(
    "--model-path", help="Local model directory (save_pretrained layout) for cross-encoder and monoT5, or to "
                         "override the bundled bi-encoder. Nothing is downloaded.", rich_help_panel="Ranker")]
DeviceOpt = Annotated[str, typer.Option("--device", help="Torch device for neural rankers: cpu, cuda, cuda:1 ...",
                                        rich_help_panel="Ranker")]
BatchOpt = Annotated[int, typer.Option("--batch-size", min=1, help="Texts per forward pass (neural rankers).",
                                       rich_help_panel="Ranker")]
MaxLenOpt = Annotated[int, typer.Option("--max-length", min=8, help="Truncate (query, text) to this many tokens "
                                        "(neural rankers).", rich_help_panel="Ranker")]
CacheOpt = Annotated[Path | None, typer.Option("--cache", help="SQLite file caching scores by ranker and text "
                                               "(neural rankers), reused across runs.", rich_help_panel="Ranker")]


def _collection(path: Path, pool: str, query_field: str, drop_missing_text: bool) -> Any:
    from stableval.nrp.collection import read_collection

    return read_collection(path, pool=pool, query_field=query_field,
                           missing_text="drop" if drop_missing_text else "error")


def _rankers(names: str, model_path: Path | None, device: str, batch_size: int, max_length: int,
             cache: Path | None) -> dict[str, Any]:
    from stableval.nrp.rankers import RANKERS, ScoreCache, make_ranker

    chosen = [n.strip() for n in names.split(",") if n.strip()]
    bad = [n for n in chosen if n not in RANKERS]
    if bad or not chosen:
        raise typer.BadParameter(f"unknown ranker {bad[0] if bad else names!r}; choose from {', '.join(RANKERS)}",
                                 param_hint="--ranker")
    store = ScoreCache(cache) if cache is not None else None
    return {name: make_ranker(name, model_path=model_path, device=device, batch_size=batch_size,
                              max_length=max_length, cache=store) for name in chosen}


def _render(frame: Any, title: str, notes: list[str], digits: int = 3) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(file=buffer, width=160, highlight=False, force_terminal=False)
    table = Table(box=box.SIMPLE_HEAVY, title=title, title_justify="left", show_edge=False)
    for column in frame.columns:
        table.add_column(str(column), justify="left" if frame[column].dtype == object else "right")
    for row in frame.itertuples(index=False):
        table.add_row(*[f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row])
    console.print(table)
    for note in notes:
        console.print(f"note: {note}")
    return buffer.getvalue()


def _emit(frame: Any, output_format: OutputFormat, output: Path | None, *, title: str, notes: list[str],
          extra: dict[str, Any]) -> None:
    if output_format is OutputFormat.JSON:
        payload = {"command": " ".join(["stableval", *sys.argv[1:]]), **extra, "notes": notes,
                   "rows": json.loads(frame.to_json(orient="records"))}
        text = json.dumps(payload, indent=2) + "\n"
    elif output_format is OutputFormat.CSV:
        text = frame.to_csv(index=False)
    else:
        text = _render(frame, title, notes)
    write_output(text, output)


@app.command("evaluate-rankers")
def evaluate_rankers(
    collection: CollectionArg,
    ranker: Annotated[str, typer.Option("--ranker", "-r", help="Comma-separated rankers: bm25, biencoder, "
                                        "cross-encoder, monot5.", rich_help_panel="Ranker")] = "bm25",
    min_relevant: Annotated[float, typer.Option("--min-relevant", help="Grade from which a document counts as "
                                                "relevant for AP, P@10 and RR (nDCG uses the grades).")] = 1.0,
    per_question: Annotated[Path | None, typer.Option("--per-question", help="Also write per-question "
                                                      "measures to this CSV file.", rich_help_panel="Output")] = None,
    pool: PoolOpt = "merged",
    query_field: QueryFieldOpt = "paraphrase",
    drop_missing_text: MissingTextOpt = False,
    model_path: ModelPathOpt = None,
    device: DeviceOpt = "cpu",
    batch_size: BatchOpt = 32,
    max_length: MaxLenOpt = 512,
    cache: CacheOpt = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Rank every judged pool with each ranker and report nDCG@10, nDCG, AP, P@10 and RR per quality
    dimension (trec_eval definitions), so the NRP ranker is chosen on evidence."""
    from stableval.errors import StableValError
    from stableval.nrp.measures import evaluate_rankers as run

    try:
        data = _collection(collection, pool, query_field, drop_missing_text)
        rankers = _rankers(ranker, model_path, device, batch_size, max_length, cache)
        summary, detail = run(data, rankers, min_relevant=min_relevant, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if per_question is not None:
        detail.to_csv(per_question, index=False)
        typer.echo(f"wrote {per_question}", err=True)
    notes = [*data.notes, f"{data.name}: {data.n_questions} questions, {len(data.pool())} judged "
             f"(question, document) pairs; relevant = grade >= {min_relevant:g}"]
    _emit(summary, output_format, output, title="Ranker effectiveness on the judged pools (mean over questions)",
          notes=notes, extra={"collection": data.name})


def _parse_sizes(text: str | None) -> dict[str, float]:
    if not text:
        return {}
    units = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
    sizes = {}
    for part in text.split(","):
        name, _, value = part.strip().rpartition("=")
        try:
            unit = units.get(value[-1:].lower(), 1.0)
            sizes[name] = float(value[:-1] if value[-1:].lower() in units else value) * unit
        except ValueError:
            raise typer.BadParameter(f"cannot read {part!r}; write model=size, e.g. gpt2=124M,llama-7b=7B",
                                     param_hint="--sizes") from None
        if not name:
            raise typer.BadParameter(f"missing model name in {part!r}", param_hint="--sizes")
    return sizes


@app.command("score")
def score(
    collection: CollectionArg,
    answers: Annotated[Path, typer.Argument(help="Generated answers: CSV/TSV/JSONL/Parquet with qid, model, "
                                            "text (and optionally prompt, answer_id, params).",
                                            show_default=False)],
    ranker: Annotated[str, typer.Option("--ranker", "-r", help="bm25, biencoder, cross-encoder or monot5.",
                                        rich_help_panel="Ranker")] = "bm25",
    n: Annotated[str, typer.Option("--n", help="N in NRP = 1 - r/N: documents (|D_q|, the paper's formula) or "
                                   "list (|D_q| + 1, the authors' shipped analysis).")] = "documents",
    ties: Annotated[str, typer.Option("--ties", help="Documents scored exactly like the answer count as below "
                                      "it (optimistic), half above (mid) or above (pessimistic).")] = "mid",
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=0, help="Bootstrap replicates over "
                                           "questions for the intervals (0 = none).")] = 1000,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the intervals.")] = 0.95,
    seed: SeedOpt = 0,
    answers_out: Annotated[Path | None, typer.Option("--answers-out", help="Write the per-answer table (NRP, "
                                                     "documents above, tied, list length) to this CSV file.",
                                                     rich_help_panel="Output")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write PNG plots into this directory: NRP by model "
                                              "grouped by prompt, and NRP vs model size when sizes are known.",
                                              rich_help_panel="Output")] = None,
    sizes: Annotated[str | None, typer.Option("--sizes", help="Model sizes for the size plot, e.g. "
                                              "gpt2=124M,llama-2-7b=7B (or a params column in ANSWERS).",
                                              rich_help_panel="Output")] = None,
    pool: PoolOpt = "merged",
    query_field: QueryFieldOpt = "paraphrase",
    drop_missing_text: MissingTextOpt = False,
    model_path: ModelPathOpt = None,
    device: DeviceOpt = "cpu",
    batch_size: BatchOpt = 32,
    max_length: MaxLenOpt = 512,
    cache: CacheOpt = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Score generated answers by NRP: each answer is ranked alone among its question's judged documents.
    Prints mean NRP per model x prompt with a bootstrap interval over questions and the share ranked first."""
    from stableval.errors import StableValError
    from stableval.nrp.collection import read_answers
    from stableval.nrp.nrp import N_CHOICES, TIE_POLICIES, score_answers

    if n not in N_CHOICES:
        raise typer.BadParameter(f"{n!r}; choose from {', '.join(N_CHOICES)}", param_hint="--n")
    if ties not in TIE_POLICIES:
        raise typer.BadParameter(f"{ties!r}; choose from {', '.join(TIE_POLICIES)}", param_hint="--ties")
    size_map = _parse_sizes(sizes)
    try:
        data = _collection(collection, pool, query_field, drop_missing_text)
        table = read_answers(answers, collection=data)
        if size_map:
            table["params"] = table["model"].map(size_map).astype(float).fillna(table["params"])
        (name, model), = _rankers(ranker, model_path, device, batch_size, max_length, cache).items()
        result = score_answers(data, table, model, n=n, ties=ties, bootstrap=bootstrap, confidence=confidence,
                               seed=seed, progress=True)
    except StableValError as error:
        raise fail(str(error)) from None
    if answers_out is not None:
        result.answers.to_csv(answers_out, index=False)
        typer.echo(f"wrote {answers_out}", err=True)
    if plot is not None:
        from stableval.nrp.plots import plot_by_prompt, plot_vs_size

        plot.mkdir(parents=True, exist_ok=True)
        written = [plot_by_prompt(result.summary, plot / "nrp_by_prompt.png",
                                  title=f"NRP by model, grouped by prompt ({name}, {data.name})")]
        if result.summary["params"].notna().any():
            prompts = result.summary.loc[result.summary["params"].notna(), "prompt"].unique()
            for prompt in prompts:
                written.append(plot_vs_size(result.summary, plot / f"nrp_vs_size_{prompt}.png", prompt=prompt))
        for path in written:
            typer.echo(f"wrote {path}", err=True)
    s = result.settings
    notes = [*data.notes, *result.notes,
             f"{s['answers']:,} answers to {s['questions']} questions ranked by {s['ranker']}; N = {n}, "
             f"ties = {ties}; {round(confidence * 100)}% percentile bootstrap over questions (B={bootstrap}, "
             f"seed {seed})"]
    _emit(result.summary, output_format, output, title="NRP per model x prompt (best first)", notes=notes,
          extra={"settings": s})


@app.command("agree")
def agree(
    expert: Annotated[Path, typer.Argument(help="Expert rankings: a Label Studio ranker export (.json) or a "
                                           "table qid, item, rank (1 = best).", show_default=False)],
    rankings: Annotated[Path | None, typer.Argument(
        help="System rankings: table qid, docno, score (or rank), a TREC run, or a directory of "
             "<prefix>_<qid>.csv files. Default: the item scores stored in the Label Studio export.",
        show_default=False)] = None,
    p: Annotated[float, typer.Option("--p", help="RBO persistence, 0 < p < 1 (p = 1 is refused: see AO).")] = 0.9,
    annotator: Annotated[str | None, typer.Option("--annotator", help="Keep only this Label Studio user id.")
                         ] = None,
    confidence: Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                              help="Confidence level of the t intervals.")] = 0.95,
    per_question: Annotated[Path | None, typer.Option("--per-question", help="Also write per-question "
                                                      "agreement to this CSV file.", rich_help_panel="Output")
                            ] = None,
    output_format: FormatOpt = OutputFormat.TABLE,
    output: OutputOpt = None,
) -> None:
    """Agreement between expert and system rankings per question: Kendall tau-b, Spearman rho, average overlap
    (AO) and extrapolated RBO (Webber, Moffat & Zobel 2010), with means and t-based intervals."""
    import numpy as np
    import pandas as pd

    from stableval.errors import InputError, StableValError
    from stableval.nrp.agreement import agreement_table, mean_interval
    from stableval.nrp.label_studio import match_tasks, read_expert_rankings, read_system_scores

    if not 0.0 < p < 1.0:
        raise typer.BadParameter(f"p = {p:g}: RBO needs 0 < p < 1; for the depth-limited average of overlaps "
                                 "(what 'RBO with p = 1' computes) read the ao column", param_hint="--p")
    try:
        data = read_expert_rankings(expert, annotator=annotator)
        frame = data.frame
        if frame["annotator"].nunique() > 1:
            raise InputError("rankings by several annotators", file=str(expert), column="annotator",
                             value=sorted(frame["annotator"].unique()), allowed="--annotator ID to choose one")
        if rankings is None:
            if frame["score"].isna().any():
                raise InputError("the expert file stores no system scores", file=str(expert),
                                 allowed="pass RANKINGS (system scores per question)")
            system_frame = frame.rename(columns={"task": "qid"})[["qid", "item", "score"]]
            mapping = {t: t for t in frame["task"].unique()}
        else:
            system_frame = read_system_scores(rankings)
            mapping = match_tasks(frame, system_frame)
        ordered = frame.sort_values(["task", "rank"], kind="stable")
        experts = {mapping[str(t)]: list(g["item"]) for t, g in ordered.groupby("task", sort=False)}
        system = {str(q): dict(zip(g["item"], g["score"], strict=True))
                  for q, g in system_frame.groupby("qid", sort=False)}
        table = agreement_table(experts, system, p=p)
    except StableValError as error:
        raise fail(str(error)) from None
    if per_question is not None:
        table.to_csv(per_question, index=False)
        typer.echo(f"wrote {per_question}", err=True)
    rows = []
    for column, label in (("tau_b", "Kendall tau-b"), ("spearman", "Spearman rho"), ("ao", "average overlap (AO)"),
                          ("rbo", f"RBO_ext (p={p:g})")):
        mean, low, high, count = mean_interval(table[column].to_numpy(), confidence)
        rows.append({"measure": label, "mean": mean, "ci_low": low, "ci_high": high, "questions": count})
    summary = pd.DataFrame(rows)
    notes = [*data.notes, f"{len(table)} questions, {int(np.sum(table['items']))} ranked items; "
             f"{round(confidence * 100)}% t intervals over questions"]
    _emit(summary, output_format, output, title="Agreement between expert and system rankings", notes=notes,
          extra={"p": p})
