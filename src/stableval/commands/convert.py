"""``stableval convert NAME PATH -o OUT``: a public dataset (read from PATH, never downloaded), or a tool's export
(NAME an importer), → a ratings file."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from stableval.commands.common import INPUT_FLAGS, bad_input_exits, fail, record_options
from stableval.commands.output import check_output_path, visible
from stableval.data.flags import CLI_FLAGS
from stableval.data.importers.registry import ALWAYS_TAKEN, IMPORTERS
from stableval.datasets.registry import DATASETS, OPTIONS
from stableval.wording import plural

#: Names accepted by NAME (the registry, read without pandas).
DATASET_NAMES: tuple[str, ...] = tuple(DATASETS)
#: The importers NAME accepts too (:data:`~stableval.data.importers.IMPORTERS`).
IMPORTER_NAMES: tuple[str, ...] = tuple(IMPORTERS)
#: mt-bench's vote mappings, as the registry declares them (a test checks them against the loader's).
MAPPING_NAMES: tuple[str, ...] = OPTIONS["mapping"].choices or ()
#: The dataset options an importer takes too, under the same flag.
_SHARED = ("levels", "duplicates")

_HELP = (
    "Convert a public rating dataset, or a tool's export, into a ratings file.\n\n"
    "NAME is a dataset: convabuse (ConvAbuse full CSV), qags (folder with mturk_cnndm/xsum.jsonl), mslr "
    "(data_with_overlap_scores.json), mt-bench (mt_bench_human_votes_available.jsonl), truth-inference (folder "
    "with answer.csv and truth.csv), dawid-skene (the dawid_skene_1979 folder or one of its CSVs); PATH is the "
    "file or its folder; nothing is downloaded. Or NAME is an importer: "
    + ", ".join(f"{name} ({importer.tool})" for name, importer in IMPORTERS.items())
    + "; PATH is the tool's export (see docs/importers.md).\n\n"
    "OUT's suffix picks the format: .csv, .tsv, .jsonl or .parquet. The counts, what was dropped or left out "
    "and why, and the command that scores OUT are printed. See docs/datasets.md for each conversion."
)


def register(app: typer.Typer) -> None:
    app.command(help=_HELP)(convert)


def _option_of(flag_name: str) -> str:
    """The input option (``columns.item``, ``credit``, ...) an input flag's Python name sets."""
    return str(INPUT_FLAGS[flag_name][2]).replace("column:", "columns.")


def _importer_users(option: str) -> list[str]:
    return [name for name, importer in IMPORTERS.items() if option in (*importer.takes, *ALWAYS_TAKEN)]


def _dataset_flags() -> list[tuple[str, Any, Any]]:
    """One flag per loader option of the converted datasets, declared in :data:`OPTIONS` (help panel: the datasets
    that take it, and "importers" when they take it too)."""
    flags = []
    for name in dict.fromkeys(option for info in DATASETS.values() for option in info.options):
        option = OPTIONS[name]
        users = " / ".join([info.name for info in DATASETS.values() if name in info.options]
                           + (["importers"] if name in _SHARED else []))
        help_text = option.help + (f" Allowed: {', '.join(option.choices)}." if option.choices else "")
        flags.append((name, Annotated[option.kind | None, typer.Option(
            option.cli, help=help_text, rich_help_panel=users, show_default=False,
            min=option.ge)], None))
    return flags


def _importer_flags() -> list[tuple[str, Any, Any]]:
    """The input flags an importer takes (the column flags naming its fields, --credit, --default-agent), from
    :data:`~stableval.commands.common.INPUT_FLAGS` (help panel: importers); --levels and --duplicates are the
    datasets' flags."""
    flags = []
    for name, (annotation, _, _) in INPUT_FLAGS.items():
        option = _option_of(name)
        users = _importer_users(option)
        if name in OPTIONS or option in ("pairwise", "importer") or not users:
            continue
        kind, info = typing.get_args(annotation)[:2]
        flags.append((name, Annotated[kind, typer.Option(
            _flag(name), help=f"{info.help} (importers: {', '.join(users)}; see docs/importers.md)",
            rich_help_panel="importers",
            show_default=False)], None))
    return flags


def _flag(name: str) -> str:
    """The command-line flag of a convert option (a dataset option's, or an input flag's)."""
    return OPTIONS[name].cli if name in OPTIONS else CLI_FLAGS[_option_of(name).removeprefix("columns.")]


def _loader_options(values: dict[str, Any]) -> dict[str, Any]:
    """The given flags as loader keywords (dataset options: choices checked, text parsed; usage errors, exit 2)."""
    options: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name not in OPTIONS:
            options[name] = value
            continue
        option = OPTIONS[name]
        if option.choices and value not in option.choices:
            raise typer.BadParameter(f"{value!r}; allowed: {', '.join(option.choices)}", param_hint=option.cli)
        try:
            options[name] = option.parse(value) if option.parse else value
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint=option.cli) from None
    return options


@record_options("options", [*_dataset_flags(), *_importer_flags()], _loader_options)
def convert(
    name: Annotated[str, typer.Argument(help="Dataset: " + ", ".join(DATASET_NAMES) + "; or importer: "
                                        + ", ".join(IMPORTER_NAMES) + ".", show_default=False)],
    path: Annotated[Path, typer.Argument(help="The dataset's file or folder (never downloaded), or the tool's "
                                              "export.", show_default=False)],
    options: dict[str, Any],
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file: .csv, .tsv, .jsonl or .parquet.",
                                         show_default=False)],
    gold_output: Annotated[Path | None, typer.Option(
        "--gold-output", help="truth-inference: also write the gold labels (item, agent, gold) to this file.",
        rich_help_panel="truth-inference")] = None,
) -> None:
    from stableval.data.files import output_format, write_frame
    from stableval.datasets import load_dataset
    from stableval.datasets.gold import write_gold
    from stableval.progress import progress_bar

    key = name.strip().lower().replace("_", "-")
    if key not in DATASETS and key not in IMPORTERS:
        raise typer.BadParameter(f"{name!r} is neither a dataset nor an importer; allowed: "
                                 f"{', '.join([*DATASETS, *IMPORTERS])}", param_hint="NAME")
    try:
        output_format(output)
        if gold_output is not None:
            output_format(gold_output)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--output/--gold-output") from None
    check_output_path(output)
    check_output_path(gold_output, "--gold-output")
    if gold_output is not None and key != "truth-inference":
        raise typer.BadParameter(f"{key} has no gold labels; --gold-output is for truth-inference",
                                 param_hint="--gold-output")
    if key in IMPORTERS:
        _convert_export(key, path, options, output)
        return
    takes = DATASETS[key].options
    for option in options:
        if option not in takes:
            users = [n for n, info in DATASETS.items() if option in info.options]
            if option not in OPTIONS or option in _SHARED:
                users.append(f"the importers ({', '.join(IMPORTER_NAMES)})")
            raise typer.BadParameter(f"{key} takes no {_flag(option)}; it is for {', '.join(users)}",
                                     param_hint=_flag(option))
    with bad_input_exits():
        try:
            with progress_bar(f"converting {key}", total=2) as bar:
                dataset = load_dataset(key, path, **options)
                bar.advance()
                table = dataset.table
                levels, _ = _suggested_levels(table, dataset.gold)
                scale = {"column": "label", "levels": [table.levels[c] for c in levels],
                         "credit": [float(table.credit[c]) for c in levels]}
                output.parent.mkdir(parents=True, exist_ok=True)
                write_frame(table.to_frame(), output, scale=scale)
                if gold_output is not None and dataset.gold is not None:
                    gold_output.parent.mkdir(parents=True, exist_ok=True)
                    write_gold(dataset.gold, gold_output)
                bar.advance()
        except OSError as error:
            raise fail(f"cannot write: {error}") from None
    typer.echo(visible(_report(dataset, output, gold_output)))


def _convert_export(key: str, path: Path, options: dict[str, Any], output: Path) -> None:
    """``convert`` of a tool's export: read it with importer ``key`` (the given flags are its input options), write
    the judgments (or the pairwise votes, which ``stableval pairwise`` reads too) with their rater kinds, and print
    what was read and left out."""
    from stableval.data import InputOptions
    from stableval.data.files import write_frame
    from stableval.data.loader import load_with_frame
    from stableval.datasets._common import Dataset

    for option in options:
        if option in OPTIONS and option not in _SHARED:
            users = [n for n, info in DATASETS.items() if option in info.options]
            raise typer.BadParameter(f"{key} takes no {_flag(option)}; it is for {', '.join(users)}",
                                     param_hint=_flag(option))
    columns = {_option_of(n).removeprefix("columns."): v for n, v in options.items()
               if n not in OPTIONS and _option_of(n).startswith("columns.")}
    inputs = InputOptions(importer=key, levels=options.get("levels"), credit=options.get("credit"),
                          duplicates=options.get("duplicates", "error"), default_agent=options.get("default_agent"),
                          columns=columns or None)
    with bad_input_exits():
        try:
            loaded, frame, _ = load_with_frame(path, inputs)
            kinds = (dict(zip(frame["rater"], frame["rater_kind"], strict=True)) if "rater_kind" in frame.columns
                     else {})
            if loaded.votes is not None:
                written = loaded.votes.frame.copy()
                scale = None
            else:
                table = loaded.table
                written = table.to_frame()
                scale = {"column": "label", "levels": list(table.levels), "credit": [float(c) for c in table.credit]}
            if kinds:
                written["rater_kind"] = written["rater"].map(kinds)
            output.parent.mkdir(parents=True, exist_ok=True)
            write_frame(written, output, scale=scale)
        except OSError as error:
            raise fail(f"cannot write: {error}") from None
    if loaded.votes is None:
        report = _report(Dataset(name=key, table=loaded.table, gold=None, description=""), output, None)
    else:
        report = _votes_report(loaded.votes, output)
    if kinds:  # before the closing "score it" line
        head, _, last = report.rpartition("\n")
        report = (f"{head}\nrater kinds: {', '.join(sorted(set(kinds.values())))} (column rater_kind: --raters "
                  f"selects them)\n{last}")
    typer.echo(visible(report))


def _votes_report(votes: Any, output: Path) -> str:
    from stableval.data.files import output_format

    frame = votes.frame
    agents = len(set(frame["agent_a"]) | set(frame["agent_b"]))
    lines = [f"wrote {output} ({output_format(output)}): {plural(votes.n_votes, 'pairwise vote')} on "
             f"{plural(frame['item'].nunique(), 'item')} between {plural(agents, 'agent')} by "
             f"{plural(frame['rater'].nunique(), 'rater')}"]
    lines += [f"  note: {note}" for note in votes.notes]
    repeats = " --duplicates keep" if any("kept" in note and "repeated" in note for note in votes.notes) else ""
    lines.append(f"score it: stableval score {output}{repeats} (or the Bradley–Terry leaderboard: stableval "
                 f"pairwise {output}{repeats})")
    return "\n".join(lines)


def _report(dataset: Any, output: Path, gold_output: Path | None) -> str:
    import re

    import numpy as np

    from stableval.data.files import output_format
    from stableval.data.table import default_credit

    table = dataset.table
    lines = [
        f"wrote {output} ({output_format(output)}): {plural(table.n_judgments, 'judgment')} of "
        f"{plural(table.n_responses, 'response')} ({plural(table.n_items, 'item')} × "
        f"{plural(table.n_agents, 'agent')}) by {plural(table.n_raters, 'rater')}",
        f"levels {' < '.join(table.levels)} (credit {', '.join(f'{c:.4g}' for c in table.credit)})",
    ]
    lines += [f"  note: {note}" for note in table.notes]
    if dataset.gold is not None:
        lines.append(f"gold labels: {len(dataset.gold):,} responses"
                     + (f" → wrote {gold_output}" if gold_output is not None else
                        " (write them with --gold-output FILE)"))
    key = table.response.astype(np.int64) * max(table.n_raters, 1) + table.rater
    repeats = table.n_judgments - int(np.unique(key).size)
    levels, level_lines = _suggested_levels(table, dataset.gold)
    lines += level_lines
    command = f"stableval score {output} --levels {','.join(table.levels[c] for c in levels)}"
    if not np.allclose(table.credit, default_credit(table.n_levels), rtol=0.0, atol=1e-12):
        credit = ",".join(f"{c:.12g}" for c in table.credit[levels])
        command += f" --credit {credit}"
    if repeats:
        command += " --duplicates keep"
        lines.append(f"{repeats:,} judgment(s) repeat a (response, rater) pair (independent repeated judgments)")
    kept = {"parquet": "the Parquet file keeps these levels and credit in its metadata",
            "jsonl": "the JSON Lines file keeps these levels and credit in its first line (the scale record)"}
    if output_format(output) in kept:  # the file carries its levels and credit
        command = command.replace(f" --levels {','.join(table.levels[c] for c in levels)}", "")
        command = re.sub(r" --credit \S+", "", command)
        lines.append(f"{kept[output_format(output)]}: score it without --levels")
    lines.append(f"score it: {command}")
    return "\n".join(lines)


def _suggested_levels(table: Any, gold: Any) -> tuple[Any, list[str]]:
    """The level codes to pass to ``score --levels``, and what to tell the user about them.

    Named levels (declared by the loader or the user) are kept, unused ones too: they are the scale. Levels that
    are the integer codes ``0..K-1`` a loader inferred from the largest label are cut to the labels that occur
    (in the judgments or the gold labels), so 1-based labels do not gain a phantom level 0 (which would also shift
    the default credit); integers skipped inside that range are named, since they may be levels nobody used.
    """
    import numpy as np

    k = table.n_levels
    every = np.arange(k)
    if table.levels != tuple(str(c) for c in range(k)):
        return every, []
    used = np.zeros(k, dtype=bool)
    used[np.unique(table.label)] = True
    if gold:
        known = {name: code for code, name in enumerate(table.levels)}
        used[[known[str(v)] for v in gold.values() if str(v) in known]] = True
    present = every[used]
    if present.size < 2 or used.all():
        return every, []
    lines = []
    outside = [str(c) for c in every[~used] if c < present[0] or c > present[-1]]
    if outside:
        one = len(outside) == 1
        lines.append(f"labels run from {present[0]} to {present[-1]}: level{'' if one else 's'} "
                     f"{', '.join(outside)} {'occurs' if one else 'occur'} in no judgment or gold label, so the "
                     f"suggested --levels omit {'it' if one else 'them'} (a level of its own would also shift the "
                     "default credit)")
    inside = [str(c) for c in every[~used] if present[0] < c < present[-1]]
    if inside:
        one = len(inside) == 1
        full = ",".join(str(c) for c in range(present[0], present[-1] + 1))
        lines.append(f"integer labels skip {', '.join(inside)} (no judgment or gold label has "
                     f"{'it' if one else 'them'}); if {'it is a level' if one else 'they are levels'} of the scale, "
                     f"score with --levels {full}")
    return present, lines
