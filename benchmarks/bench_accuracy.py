"""Accuracy against gold of every aggregation method and setting on every public gold set, so defaults follow evidence.

What it measures, per (dataset, setting): accuracy of the most probable level against gold (ties split, as
:func:`stableval.datasets.gold_accuracy` scores it), expected accuracy (mean probability given to the gold level),
the final marginal log-likelihood and objective (log posterior) of the fit, EM iterations, convergence, the wall
time of ``.fit(table)`` and, for multi-start fits, which start won.

Datasets: the truth-inference sets of Zheng et al. (2017) in ``DATA/zheng2017_truth_inference`` (seven scored
against gold; ``f201_Emotion_FULL`` is a continuous -100..100 scale and is skipped with the reason printed), plus
two convergence cases without gold: MSLR (``DATA/mslr``, 2 raters) and the bundled MT-Bench votes. The summary
table has one row per setting and one column per gold set (accuracy), the mean over the sets, and, per setting,
on how many sets it is within 0.005 of the better of MV and DS and its worst gap. See docs/accuracy.md.

Adding a setting is one line in ``SETTINGS``; a factory that raises ``TypeError`` or ``ValueError`` (an option
that does not exist yet) is reported as "skipped: <reason>" instead of failing the run.

Run:  python benchmarks/bench_accuracy.py [--data ../shared/data] [--only S_Adult,S_Dog] [--out accuracy.csv]
          [--markdown docs/accuracy_table.md] [--settings "STABLEVAL,STABLEVAL init=paper"]
          [--duplicates first|last|keep] [--repeat 1]      (about 25 s on 2 cores with --repeat 1)
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import stableval
from stableval import DawidSkene, MajorityVote, Stableval
from stableval.aggregate import GLAD, MACE, Aggregator
from stableval.aggregate.ordinal import OrdinalRaters
from stableval.data.table import AnnotationTable
from stableval.datasets import gold_accuracy, load_dataset

Factory = Callable[[], Aggregator]

#: (label, factory): every method and setting measured. One line per setting; the first two are the references.
SETTINGS: list[tuple[str, Factory]] = [
    ("MV", lambda: MajorityVote()),
    ("DS", lambda: DawidSkene()),
    ("MV ties=lowest", lambda: MajorityVote(ties="lowest")),
    ("MV ties=highest", lambda: MajorityVote(ties="highest")),
    ("MV ties=random", lambda: MajorityVote(ties="random", seed=0)),
    ("MV ties=first", lambda: MajorityVote(ties="first")),
    ("DS acceleration=none", lambda: DawidSkene(acceleration="none")),
    ("STABLEVAL", lambda: Stableval()),
    ("STABLEVAL init=paper", lambda: Stableval(init="paper")),
    ("STABLEVAL init=paper acceleration=none", lambda: Stableval(init="paper", acceleration="none")),
    ("STABLEVAL init=paper alpha_pi=1.01", lambda: Stableval(init="paper", alpha_pi=1.01)),  # default before #12
    ("STABLEVAL init=soft", lambda: Stableval(init="soft")),
    ("STABLEVAL init=ml", lambda: Stableval(init="ml")),
    ("STABLEVAL n_starts=0", lambda: Stableval(n_starts=0)),
    ("STABLEVAL n_starts=8", lambda: Stableval(n_starts=8)),
    ("STABLEVAL alpha_pi=1.01", lambda: Stableval(alpha_pi=1.01)),
    ("STABLEVAL alpha_pi=2", lambda: Stableval(alpha_pi=2)),
    ("STABLEVAL alpha_pi=auto", lambda: Stableval(alpha_pi="auto")),
    ("STABLEVAL alpha_pi=pooled", lambda: Stableval(alpha_pi="pooled")),
    ("GLAD", lambda: GLAD()),  # Whitehill et al. 2009, crowd-kit's settings (issue 13)
    ("MACE", lambda: MACE()),  # Hovy et al. 2013, variational Bayes, 10 restarts (issue 13)
    ("ORDINAL", lambda: OrdinalRaters()),  # issue 13: confusion rows shrunk towards ordered-probit rows (code order)
    ("ORDINAL strength=inf", lambda: OrdinalRaters(strength=float("inf"))),  # the purely parametric ordinal model
    ("ONECOIN", lambda: stableval.aggregate.OneCoinDawidSkene()),  # one accuracy per rater (issue 13)
    ("WAWA", lambda: stableval.aggregate.Wawa()),  # vote weighted by agreement with the majority (issue 13)
    ("ZBS", lambda: stableval.aggregate.ZeroBasedSkill()),  # zero-based skill, crowd-kit's settings (issue 13)
]
#: the settings every other is compared against: max(MV, DS) per dataset
REFERENCES = ("MV", "DS")
#: the row of the library's default, whose goal (issue 12) the summary checks
DEFAULT = "STABLEVAL"
#: "within" margin of the goal (issue 12): the default STABLEVAL within 0.005 of max(MV, DS) on every set
MARGIN = 0.005

TRUTH_INFERENCE = "zheng2017_truth_inference"
F201_REASON = ("numeric emotion scores, not categories (six 0..100 scales and one -100..100 valence scale, 94 "
               "distinct answer values; gold on the same scale, -98..95, 0 for 230 of 700 tasks). Zheng et al. (2017) "
               "score it with MAE/RMSE of numeric methods; a Dawid-Skene-type confusion matrix over ~200 levels from "
               "10 answers per task cannot be estimated, and any binning would be our invention")


@dataclass(frozen=True)
class DataSpec:
    """One dataset of the benchmark: its short name (table columns), how to load it, and why it is skipped."""

    name: str
    title: str
    loader: Callable[[Path, str], tuple[AnnotationTable, Any]]
    skip: str | None = None


def truth_inference(folder: str) -> Callable[[Path, str], tuple[AnnotationTable, Any]]:
    """Loader of one truth-inference folder (with its gold) under ``DATA/zheng2017_truth_inference``."""
    def load(data: Path, duplicates: str) -> tuple[AnnotationTable, Any]:
        dataset = load_dataset("truth-inference", data / TRUTH_INFERENCE / folder, duplicates=duplicates)
        return dataset.table, dataset.gold
    return load


def load_mslr(data: Path, duplicates: str) -> tuple[AnnotationTable, Any]:
    """MSLR 2022 facet ratings (2 annotators, no gold)."""
    return load_dataset("mslr", data / "mslr").table, None


def load_mt_bench(data: Path, duplicates: str) -> tuple[AnnotationTable, Any]:
    """The bundled MT-Bench turn-1 expert votes (no gold; repeated votes kept, as ``stableval demo`` reads them)."""
    return stableval.read_any(stableval.example_path(), duplicates="keep"), None


DATASETS: list[DataSpec] = [
    DataSpec("D_Duck", "d_Duck_Identification", truth_inference("d_Duck_Identification")),
    DataSpec("D_Product", "d_jn-product", truth_inference("d_jn-product")),
    DataSpec("D_PosSent", "d_sentiment", truth_inference("d_sentiment")),
    DataSpec("S_Dog", "s4_Dog_data", truth_inference("s4_Dog_data")),
    DataSpec("S_Face", "s4_Face_Sentiment_Identification", truth_inference("s4_Face_Sentiment_Identification")),
    DataSpec("S_Rel", "s4_Relevance", truth_inference("s4_Relevance")),
    DataSpec("S_Adult", "s5_AdultContent", truth_inference("s5_AdultContent")),
    DataSpec("N_Emotion", "f201_Emotion_FULL", truth_inference("f201_Emotion_FULL"), skip=F201_REASON),
    DataSpec("MSLR", "mslr", load_mslr),
    DataSpec("MT-Bench", "mt_bench_turn1_votes.csv, bundled", load_mt_bench),
]

COLUMNS = ["dataset", "folder", "setting", "status", "reason", "judgments", "responses", "raters", "levels",
           "gold_responses", "accuracy", "expected_accuracy", "gap_to_best_mv_ds", "log_likelihood", "objective",
           "n_iter", "converged", "seconds", "start", "alpha_pi", "starts"]


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build(factory: Factory) -> tuple[Aggregator | None, str]:
    """The estimator, or ``None`` and why (an option that does not exist yet)."""
    try:
        return factory(), ""
    except (TypeError, ValueError) as error:
        return None, f"{type(error).__name__}: {error}"


def describe_starts(model: Aggregator) -> tuple[str, str]:
    """(winning start, every start as ``name=objective/iterations``) for a fit that records ``starts_``."""
    starts = getattr(model, "starts_", None)
    if not starts or len(starts) < 2:
        return "", ""
    winner = str(getattr(model, "start_", ""))
    parts = []
    for record in starts:
        mark = "" if record.get("admissible", True) else " (inadmissible)"
        parts.append(f"{record.get('start')}={record.get('objective', float('nan')):.2f}/"
                     f"{record.get('n_iter', '?')}{'' if record.get('converged', True) else '*'}{mark}")
    return winner, "; ".join(parts)


def fit_once(factory: Factory, table: AnnotationTable, repeat: int) -> tuple[Aggregator, float]:
    """A fitted estimator and the fastest of ``repeat`` fit times (seconds)."""
    best = math.inf
    model = factory()
    for _ in range(repeat):
        model = factory()
        start = time.perf_counter()
        model.fit(table)
        best = min(best, time.perf_counter() - start)
    return model, best


def measure(spec: DataSpec, settings: Sequence[tuple[str, Factory]], data: Path, duplicates: str,
            repeat: int) -> list[dict[str, Any]]:
    """One record per setting on one dataset."""
    base = {"dataset": spec.name, "folder": spec.title}
    if spec.skip is not None:
        try:  # say what the loader does with it, beside why it is skipped
            spec.loader(data, duplicates)
            loader_says = "the loader reads it as integer levels"
        except Exception as error:  # reported, not raised
            loader_says = f"the loader refuses it ({str(error).splitlines()[0]})"
        reason = f"{spec.skip}; {loader_says}"
        progress(f"{spec.name}: skipped: {reason}")
        return [{**base, "setting": "(all)", "status": "skipped", "reason": reason}]
    try:
        t0 = time.perf_counter()
        table, gold = spec.loader(data, duplicates)
    except (OSError, stableval.InputError) as error:
        reason = f"cannot load: {str(error).splitlines()[0]}"
        progress(f"{spec.name}: skipped: {reason}")
        return [{**base, "setting": "(all)", "status": "skipped", "reason": reason}]
    progress(f"{spec.name}: {table.n_judgments:,} judgments, {table.n_responses:,} responses, {table.n_raters:,} "
             f"raters, {table.n_levels} levels, gold for {len(gold or ()):,} (loaded in "
             f"{time.perf_counter() - t0:.2f} s)")
    shape = {"judgments": table.n_judgments, "responses": table.n_responses, "raters": table.n_raters,
             "levels": table.n_levels}
    records = []
    for label, factory in settings:
        row: dict[str, Any] = {**base, "setting": label, **shape}
        model, why = build(factory)
        if model is None:
            records.append({**row, "status": "skipped", "reason": why})
            continue
        try:
            fitted, seconds = fit_once(factory, table, repeat)
        except Exception as error:  # one failing setting must not hide the others
            reason = f"{type(error).__name__}: {error}"
            progress(f"  {label:<42} FAILED: {reason}")
            records.append({**row, "status": "failed", "reason": reason})
            continue
        summary = fitted.fit_summary()
        winner, starts = describe_starts(fitted)
        row.update(status="ok", reason="", seconds=seconds, n_iter=summary.get("n_iter"),
                   converged=summary.get("converged"), log_likelihood=summary.get("log_likelihood"),
                   objective=summary.get("objective"), start=winner, starts=starts,
                   alpha_pi=summary.get("alpha_pi", getattr(fitted, "alpha_pi_", None)))
        if gold:
            scored = gold_accuracy(table, {label: fitted}, gold)
            overall = scored.loc[scored["agent"] == "(all)"].iloc[0]
            row.update(gold_responses=int(overall["gold_responses"]), accuracy=float(overall["accuracy"]),
                       expected_accuracy=float(overall["expected_accuracy"]))
        records.append(row)
        shown = f"accuracy {row['accuracy']:.4f}  " if gold else ""
        iters = "" if row["n_iter"] is None else f"  {row['n_iter']} it{'' if row['converged'] else ' (cap)'}"
        progress(f"  {label:<42} {shown}{seconds:7.2f} s{iters}{f'  start {winner}' if winner else ''}")
    return records


def add_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """``gap_to_best_mv_ds``: accuracy minus max(MV, DS) on the same dataset (negative = worse)."""
    ok = frame.loc[frame["status"] == "ok"]
    best = ok.loc[ok["setting"].isin(REFERENCES)].groupby("dataset")["accuracy"].max()
    frame["gap_to_best_mv_ds"] = frame["accuracy"] - frame["dataset"].map(best)
    return frame


# ---------------------------------------------------------------------------------------------------------------
# tables


def fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "NO"
    if isinstance(value, float | np.floating):
        return f"{value:,.{digits}f}"
    return str(value)


def fmt_int(value: Any) -> str:
    return "" if value is None or not np.isfinite(value) else f"{int(value):,}"


def not_run(frame: pd.DataFrame, dataset: str) -> list[str]:
    """The settings of one dataset that did not run, with why."""
    rows = frame.loc[(frame["dataset"] == dataset) & (frame["status"] != "ok") & (frame["setting"] != "(all)")]
    return [f"{r['setting']}: {r['status']}: {r['reason']}" for _, r in rows.iterrows()]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A fixed-width table (first column left-aligned, the others right-aligned)."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]
    lines = []
    for n, cells in enumerate([header, *rows]):
        lines.append("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in
                                                              range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def value(frame: pd.DataFrame, dataset: str, setting: str, column: str) -> Any:
    hit = frame.loc[(frame["dataset"] == dataset) & (frame["setting"] == setting)]
    return None if hit.empty else hit.iloc[0][column]


def dataset_table(frame: pd.DataFrame, dataset: str) -> tuple[list[str], list[list[str]]]:
    """One dataset: every setting's accuracy, likelihood, iterations, time and winning start."""
    rows = frame.loc[frame["dataset"] == dataset]
    has_gold = rows["accuracy"].notna().any()
    header = ["setting", *(["accuracy", "expected acc.", "vs max(MV,DS)"] if has_gold else []),
              "log-likelihood", "objective", "iterations", "converged", "seconds", "start"]
    out = []
    for _, r in rows.iterrows():
        if r["status"] != "ok":
            continue
        gold_cells = [fmt(r["accuracy"], 4), fmt(r["expected_accuracy"], 4),
                      f"{r['gap_to_best_mv_ds']:+.4f}"] if has_gold else []
        out.append([r["setting"], *gold_cells, fmt(r["log_likelihood"], 2), fmt(r["objective"], 2),
                    fmt_int(r["n_iter"]), fmt(r["converged"]) if fmt_int(r["n_iter"]) else "",
                    f"{r['seconds']:.3f}", r["start"] or ""])
    return header, out


def summary_rows(frame: pd.DataFrame) -> tuple[list[str], list[list[str]], list[str], list[str]]:
    """The accuracy summary (rows = settings, columns = gold sets), the reference row, and one line per setting."""
    gold_sets = [d for d in frame["dataset"].unique() if frame.loc[frame["dataset"] == d, "accuracy"].notna().any()]
    header = ["setting", *gold_sets, "mean accuracy", f"within {MARGIN} of max(MV,DS)", "worst gap"]
    rows, lines = [], []
    means: dict[str, float] = {}
    settings = [s for s in frame["setting"].unique() if s != "(all)"]
    best = {d: max((value(frame, d, s, "accuracy") for s in REFERENCES
                    if value(frame, d, s, "accuracy") is not None), default=math.nan) for d in gold_sets}
    for setting in settings:
        accuracies = [value(frame, d, setting, "accuracy") for d in gold_sets]
        status = [value(frame, d, setting, "status") for d in gold_sets]
        if all(a is None or not np.isfinite(a) for a in accuracies):
            reason = next((value(frame, d, setting, "reason") for d in gold_sets
                           if value(frame, d, setting, "reason")), "")
            kind = next((s for s in status if s and s != "ok"), "skipped")
            rows.append([setting, *[kind] * len(gold_sets), "", "", ""])
            lines.append(f"{setting}: {kind}: {reason}")
            continue
        gaps = {d: a - best[d] for d, a in zip(gold_sets, accuracies, strict=True)
                if a is not None and np.isfinite(a)}
        within = sum(g >= -MARGIN for g in gaps.values())
        worst = min(gaps, key=lambda d: gaps[d])
        mean = float(np.mean(list(map(float, [a for a in accuracies if a is not None and np.isfinite(a)]))))
        partial = "" if len(gaps) == len(gold_sets) else f" (mean of {len(gaps)})"
        rows.append([setting, *[fmt(a, 4) if a is not None and np.isfinite(a) else s or ""
                                for a, s in zip(accuracies, status, strict=True)],
                     fmt(mean, 4) + partial, f"{within}/{len(gaps)}", f"{gaps[worst]:+.4f}"])
        lines.append(f"{setting}: within {MARGIN} of max(MV, DS) on {within} of {len(gaps)} sets; worst gap "
                     f"{gaps[worst]:+.4f} ({worst}); mean accuracy {mean:.4f}")
        if not partial:
            means[setting] = mean
    reference = ["max(MV, DS)", *[fmt(best[d], 4) for d in gold_sets],
                 fmt(float(np.mean([best[d] for d in gold_sets])), 4) if gold_sets else "", "", ""]
    if DEFAULT in means and means:
        ranked = sorted(means, key=lambda s: (-round(means[s], 12), s != DEFAULT))
        top = ranked[0]
        within_sets, worst_gap = next(r[-2:] for r in rows if r[0] == DEFAULT)
        done, of = within_sets.split("/")
        lines.append(f"goal (issue 12), default {DEFAULT} within {MARGIN} of max(MV, DS) on every set: "
                     f"{'met' if done == of else 'NOT met'} ({within_sets} sets, worst gap {worst_gap})")
        lines.append(f"goal (issue 12), default {DEFAULT} has the highest mean accuracy: "
                     + ("met" if means[DEFAULT] >= means[top] - 1e-12 else "NOT met")
                     + f" ({DEFAULT} {means[DEFAULT]:.5f}, rank "
                     f"{1 + sum(m > means[DEFAULT] + 1e-12 for m in means.values())} of {len(ranked)}; "
                     f"highest {top} {means[top]:.5f}; "
                     + ", ".join(f"{r} {means[r]:.5f}" for r in REFERENCES if r in means) + ")")
    return header, rows, reference, lines


def convergence_table(frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Rows = iterative settings, columns = every dataset: iterations (``*`` = stopped at the cap), seconds."""
    datasets = [d for d in frame["dataset"].unique()
                if (frame.loc[frame["dataset"] == d, "status"] == "ok").any()]
    header = ["setting", *datasets]
    rows = []
    for setting in [s for s in frame["setting"].unique() if s != "(all)"]:
        if not any(fmt_int(value(frame, d, setting, "n_iter")) for d in datasets):
            continue
        cells = []
        for d in datasets:
            n, conv, sec = (value(frame, d, setting, c) for c in ("n_iter", "converged", "seconds"))
            cells.append(f"{fmt_int(n)}{'' if conv else '*'} / {sec:.2f}s" if fmt_int(n) else "")
        rows.append([setting, *cells])
    return header, rows


# ---------------------------------------------------------------------------------------------------------------
# provenance


def provenance() -> dict[str, str]:
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    commit = git("rev-parse", "--short", "HEAD")
    dirty = git("diff", "--name-only", "HEAD", "--", "src").splitlines()
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": (commit + (f" with uncommitted changes to {', '.join(dirty)}" if dirty else "")) or "unknown",
            "machine": f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}",
            "stableval": str(getattr(stableval, "__version__", "?"))}


# ---------------------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data",
                        help="folder holding zheng2017_truth_inference/ and mslr/ (default ../shared/data)")
    parser.add_argument("--only", default="", help="comma-separated dataset names (short or folder names)")
    parser.add_argument("--settings", default="", help="comma-separated setting labels (default: all)")
    parser.add_argument("--out", type=Path, help="write the long table (one row per dataset and setting) as CSV")
    parser.add_argument("--markdown", type=Path, help="write the tables as Markdown")
    parser.add_argument("--duplicates", default="first", choices=("first", "last", "keep"),
                        help="truth-inference: one worker answering one question twice (S_Rel, S_Adult)")
    parser.add_argument("--repeat", type=int, default=1, help="fit each setting this many times, keep the fastest")
    args = parser.parse_args(argv)

    specs = DATASETS
    if args.only:
        wanted = {w.strip().lower() for w in args.only.split(",") if w.strip()}
        specs = [s for s in DATASETS if s.name.lower() in wanted or s.title.split(" ")[0].lower() in wanted]
        known = {s.name.lower() for s in DATASETS} | {s.title.split(" ")[0].lower() for s in DATASETS}
        if unknown := sorted(wanted - known):
            parser.error(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(s.name for s in DATASETS)}")
    settings = SETTINGS
    if args.settings:
        chosen = [w.strip() for w in args.settings.split(",") if w.strip()]
        labels = [label for label, _ in SETTINGS]
        if unknown := [c for c in chosen if c not in labels]:
            parser.error(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(labels)}")
        settings = [s for s in SETTINGS if s[0] in chosen or s[0] in REFERENCES]
    for label, factory in settings:
        if build(factory)[0] is None:
            progress(f"{label}: skipped: {build(factory)[1]}")

    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    for n, spec in enumerate(specs, 1):
        progress(f"[{n}/{len(specs)}] {spec.title}")
        records += measure(spec, settings, args.data, args.duplicates, max(1, args.repeat))
    total = time.perf_counter() - started
    frame = add_gaps(pd.DataFrame.from_records(records).reindex(columns=COLUMNS))
    info = provenance()

    blocks_text, blocks_md = [], []
    intro = (f"{info['date']}; commit {info['commit']}; stableval {info['stableval']}; {info['machine']}; "
             f"truth-inference duplicates={args.duplicates!r}; fit time = fastest of {max(1, args.repeat)}; "
             f"whole run {total:.0f} s")
    blocks_text.append(intro)
    blocks_md.append(f"_{intro}._")
    for spec in specs:
        rows = frame.loc[frame["dataset"] == spec.name]
        if (rows["status"] == "ok").any():
            header, body = dataset_table(frame, spec.name)
            shape = rows.iloc[0]
            title = (f"{spec.name} ({spec.title}): {int(shape['judgments']):,} judgments, "
                     f"{int(shape['responses']):,} responses, {int(shape['raters']):,} raters, "
                     f"{int(shape['levels'])} levels"
                     + (f", gold for {int(rows['gold_responses'].max()):,}" if rows["accuracy"].notna().any()
                        else ", no gold"))
        else:
            title, header, body = f"{spec.name} ({spec.title})", [], []
        skipped = rows.loc[rows["setting"] == "(all)", "reason"]
        missing = not_run(frame, spec.name)
        blocks_text.append(f"== {title}\n" + (f"skipped: {skipped.iloc[0]}" if len(skipped)
                                              else text_table(header, body))
                           + "".join(f"\n{line}" for line in missing))
        blocks_md.append(f"### {title}\n\n" + (f"Skipped: {skipped.iloc[0]}." if len(skipped)
                                               else markdown_table(header, body))
                         + ("\n\n" if missing else "") + "\n".join(f"- {line}" for line in missing))
    header, rows_, reference, lines = summary_rows(frame)
    if len(header) > 4:
        blocks_text.append("== Summary: accuracy against gold (argmax, ties split)\n"
                           + text_table(header, [*rows_, reference]) + "\n\n" + "\n".join(lines))
        md_rows = [[f"**{r[0]}**" if r[0] == "STABLEVAL" else r[0], *r[1:]] for r in rows_]
        blocks_md.insert(1, "### Summary: accuracy against gold (most probable level, ties split)\n\n"
                         + markdown_table(header, [*md_rows, [f"_{reference[0]}_", *reference[1:]]])
                         + "\n\n" + "\n".join(f"- {line}" for line in lines))
    conv_header, conv_rows = convergence_table(frame)
    if conv_rows:
        blocks_text.append("== Iterations (* = stopped at max_iter) / fit seconds\n"
                           + text_table(conv_header, conv_rows))
        blocks_md.insert(2, "### Iterations (`*` = stopped at `max_iter` unconverged) / fit seconds\n\n"
                         + markdown_table(conv_header, conv_rows))
    print("\n\n".join(blocks_text))
    if args.out:
        frame.to_csv(args.out, index=False)
        progress(f"wrote {args.out}")
    if args.markdown:
        args.markdown.write_text("\n\n".join(blocks_md) + "\n")
        progress(f"wrote {args.markdown}")
    progress(f"done in {total:.1f} s")
    return 1 if (frame["status"] == "failed").any() else 0


if __name__ == "__main__":
    sys.exit(main())
