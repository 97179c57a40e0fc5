"""``stableval convert NAME PATH -o OUT``: a public dataset (read from PATH, never downloaded) → annotation file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import Duplicates, fail

#: Names accepted by NAME (kept here so ``stableval --help`` needs no pandas; a test checks it against the registry).
DATASET_NAMES: tuple[str, ...] = ("convabuse", "qags", "mslr", "mt-bench", "truth-inference", "dawid-skene")
MAPPING_NAMES: tuple[str, ...] = ("baseline", "drop-ties", "tie-as-win", "tie-as-loss", "tie-0.25", "tie-0.75")

_HELP = (
    "Convert a public rating dataset into an annotation file (item, agent, rater, label).\n\n"
    "NAME is one of: convabuse (ConvAbuse full CSV), qags (folder with mturk_cnndm/xsum.jsonl), mslr "
    "(data_with_overlap_scores.json), mt-bench (mt_bench_human_votes_available.jsonl), truth-inference (folder "
    "with answer.csv and truth.csv), dawid-skene (the dawid_skene_1979 folder or one of its CSVs). PATH is the "
    "file or its folder; nothing is downloaded.\n\n"
    "OUT's suffix picks the format: .csv, .tsv, .jsonl or .parquet. The counts, what was dropped and why, and "
    "the command that scores OUT are printed. See docs/datasets.md for each conversion."
)


def register(app: typer.Typer) -> None:
    app.command(help=_HELP)(convert)


def _parse_turns(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or any(p not in ("1", "2") for p in parts):
        raise typer.BadParameter(f"{text!r}: give 1, 2 or 1,2", param_hint="--turns")
    return tuple(sorted({int(p) for p in parts}))


def convert(
    name: Annotated[str, typer.Argument(help="Dataset: " + ", ".join(DATASET_NAMES) + ".", show_default=False)],
    path: Annotated[Path, typer.Argument(help="The dataset's file or folder (never downloaded).",
                                         show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file: .csv, .tsv, .jsonl or .parquet.",
                                         show_default=False)],
    mapping: Annotated[str | None, typer.Option(
        "--mapping", help="mt-bench: how a vote becomes levels: " + ", ".join(MAPPING_NAMES)
        + " (default baseline: win 2 / tie 1 / loss 0).", rich_help_panel="mt-bench")] = None,
    turns: Annotated[str | None, typer.Option(
        "--turns", help="mt-bench: turns to keep: 1, 2 or 1,2 (default 1). Turn 1 is complete; turn 2 is PARTIAL "
                        "(869 of 1,666 votes, winners skewed).", rich_help_panel="mt-bench")] = None,
    duplicates: Annotated[Duplicates | None, typer.Option(
        "--duplicates", help="mt-bench, truth-inference: the same vote/answer given twice by one rater: keep all "
                             "(mt-bench default), first (truth-inference default), last, or error.",
        rich_help_panel="mt-bench / truth-inference")] = None,
    separate_workers: Annotated[bool | None, typer.Option(
        "--separate-workers/--shared-workers", help="qags: keep the two files' worker ids apart (default: one id "
                                                    "space, as in the original analysis).",
        rich_help_panel="qags", show_default=False)] = None,
    min_annotators: Annotated[int | None, typer.Option(
        "--min-annotators", min=1, help="mslr: keep responses with at least this many annotators (default 2).",
        rich_help_panel="mslr")] = None,
    truth: Annotated[Path | None, typer.Option(
        "--truth", help="truth-inference: gold file (default truth.csv beside answer.csv).",
        rich_help_panel="truth-inference")] = None,
    agent: Annotated[str | None, typer.Option(
        "--agent", help="truth-inference: agent name of every question (default: the folder's name).",
        rich_help_panel="truth-inference")] = None,
    levels: Annotated[str | None, typer.Option(
        "--levels", help="truth-inference: answer values as ordered level names, worst first (default integer "
                         "codes 0..K-1).", rich_help_panel="truth-inference")] = None,
    gold_output: Annotated[Path | None, typer.Option(
        "--gold-output", help="truth-inference: also write the gold labels (item, agent, gold) to this file.",
        rich_help_panel="truth-inference")] = None,
    data: Annotated[str | None, typer.Option(
        "--data", help="dawid-skene: anesthesia (default, dallascard transcription), anesthesia-rater or caries.",
        rich_help_panel="dawid-skene")] = None,
) -> None:
    from stableval.data.files import output_format, write_frame
    from stableval.datasets import DATASETS, load_dataset
    from stableval.datasets.gold import write_gold
    from stableval.errors import StableValError
    from stableval.progress import progress_bar

    key = name.strip().lower().replace("_", "-")
    if key not in DATASETS:
        raise typer.BadParameter(f"{name!r} is not a dataset; allowed: {', '.join(DATASETS)}", param_hint="NAME")
    try:
        output_format(output)
        if gold_output is not None:
            output_format(gold_output)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--output/--gold-output") from None
    if mapping is not None and mapping not in MAPPING_NAMES:
        raise typer.BadParameter(f"{mapping!r}; allowed: {', '.join(MAPPING_NAMES)}", param_hint="--mapping")
    if data is not None and data not in ("anesthesia", "anesthesia-rater", "caries"):
        raise typer.BadParameter(f"{data!r}; allowed: anesthesia, anesthesia-rater, caries", param_hint="--data")
    given: dict[str, Any] = {
        "mapping": mapping, "turns": _parse_turns(turns) if turns is not None else None,
        "duplicates": duplicates.value if duplicates is not None else None, "separate_workers": separate_workers,
        "min_annotators": min_annotators, "truth": truth, "agent": agent, "levels": levels, "data": data,
    }
    options = {option: value for option, value in given.items() if value is not None}
    takes = DATASETS[key].options
    for option in options:
        if option not in takes:
            users = [n for n, info in DATASETS.items() if option in info.options]
            flag = "--" + option.replace("_", "-")
            raise typer.BadParameter(f"{key} takes no {flag}; it is for {', '.join(users)}", param_hint=flag)
    if gold_output is not None and key != "truth-inference":
        raise typer.BadParameter(f"{key} has no gold labels; --gold-output is for truth-inference",
                                 param_hint="--gold-output")
    try:
        with progress_bar(f"converting {key}", total=2) as bar:
            dataset = load_dataset(key, path, **options)
            bar.advance()
            table = dataset.table
            write_frame(table.to_frame(), output)
            if gold_output is not None and dataset.gold is not None:
                write_gold(dataset.gold, gold_output)
            bar.advance()
    except StableValError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"cannot write: {error}") from None
    typer.echo(_report(dataset, output, gold_output))


def _report(dataset: Any, output: Path, gold_output: Path | None) -> str:
    import numpy as np

    from stableval.data.files import output_format
    from stableval.data.table import default_credit

    table = dataset.table
    credit = ",".join(f"{c:.12g}" for c in table.credit)
    agents = "agent" if table.n_agents == 1 else "agents"
    lines = [
        f"wrote {output} ({output_format(output)}): {table.n_judgments:,} judgments of {table.n_responses:,} "
        f"responses ({table.n_items:,} items × {table.n_agents} {agents}) by {table.n_raters:,} raters",
        f"levels {' < '.join(table.levels)} (credit {', '.join(f'{c:.4g}' for c in table.credit)})",
    ]
    lines += [f"  note: {note}" for note in table.notes]
    if dataset.gold is not None:
        lines.append(f"gold labels: {len(dataset.gold):,} responses"
                     + (f" → wrote {gold_output}" if gold_output is not None else
                        " (write them with --gold-output FILE)"))
    key = table.response.astype(np.int64) * max(table.n_raters, 1) + table.rater
    repeats = table.n_judgments - int(np.unique(key).size)
    command = f"stableval score {output} --levels {','.join(table.levels)}"
    if not np.allclose(table.credit, default_credit(table.n_levels), rtol=0.0, atol=1e-12):
        command += f" --credit {credit}"
    if repeats:
        command += " --duplicates keep"
        lines.append(f"{repeats:,} judgment(s) repeat a (response, rater) pair (independent repeated judgments)")
    lines.append(f"score it: {command}")
    return "\n".join(lines)
