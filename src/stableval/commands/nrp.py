"""``stableval nrp``: evaluate generated answers by ranking them among human-judged documents (NRP).

Flags that several subcommands share are declared once and reach the command as one record each
(:func:`~stableval.commands.common.record_options`):

* :func:`ranker_options` → ``options: RankerOptions``: how to read the collection and run the rankers
  (``evaluate-rankers``, ``score``, ``validate``, ``study``), with one flag per option a ranker declares in the
  ranker registry (:data:`RANKER_FLAGS`, e.g. duoT5's ``--duo-k``); all listed in :data:`SHARED_FLAGS`;
* :func:`nrp_options` → ``nrp: NRPSettings`` (``--n``, ``--ties``, ``--bootstrap``, ``--confidence``) and
  :func:`answer_checks` → ``checks: AnswerChecks`` (``--exclude-copies``, ``--skip-unknown-questions``) for
  ``score``, ``compare`` and ``validate``;
* :func:`grade_options` → ``grades: GradeSettings`` (``--grade-column``, ``--correct``, ``--answer-grades``) for
  ``validate`` and ``score --graded``.

The ``--ranker`` help is written from the ranker registry.

>>> options = RankerOptions(batch_size=8, ranker_settings={"duot5": {"k": 5}})
>>> options.pool, options.missing_text, options.batch_size, options.ranker_settings["duot5"]
('merged', 'error', 8, {'k': 5})
>>> RANKER_FLAGS["duot5_k"][1].cli
'--duo-k'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from stableval._options import Option
from stableval.commands import Group
from stableval.commands.common import (
    Output,
    SeedOpt,
    bad_input_exits,
    bootstrap_flag,
    fail,
    flag_spelling,
    output_options,
    record_options,
)
from stableval.commands.output import (
    Appended,
    TableResult as TableResult,
    check_output_folder,
    check_output_path,
    save_plot,
    size_text as size_text,
    write_csv,
)
from stableval.commands.studies import RankingMethodName, RankingParamOpt, ranking_params
from stableval.nrp.rankers import RANKERS, REGISTRY
from stableval.wording import plural

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from stableval.nrp.choose import RankerChoice
    from stableval.nrp.rankers import Ranker
    from stableval.nrp.testcollection import TestCollection

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(help="NRP: score generated answers by their rank among human-judged documents "
                       "(Heineking et al. 2024); choose the ranker; check agreement with experts.",
                  no_args_is_help=True, cls=Group)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="nrp")


CollectionArg = Annotated[Path, typer.Argument(
    help="Test collection directory: queries.csv (qid, query) or topics.txt, documents.csv (docno, text), "
         "qrels.txt / qrels-<dimension>.txt (TREC) or judgments.csv (qid, docno, grade[, dimension]); "
         "or the liveqa_medical directory.", show_default=False)]
PoolOpt = Annotated[str, typer.Option("--pool", help="LiveQA only: trec, medquad, mediqa, several "
                                      "(trec,medquad) or merged (all three).",
                                      rich_help_panel="Input")]
QueryFieldOpt = Annotated[str, typer.Option("--query-field", help="LiveQA only: question text used as query: "
                                            "paraphrase (NIST), summary (NLM) or original.", rich_help_panel="Input")]
MissingTextOpt = Annotated[bool, typer.Option("--drop-missing-text", help="Drop judgments of documents without "
                                              "text (counted in the notes) instead of failing.",
                                              rich_help_panel="Input")]
GradeMapOpt = Annotated[Path | None, typer.Option(
    "--grade-map", help="Table dimension, grade, gain recoding grades to gains per dimension; gain 'unjudged' "
                        "drops those judgments (e.g. CLEF credibility 3). Default: the collection's grade-map.csv.",
    rich_help_panel="Input")]
ModelPathOpt = Annotated[Path | None, typer.Option(
    "--model-path", help="Local model directory (save_pretrained layout) of the neural ranker ("
                         f"{', '.join(name for name, spec in REGISTRY.items() if spec.extra == 'neural')}; the "
                         "bi-encoder's is bundled). Nothing is downloaded.", rich_help_panel="Ranker")]
DeviceOpt = Annotated[str, typer.Option("--device", help="Torch device for neural rankers: auto (cuda when a GPU "
                                        "is there, else cpu), cpu, cuda, cuda:1 ...", rich_help_panel="Ranker")]
PrecisionOpt = Annotated[str, typer.Option("--precision", help="Neural rankers: auto (half-precision autocast on "
                                           "CUDA: fp16, bf16 for T5; fp32 on a CPU), or fp32, bf16, fp16 "
                                           "everywhere.", rich_help_panel="Ranker")]
BatchOpt = Annotated[int, typer.Option("--batch-size", min=1, help="Texts per forward pass (neural rankers).",
                                       rich_help_panel="Ranker")]
MaxLenOpt = Annotated[int | None, typer.Option("--max-length", min=8, help="Truncate (query, text) to this many "
                                               "tokens (neural rankers). Default: the model's training length "
                                               "(256 for the MiniLM bi-encoder, 512 otherwise).",
                                               rich_help_panel="Ranker")]
CacheOpt = Annotated[Path | None, typer.Option("--cache", help="SQLite file caching scores by ranker and text "
                                               "(neural rankers), reused across runs.", rich_help_panel="Ranker")]


def _typer_flag(option: Option, ranker: str) -> Any:
    """A ranker's declared option as a flag of the Ranker panel (help ``ranker: help``; inclusive bounds shown and
    checked by typer, the rest checked by :func:`_ranker_record`)."""
    kind: Any = option.kind | None if option.default is None or option.none_ok else option.kind
    allowed = f" Allowed: {option.constraint}." if option.choices or option.gt is not None or option.lt is not None \
        else ""
    return Annotated[kind, typer.Option(option.cli, help=f"{ranker}: {option.help}{allowed}", min=option.ge,
                                        max=option.le, rich_help_panel="Ranker")]


def _ranker_flags() -> dict[str, tuple[str, Option]]:
    """Every option the registered rankers declare: python name (``duot5_k``) → (ranker, declaration)."""
    flags: dict[str, tuple[str, Option]] = {}
    spelled: dict[str, str] = {}
    for spec in REGISTRY.values():
        for option in spec.options:
            if option.cli in spelled:
                raise ValueError(f"rankers {spelled[option.cli]} and {spec.name} both declare {option.cli}")
            spelled[option.cli] = spec.name
            flags[f"{spec.name}_{option.name}".replace("-", "_")] = (spec.name, option)
    return flags


#: The rankers' own options, as flags: python name → (ranker, declaration).
RANKER_FLAGS: dict[str, tuple[str, Option]] = _ranker_flags()

#: The flags ``evaluate-rankers``, ``score``, ``validate`` and ``study`` share, in ``--help`` order: python name
#: -> typer annotation (the defaults are :class:`RankerOptions`' own, and the rankers' declared ones).
SHARED_FLAGS: dict[str, Any] = {
    "pool": PoolOpt, "query_field": QueryFieldOpt, "drop_missing_text": MissingTextOpt, "grade_map": GradeMapOpt,
    "model_path": ModelPathOpt, "device": DeviceOpt, "precision": PrecisionOpt, "batch_size": BatchOpt,
    "max_length": MaxLenOpt,
    "cache": CacheOpt, **{name: _typer_flag(option, ranker) for name, (ranker, option) in RANKER_FLAGS.items()},
}


@dataclass(frozen=True)
class RankerOptions:
    """How to read the test collection (LiveQA pool and query field, missing text) and how to run the rankers
    (model directory, device, precision, batch size, truncation, score cache, and each ranker's own options by
    ranker)."""

    pool: str = "merged"
    query_field: str = "paraphrase"
    drop_missing_text: bool = False
    grade_map: Path | None = None
    model_path: Path | None = None
    device: str = "auto"
    precision: str = "auto"
    batch_size: int = 32
    max_length: int | None = None
    cache: Path | None = None
    ranker_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def missing_text(self) -> str:
        return "drop" if self.drop_missing_text else "error"

    def collection(self, path: Path) -> TestCollection:
        """Read the test collection at ``path``."""
        from stableval.nrp.collection import read_collection

        return read_collection(path, pool=self.pool, query_field=self.query_field, missing_text=self.missing_text,
                               grade_map=self.grade_map)

    def rankers(self, names: str) -> dict[str, Ranker]:
        """The comma-separated rankers ``names`` (``--ranker``), built with these settings and one score cache."""
        from stableval.nrp.rankers import ScoreCache, make_ranker

        chosen = [n.strip() for n in names.split(",") if n.strip()]
        bad = [n for n in chosen if n not in RANKERS]
        if bad or not chosen:
            raise typer.BadParameter(f"unknown ranker {bad[0] if bad else names!r}; choose from "
                                     f"{', '.join(RANKERS)}", param_hint="--ranker")
        store = ScoreCache(self.cache) if self.cache is not None else None
        return {name: make_ranker(name, model_path=self.model_path, device=self.device, batch_size=self.batch_size,
                                  max_length=self.max_length, cache=store, precision=self.precision,
                                  **self.ranker_settings.get(name, {}))
                for name in chosen}

    def ranker(self, name: str) -> tuple[str, Ranker]:
        """The one ranker ``name`` of a command that scores with one (``score``, ``study``): its name and model."""
        if "," in name:
            raise typer.BadParameter(f"{name!r}: this command scores with one ranker", param_hint="--ranker")
        (chosen, model), = self.rankers(name).items()
        return chosen, model


def _ranker_record(values: dict[str, Any]) -> RankerOptions:
    """The shared flags' values as one record; a ranker option's value is checked against its declaration."""
    from stableval.nrp.rankers.inference import PRECISIONS

    if values.get("precision", "auto") not in PRECISIONS:
        raise typer.BadParameter(f"{values['precision']!r}; choose from {', '.join(PRECISIONS)}",
                                 param_hint="--precision")
    settings: dict[str, dict[str, Any]] = {}
    for name in [name for name in values if name in RANKER_FLAGS]:
        ranker, option = RANKER_FLAGS[name]
        value = values.pop(name)
        if value is not None:
            try:
                settings.setdefault(ranker, {})[option.name] = option.check(value)
            except ValueError as error:
                raise typer.BadParameter(str(error), param_hint=option.cli) from None
    return RankerOptions(**values, ranker_settings=settings)


def _ranker_list() -> str:
    """``name (title)`` of every registered ranker, for the ``--ranker`` help."""
    return ", ".join(f"{name} ({spec.title})" for name, spec in REGISTRY.items())


def best_candidates() -> list[str]:
    """Rankers ``--ranker best`` chooses from: those the registry marks ``best`` that can be built here (the
    bi-encoder only when the ``neural`` extra and its bundled weights are installed)."""
    from stableval.errors import StableValError
    from stableval.nrp.rankers import make_ranker

    names = []
    for name, spec in REGISTRY.items():
        if spec.best:
            try:
                make_ranker(name)
            except StableValError:  # its extra or its bundled weights are not installed
                continue
            names.append(name)
    return names


def ranker_options(func: F) -> F:
    """Give the command the :data:`SHARED_FLAGS` in place of its ``options: RankerOptions`` parameter; the
    command is called with them collected into one :class:`RankerOptions`."""
    defaults = RankerOptions()
    flags = [(name, annotation, RANKER_FLAGS[name][1].default if name in RANKER_FLAGS else getattr(defaults, name))
             for name, annotation in SHARED_FLAGS.items()]
    return record_options("options", flags, _ranker_record)(func)


RankersOpt = Annotated[str, typer.Option("--ranker", "-r", help=f"Comma-separated rankers: {_ranker_list()}.",
                                         rich_help_panel="Ranker")]


@dataclass(frozen=True)
class NRPSettings:
    """How an answer's rank becomes NRP (``--n``, ``--ties``) and how the intervals over questions are drawn
    (``--bootstrap``, ``--confidence``): the flags ``score`` and ``validate`` share (:func:`nrp_options`).

    >>> NRPSettings(bootstrap=200).interval_note(seed=3)
    '95% percentile bootstrap over questions (B=200, seed 3)'
    """

    n: str = "documents"
    ties: str = "mid"
    bootstrap: int = 1000
    confidence: float = 0.95

    def interval_note(self, seed: int) -> str:
        return (f"{round(self.confidence * 100)}% percentile bootstrap over questions (B={self.bootstrap}, "
                f"seed {seed})")


def _nrp_settings(values: dict[str, Any]) -> NRPSettings:
    """The NRP flags as one record; ``--n`` and ``--ties`` outside their choices are usage errors."""
    from stableval.nrp.score import N_CHOICES, TIE_POLICIES

    for flag, choices in (("n", N_CHOICES), ("ties", TIE_POLICIES)):
        if flag in values and values[flag] not in choices:
            raise typer.BadParameter(f"{values[flag]!r}; choose from {', '.join(choices)}", param_hint=f"--{flag}")
    return NRPSettings(**values)


#: ``score``'s and ``validate``'s NRP flags: (python name, typer annotation, default).
NRP_FLAGS: list[tuple[str, Any, Any]] = [
    ("n", Annotated[str, typer.Option("--n", help="N in NRP = 1 - r/N: documents (|D_q|, the paper's formula) or "
                                      "list (|D_q| + 1, the authors' shipped analysis).")], NRPSettings.n),
    ("ties", Annotated[str, typer.Option("--ties", help="Documents scored exactly like the answer count as below "
                                         "it (optimistic), half above (mid) or above (pessimistic).")],
     NRPSettings.ties),
    ("bootstrap", Annotated[int, bootstrap_flag("Bootstrap replicates over questions for the intervals (0 = none).")],
     NRPSettings.bootstrap),
    ("confidence", Annotated[float, typer.Option("--confidence", min=0.5, max=0.999,
                                                 help="Confidence level of the intervals.")], NRPSettings.confidence),
]

#: Give a command the :data:`NRP_FLAGS`, collected into its ``nrp: NRPSettings`` parameter.
nrp_options = record_options("nrp", NRP_FLAGS, _nrp_settings)


@dataclass(frozen=True)
class AnswerChecks:
    """What happens to answers that copy a judged document of their question (``--exclude-copies``: left out;
    always counted) and to answers to questions the collection lacks (``--skip-unknown-questions``: skipped and
    counted, else an error): the flags ``score`` and ``validate`` share (:func:`answer_checks`)."""

    exclude_copies: bool = False
    skip_unknown: bool = False

    @property
    def unknown(self) -> str:
        """What the answer readers do with an unknown question: ``skip`` or ``error``."""
        return "skip" if self.skip_unknown else "error"


#: Give a command ``--exclude-copies`` and ``--skip-unknown-questions``, collected into its ``checks: AnswerChecks``.
answer_checks = record_options("checks", [
    ("exclude_copies", Annotated[bool, typer.Option(
        "--exclude-copies", help="Leave out answers identical or near-identical (word-count cosine >= 0.95) to a "
                                 "judged document of their own question; they are always counted. validate: only "
                                 "with ANSWERS.")], False),
    ("skip_unknown", Annotated[bool, typer.Option(
        "--skip-unknown-questions", help="Skip (and count) answers to questions that are not in the collection "
                                         "instead of failing. validate: only with ANSWERS.")], False),
], lambda values: AnswerChecks(**values))


@dataclass(frozen=True)
class GradeSettings:
    """How graded answers are read (``validate``'s ANSWERS, ``score --graded``): the column holding the human
    grade, the scale it is on and the gain from which an answer counts as correct (:func:`grade_options`).

    >>> GradeSettings().answer_grades, GradeSettings().correct
    ('gain', 2.0)
    """

    grade_column: str = "grade"
    correct: float = 2.0
    answer_grades: str = "gain"


def _grade_settings(values: dict[str, Any]) -> GradeSettings:
    from stableval.nrp.validate import ANSWER_GRADES

    if values.get("answer_grades", "gain") not in ANSWER_GRADES:
        raise typer.BadParameter(f"{values['answer_grades']!r}; choose from {', '.join(ANSWER_GRADES)}",
                                 param_hint="--answer-grades")
    return GradeSettings(**values)


#: Give a command ``--grade-column``, ``--correct`` and ``--answer-grades``, collected into its
#: ``grades: GradeSettings``.
grade_options = record_options("grades", [
    ("grade_column", Annotated[str, typer.Option("--grade-column", help="Column of the graded answers with the "
                                                 "human grade.")], GradeSettings.grade_column),
    ("correct", Annotated[float, typer.Option("--correct", help="Gain from which a graded answer counts as "
                                              "correct for the AUC (LiveQA gains: 2 = Incomplete or Excellent). "
                                              "validate: also the relevant-documents threshold of nrp-rel unless "
                                              "--relevant is given.")], GradeSettings.correct),
    ("answer_grades", Annotated[str, typer.Option("--answer-grades", help="Scale of the graded answers' grades: "
                                                  "gain (the collection's gains of the dimension, checked; e.g. "
                                                  "LiveQA 0-3) or raw (its raw grades, recoded as it recodes its "
                                                  "own; e.g. LiveQA and MEDIQA 1-4).")], GradeSettings.answer_grades),
], _grade_settings)


@app.command("evaluate-rankers")
@ranker_options
@output_options()
def evaluate_rankers(
    collection: CollectionArg,
    ranker: RankersOpt = RANKERS[0],
    min_relevant: Annotated[float, typer.Option("--min-relevant", help="Grade from which a document counts as "
                                                "relevant for AP, P@10 and RR (nDCG uses the grades).")] = 1.0,
    per_question: Annotated[Path | None, typer.Option("--per-question", help="Also write per-question "
                                                      "measures to this CSV file.", rich_help_panel="Output")] = None,
    run_out: Annotated[Path | None, typer.Option("--run-out", help="Also write every document's score (ranker, "
                                                 "qid, docno, score, rank) to this CSV file.",
                                                 rich_help_panel="Output")] = None,
    options: RankerOptions = RankerOptions(),
    out: Output = Output(),
) -> None:
    """Rank every judged pool with each ranker and report nDCG@10, nDCG, AP, P@10 and RR per quality
    dimension (trec_eval definitions), so the NRP ranker is chosen on evidence."""
    import pandas as pd

    from stableval.nrp.measures import evaluate_rankers as run

    check_output_path(per_question, "--per-question")
    check_output_path(run_out, "--run-out")
    with bad_input_exits():
        data = options.collection(collection)
        rankers = options.rankers(ranker)
        runs: list[pd.DataFrame] = []
        summary, detail = run(data, rankers, min_relevant=min_relevant, progress=True, runs=runs)
    if per_question is not None:
        write_csv(detail, per_question)
    if run_out is not None:
        write_csv(pd.concat(runs, ignore_index=True), run_out)
    notes = [*data.notes, f"{data.name}: {plural(data.n_questions, 'question')}, {len(data.pool())} judged "
             f"(question, document) pairs; relevant = grade >= {min_relevant:g}"]
    out.emit(TableResult(summary, "Ranker effectiveness on the judged pools (mean over questions)", notes,
                     {"collection": data.name}))


def _write_plots(summary: pd.DataFrame, folder: Path, *, title: str, answers: pd.DataFrame | None = None) -> None:
    """``nrp_by_prompt.png``, ``nrp_points_by_prompt.png`` (every answer a point, with ``answers``) and, per
    prompt with known model sizes, ``nrp_vs_size_<prompt>.png`` in ``folder``."""
    from stableval.report.figures import nrp_by_prompt_figure, nrp_vs_size_figure
    from stableval.report.figures.nrp_points import nrp_points_figure

    save_plot(nrp_by_prompt_figure(summary, title=title), folder / "nrp_by_prompt.png", dpi=120)
    if answers is not None:
        save_plot(nrp_points_figure(answers, summary, title=title.replace("NRP by model", "NRP per answer")),
                  folder / "nrp_points_by_prompt.png", dpi=120)
    for prompt in summary.loc[summary["params"].notna(), "prompt"].unique():
        save_plot(nrp_vs_size_figure(summary, prompt=prompt), folder / f"nrp_vs_size_{prompt}.png", dpi=120)


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
        if not (math.isfinite(sizes[name]) and sizes[name] > 0):
            raise typer.BadParameter(f"{part.strip()!r}: the size is not a finite number > 0; allowed: e.g. "
                                     "gpt2=124M,llama-7b=7B", param_hint="--sizes")
        if sum(p.strip().rpartition("=")[0] == name for p in text.split(",")) > 1:
            raise typer.BadParameter(f"{name!r} is given more than once; allowed: one size per model",
                                     param_hint="--sizes")
    return sizes


def _check_grade(value: float | None, option: str) -> None:
    """A grade threshold must be a finite number (no grade is >= NaN)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value}; allowed: a finite grade, e.g. 1", param_hint=option)


@app.command("score")
@ranker_options
@answer_checks
@grade_options
@nrp_options
@output_options()
def score(
    collection: CollectionArg,
    answers: Annotated[Path, typer.Argument(help="Generated answers: CSV/TSV/JSONL/Parquet with qid, model, "
                                            "text (and optionally prompt, answer_id, params).",
                                            show_default=False)],
    ranker: Annotated[str, typer.Option("--ranker", "-r", help=f"Ranker: {_ranker_list()}; or best: among "
                                        f"{', '.join(n for n, spec in REGISTRY.items() if spec.best)} (those "
                                        "installed), the one whose NRP agrees best with --graded answers (AUC), "
                                        "else the highest nDCG@10 averaged over every quality dimension; the "
                                        "evidence is printed.", rich_help_panel="Ranker")] = RANKERS[0],
    graded: Annotated[Path | None, typer.Option("--graded", help="Graded answers (qid, text, a grade column) for "
                                                "--ranker best: choose the ranker whose NRP agrees best with their "
                                                "grades, as nrp validate measures it (AUC).",
                                                rich_help_panel="Ranker")] = None,
    relevant: Annotated[float | None, typer.Option("--relevant", help="Also report NRP among the documents of "
                                                   "grade >= this only (nrp_relevant, mean_nrp_relevant): not lifted "
                                                   "by a pool of poor documents.")] = None,
    seed: SeedOpt = 0,
    answers_out: Annotated[Path | None, typer.Option("--answers-out", help="Write the per-answer table (NRP, "
                                                     "documents above, tied, list length) to this CSV file.",
                                                     rich_help_panel="Output")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write PNG plots into this directory: NRP by model "
                                              "grouped by prompt (bars, and every answer as a point), and NRP vs "
                                              "model size when sizes are known.",
                                              rich_help_panel="Output")] = None,
    sizes: Annotated[str | None, typer.Option("--sizes", help="Model sizes for the size plot, e.g. "
                                              "gpt2=124M,llama-2-7b=7B (or a params column in ANSWERS).",
                                              rich_help_panel="Output")] = None,
    options: RankerOptions = RankerOptions(),
    nrp: NRPSettings = NRPSettings(),
    checks: AnswerChecks = AnswerChecks(),
    grades: GradeSettings = GradeSettings(),
    out: Output = Output(),
) -> None:
    """Score generated answers by NRP: each answer is ranked alone among its question's judged documents.
    Prints mean NRP per model x prompt with a bootstrap interval over questions and the share ranked first."""
    from stableval.nrp.score import score_answers

    if graded is not None and ranker != "best":
        raise typer.BadParameter("only with --ranker best (the graded answers choose the ranker)",
                                 param_hint="--graded")
    size_map = _parse_sizes(sizes)
    _check_grade(relevant, "--relevant")
    check_output_path(answers_out, "--answers-out")
    check_output_folder(plot, "--plot")
    notes: list[str] = []
    with bad_input_exits():
        data = options.collection(collection)
        table, copies = _answers_to_score(data, answers, checks, size_map, notes)
        name, model, choice = _scoring_ranker(data, ranker, options, notes, graded=graded, grades=grades,
                                              nrp=nrp, checks=checks)
        result = score_answers(data, table, model, n=nrp.n, ties=nrp.ties, bootstrap=nrp.bootstrap,
                               confidence=nrp.confidence, seed=seed, progress=True, relevant=relevant)
    if answers_out is not None:
        write_csv(result.answers, answers_out)
    if plot is not None:
        _write_plots(result.summary, plot, title=f"NRP by model, grouped by prompt ({name}, {data.name})",
                     answers=result.answers)
    s = result.settings
    notes = [*data.notes, *notes, *result.notes,
             f"{plural(s['answers'], 'answer')} to {plural(s['questions'], 'question')} ranked by {s['ranker']}; "
             f"N = {nrp.n}, ties = {nrp.ties}; {nrp.interval_note(seed)}"]
    shown = TableResult(result.summary, "NRP per model x prompt (best first)", notes, {"settings": s, "copies": copies})
    out.emit(shown if choice is None else _with_choice(shown, choice))


def _with_choice(result: TableResult, choice: RankerChoice) -> Appended:
    """``result`` followed by the evidence ``--ranker best`` chose by (a table; ``ranker_choice`` in JSON)."""
    from stableval._json import records

    def render(console: Any) -> None:
        console.print(f"--ranker best: the candidates by {choice.measure}, chose {choice.name}")
        TableResult(choice.evidence, "").render(console)

    return Appended(result, json={"ranker_choice": {"chosen": choice.name, "measure": choice.measure,
                                                    "candidates": records(choice.evidence)}},
                    render_more=render)


def _answers_to_score(data: TestCollection, path: Path, checks: AnswerChecks, sizes: dict[str, float],
                      notes: list[str]) -> tuple[pd.DataFrame, int]:
    """The answers of ``path`` to score and how many copy a judged document: unknown questions and copies handled
    as ``checks`` say (a note each), ``--sizes`` written into ``params``."""
    from stableval.nrp.collection import read_answers
    from stableval.nrp.leakage import copies_note, find_copies

    table = read_answers(path, collection=data, unknown=checks.unknown, notes=notes)
    copies = find_copies(data, table)
    if len(copies):
        notes.append(copies_note(copies, excluded=checks.exclude_copies))
        if checks.exclude_copies:
            table = table[~table["answer_id"].isin(set(copies["answer_id"]))].reset_index(drop=True)
    if sizes:
        table["params"] = table["model"].map(sizes).astype(float).fillna(table["params"])
    return table, len(copies)


def _scoring_ranker(data: TestCollection, name: str, options: RankerOptions, notes: list[str], *,
                    graded: Path | None = None, grades: GradeSettings = GradeSettings(),
                    nrp: NRPSettings = NRPSettings(), checks: AnswerChecks = AnswerChecks(),
                    ) -> tuple[str, Ranker, RankerChoice | None]:
    """The ranker to score with: the one named, or for ``best`` the candidate chosen on evidence
    (:func:`stableval.nrp.choose.choose_ranker`: agreement with the ``graded`` answers, else nDCG@10 averaged over
    every quality dimension), the choice noted and returned with its evidence."""
    if name != "best":
        return *options.ranker(name), None
    from stableval.nrp.choose import choose_ranker
    from stableval.nrp.collection import read_answers_table

    candidates = options.rankers(",".join(best_candidates()))
    graded_notes: list[str] = []
    choice = choose_ranker(data, candidates, graded=None if graded is None else read_answers_table(graded),
                           grade=grades.grade_column, correct=grades.correct, scale=grades.answer_grades,
                           n=nrp.n, ties=nrp.ties, unknown=checks.unknown, exclude_copies=checks.exclude_copies,
                           file=None if graded is None else str(graded), notes=graded_notes, progress=True)
    notes += [f"--graded {graded.name}: {note}" for note in graded_notes if graded is not None]
    notes.append(choice.note())
    return choice.name, candidates[choice.name], choice


@app.command("compare")
@ranker_options
@answer_checks
@nrp_options
@output_options()
def compare(
    source: Annotated[Path, typer.Argument(
        help="Per-answer NRP: the table score --answers-out writes (qid, model, prompt, nrp), or the Webis "
             "release's indexing/results/monoT5 folder (its shipped ranks); or a test collection directory, "
             "then ANSWERS are scored first.", show_default=False)],
    answers: Annotated[Path | None, typer.Argument(
        help="Generated answers (as for score), when SOURCE is a test collection.", show_default=False)] = None,
    models: Annotated[str, typer.Option("--models", "-m", help="The two models, A,B (diff = A - B): exact names or "
                                       "a part only one model's name contains (13b,llama-2-7b).",
                                       show_default=False)] = "",
    prompt: Annotated[str | None, typer.Option("--prompt", help="Compare the answers of this prompt only "
                                               "(default: one row per prompt both models answered).")] = None,
    ranker: Annotated[str, typer.Option("--ranker", "-r", help="Ranker scoring ANSWERS (with a test collection); "
                                        "best: chosen by nDCG@10 as in score.", rich_help_panel="Ranker")
                      ] = RANKERS[0],
    seed: SeedOpt = 0,
    per_question: Annotated[Path | None, typer.Option("--per-question", help="Also write each question's mean "
                                                      "NRP of A and B and their difference to this CSV file.",
                                                      rich_help_panel="Output")] = None,
    options: RankerOptions = RankerOptions(),
    nrp: NRPSettings = NRPSettings(),
    checks: AnswerChecks = AnswerChecks(),
    out: Output = Output(),
) -> None:
    """Paired comparison of two models' NRP on the same questions: the mean per-question difference A - B with a
    bootstrap interval over questions, and a sign test over questions, per prompt."""
    from stableval.nrp.compare import compare_models

    pair = [name.strip() for name in models.split(",") if name.strip()]
    if len(pair) != 2:
        raise typer.BadParameter(f"{models!r}: name two models, A,B", param_hint="--models")
    check_output_path(per_question, "--per-question")
    notes: list[str] = []
    with bad_input_exits():
        per_answer, value, what = _per_answer_nrp(source, answers, ranker, options, nrp, checks, seed, notes)
        result = compare_models(per_answer, pair[0], pair[1], value=value, prompt=prompt, bootstrap=nrp.bootstrap,
                                confidence=nrp.confidence, seed=seed)
    if per_question is not None:
        write_csv(result.per_question, per_question)
    notes += [*result.notes, f"{what}; diff = mean over questions of (A's mean NRP - B's) on the questions both "
              f"answered; {nrp.interval_note(seed)}; sign test over questions, ties (diff 0) left out"]
    a, b = result.summary[["model_a", "model_b"]].iloc[0]
    shown = result.summary.drop(columns=["model_a", "model_b"])
    out.emit(TableResult(shown, f"Paired comparison of NRP: A = {a}, B = {b} (diff = A - B)", notes,
                         {"model_a": a, "model_b": b, "value": value}, digits=4), frame=result.summary)


def _per_answer_nrp(source: Path, answers: Path | None, ranker: str, options: RankerOptions, nrp: NRPSettings,
                    checks: AnswerChecks, seed: int, notes: list[str]) -> tuple[pd.DataFrame, str, str]:
    """``compare``'s per-answer NRP, its column and where it comes from: the Webis release's shipped ranks, a
    per-answer table, or ``answers`` scored on the test collection ``source``."""
    from stableval.data.files import read_table_file
    from stableval.errors import InputError
    from stableval.nrp.score import read_webis_rank_files, score_answers

    shipped = source.is_dir() and any(source.glob("*_rankings.csv"))
    if (shipped or source.is_file()) and answers is not None:
        raise InputError("ANSWERS only go with a test collection", file=str(answers),
                         allowed=f"nothing after {source.name}, which holds NRP per answer already")
    if shipped:
        return read_webis_rank_files(source), "nrp_shipped", f"NRP from the ranks shipped in {source.name} " \
            "(N = list length, as the authors computed it)"
    if source.is_file():
        return read_table_file(source), "nrp", f"NRP per answer from {source.name}"
    if answers is None:
        raise InputError("a test collection needs ANSWERS to score", file=str(source),
                         allowed="COLLECTION ANSWERS, or a per-answer table (score --answers-out)")
    data = options.collection(source)
    table, _ = _answers_to_score(data, answers, checks, {}, notes)
    _, model, _ = _scoring_ranker(data, ranker, options, notes)
    result = score_answers(data, table, model, n=nrp.n, ties=nrp.ties, bootstrap=0, seed=seed, progress=True)
    notes[:0] = list(data.notes)
    notes += list(result.notes)
    return result.answers, "nrp", f"NRP of {answers.name} on {data.name} ranked by {result.settings['ranker']} " \
        f"(N = {nrp.n}, ties = {nrp.ties})"


@app.command("validate")
@ranker_options
@answer_checks
@grade_options
@nrp_options
@output_options()
def validate(
    collection: CollectionArg,
    answers: Annotated[Path | None, typer.Argument(
        help="Graded answers: qid, model, text and a grade column (--grade-column). Omitted: leave-one-out "
             "over the judged documents (each ranked, as if it were an answer, among the rest of its pool).",
        show_default=False)] = None,
    ranker: RankersOpt = "bm25,bm25-pool,tfidf",
    relevant: Annotated[float | None, typer.Option("--relevant", help="Also validate NRP among the documents of "
                                                   "grade >= this only (nrp-rel). Default: --correct.")] = None,
    dimension: Annotated[str, typer.Option("--dimension", help="Quality dimension whose grades are used in "
                                           "leave-one-out and for nrp-rel.")] = "relevance",
    reference: Annotated[str | None, typer.Option("--reference", help="Signal the others are compared with "
                                                  "(paired differences). Default: nrp of the first ranker.")] = None,
    seed: SeedOpt = 0,
    signals_out: Annotated[Path | None, typer.Option("--signals-out", help="Write every answer's grade and "
                                                     "signals to this CSV file.", rich_help_panel="Output")] = None,
    options: RankerOptions = RankerOptions(),
    nrp: NRPSettings = NRPSettings(),
    checks: AnswerChecks = AnswerChecks(),
    grades: GradeSettings = GradeSettings(),
    out: Output = Output(),
) -> None:
    """How far NRP agrees with human grades: AUC (correct vs incorrect), pooled and per-question Spearman and
    Kendall tau-b of NRP, NRP among relevant documents, the ranker score, the combined signal (mean of NRP and
    the score's collection percentile) and answer length, with bootstrap intervals over questions and paired
    differences from a reference signal."""
    from stableval.nrp.collection import read_answers_table
    from stableval.nrp.validate import agreement_with_grades, answer_signals, grade_scale, leave_one_out_signals

    correct, follows = grades.correct, relevant is None
    relevant = correct if relevant is None else relevant
    if answers is None and (checks.exclude_copies or checks.skip_unknown or grades.answer_grades != "gain"):
        flag = ("--exclude-copies" if checks.exclude_copies else "--skip-unknown-questions" if checks.skip_unknown
                else "--answer-grades")
        raise typer.BadParameter("only with ANSWERS (the leave-one-out ranks the judged documents themselves)",
                                 param_hint=flag)
    check_output_path(signals_out, "--signals-out")
    _check_grade(relevant, "--relevant")
    read_notes: list[str] = []
    with bad_input_exits():
        data = options.collection(collection)
        rankers = options.rankers(ranker)
        if answers is None:
            frame = leave_one_out_signals(data, rankers, dimension=dimension, relevant=relevant, n=nrp.n,
                                          ties=nrp.ties, progress=True)
            what = f"leave-one-out over the judged documents of {data.name} ({dimension})"
        else:
            frame = answer_signals(data, read_answers_table(answers), rankers, grade=grades.grade_column,
                                   dimension=dimension, relevant=relevant, n=nrp.n, ties=nrp.ties, progress=True,
                                   unknown=checks.unknown, exclude_copies=checks.exclude_copies,
                                   file=str(answers), notes=read_notes, scale=grades.answer_grades)
            what = f"graded answers {answers.name}"
        signals = [c for c in frame.columns if c.partition(":")[0] in ("nrp", "nrp-rel", "score", "combo")] + [
            "length"]
        table = agreement_with_grades(frame, signals, correct=correct, reference=reference,
                                      bootstrap=nrp.bootstrap, confidence=nrp.confidence, seed=seed)
    if signals_out is not None:
        write_csv(frame, signals_out)
    first = table.iloc[0]
    source = "the answers' grades (recoded from the raw scale)" if grades.answer_grades == "raw" else \
        "the answers' grades" if answers is not None else "the judged documents' grades"
    notes = [*data.notes, *read_notes, f"{what}: {plural(int(first['answers']), 'answer')} to "
             f"{plural(int(first['questions']), 'question')} "
             f"({int(first['graded_questions'])} with two or more grades)",
             f"grade scale: {source} are {grade_scale(data, dimension)}; correct = gain >= {correct:g}; nrp-rel: "
             f"among documents of gain >= {relevant:g}" + (" (--relevant not given: it follows --correct)"
                                                          if follows else ""),
             *_no_value_notes(frame, relevant, correct),
             f"{nrp.interval_note(seed)}; diff = signal - {reference or signals[0]} on the same replicates"]
    out.emit(TableResult(table.drop(columns=["answers", "questions", "graded_questions"]),
                         "Agreement of NRP and baselines with human grades", notes,
                         {"collection": data.name, "correct": correct, "relevant": relevant}))


def _no_value_notes(frame: pd.DataFrame, relevant: float, correct: float) -> list[str]:
    """How many answers a signal has no value for (nrp-rel: their question has no relevant document), and how
    many of those are correct."""
    notes = []
    for column in [c for c in frame.columns if c.startswith("nrp-rel:")]:
        missing = frame[column].isna()
        if missing.any():
            right = int((frame.loc[missing, "grade"] >= correct).sum())
            notes.append(f"{column}: {plural(int(missing.sum()), 'answer')} ({right} correct) to "
                         f"{plural(frame.loc[missing, 'qid'].nunique(), 'question')} with no document of gain >= "
                         f"{relevant:g} have no value, left out of its measures and of its diff")
    return notes


@app.command("agree")
@output_options()
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
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the rank-flow plot (the paper's Fig. 3: system "
                                              "ranks on top, expert below) to this .png, .svg or .pdf file.",
                                              rich_help_panel="Output")] = None,
    aggregate: Annotated[RankingMethodName | None, typer.Option("--aggregate", help="Rankings by several "
                                                                "experts: aggregate them per question with this "
                                                                "ranking method (its plausibility order is the "
                                                                "expert ranking).")] = None,
    ranking_param: RankingParamOpt = None,
    out: Output = Output(),
) -> None:
    """Agreement between expert and system rankings per question: Kendall tau-b, Spearman rho, average overlap
    (AO) and extrapolated RBO (Webber, Moffat & Zobel 2010), with means and t-based intervals (cut to each
    measure's range)."""
    from stableval.errors import InputError
    from stableval.nrp.label_studio import match_tasks, read_expert_rankings, read_system_scores
    from stableval.nrp.rank_agreement import agreement_summary, agreement_table

    if not 0.0 < p < 1.0:
        raise typer.BadParameter(f"p = {p:g}: RBO needs 0 < p < 1; for the depth-limited average of overlaps "
                                 "(what 'RBO with p = 1' computes) read the ao column", param_hint="--p")
    if plot is not None:
        from stableval.report.figures import check_figure_path

        try:
            check_figure_path(plot)
        except InputError as error:
            raise typer.BadParameter(str(error), param_hint="--plot") from None
    check_output_path(per_question, "--per-question")
    if ranking_param and aggregate is None:
        raise typer.BadParameter("sets a parameter of the ranking method that aggregates several experts: give "
                                 "--aggregate METHOD too", param_hint="--ranking-param")
    params = ranking_params(ranking_param, [aggregate.value] if aggregate is not None else [])
    with bad_input_exits():
        data = read_expert_rankings(expert, annotator=annotator)
        frame = data.frame
        notes = list(data.notes)
        if frame["annotator"].nunique() > 1 and aggregate is None:
            raise InputError("rankings by several annotators", file=str(expert), column="annotator",
                             value=sorted(frame["annotator"].unique()),
                             allowed="--annotator ID to choose one, or --aggregate METHOD to combine them")
        if aggregate is not None:
            frame, note = aggregate_expert_rankings(frame, aggregate.value, params)
            notes.append(note)
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
        if plot is not None:
            _rank_flow_plot(experts, system, [expert, *([rankings] if rankings is not None else [])], plot)
    if per_question is not None:
        write_csv(table, per_question)
    summary = agreement_summary(table, p=p, confidence=confidence)
    notes = [*notes, f"{plural(len(table), 'question')}, {plural(int(table['items'].sum()), 'ranked item')}; "
             f"{round(confidence * 100)}% t intervals over questions, cut to each measure's range"]
    out.emit(TableResult(summary, "Agreement between expert and system rankings", notes, {"p": p}))


def aggregate_expert_rankings(frame: pd.DataFrame, method: str,
                              params: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[pd.DataFrame, str]:
    """Several experts' rankings (``task, item, rank, annotator[, score]``) → one ranking per task: the order of
    the ranking ``method``'s plausibility (built with its ``params``) over the items any expert ranked
    (``annotator`` becomes the method's name; a system ``score`` stored with the rankings is kept, its first value
    per item)."""
    import pandas as pd

    from stableval.aggregate.rankings.registry import resolve_ranking_methods
    from stableval.data.rankings import Rankings

    _, chosen, estimator = resolve_ranking_methods([method], params)[0]
    rankings = Rankings.from_frame(frame.astype({"task": str, "item": str, "annotator": str}), item="task",
                                   rater="annotator", option="item", rank="rank")
    fitted = estimator.fit(rankings).to_frame()
    fitted = fitted[fitted["option"] != "(others)"].sort_values(["item", "plausibility", "option"],
                                                                   ascending=[True, False, True], kind="stable")
    fitted["rank"] = fitted.groupby("item", sort=False).cumcount() + 1
    scores = frame.astype({"task": str, "item": str}).groupby(["task", "item"], sort=False)["score"].first()
    queries = frame.astype({"task": str}).groupby("task", sort=False)["query"].first()
    out = pd.DataFrame({"task": fitted["item"].to_numpy(), "query": queries.reindex(fitted["item"]).to_numpy(),
                        "annotator": chosen.name, "item": fitted["option"].to_numpy(),
                        "rank": fitted["rank"].to_numpy()})
    out["score"] = [scores.get((t, i), float("nan")) for t, i in zip(out["task"], out["item"], strict=True)]
    note = (f"expert rankings of {plural(frame['annotator'].nunique(), 'annotator')} aggregated per question by "
            f"{chosen.label}")
    return out, note


def _templates(text: str) -> list[str]:
    from stableval.nrp.generate import TEMPLATES

    chosen = list(TEMPLATES) if text.strip() == "all" else [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in chosen if t not in TEMPLATES]
    if bad or not chosen:
        raise typer.BadParameter(f"unknown template {bad[0] if bad else text!r}; choose from "
                                 f"{', '.join(TEMPLATES)} or all", param_hint="--template")
    return chosen


@app.command("generate")
def generate(
    queries: Annotated[Path, typer.Argument(help="Query set: CSV/TSV/JSONL/Parquet with qid, question (or query).",
                                            show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="Answers file (.csv, .tsv, .jsonl or .parquet) "
                                         "that nrp score reads.", show_default=False)],
    model: Annotated[str, typer.Option("--model", "-m", help="Local Hugging Face causal LM: a save_pretrained "
                                       "directory or a cached model name (HF_HUB_OFFLINE=1 respected); with "
                                       "--endpoint, the model name the endpoint serves.", show_default=False)],
    endpoint: Annotated[str | None, typer.Option("--endpoint", help="OpenAI-compatible chat-completions base URL "
                                                 "(e.g. http://localhost:8000/v1); API key from OPENAI_API_KEY.")
                        ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Model name written to the model column (default: "
                                             "the directory's name or --model).")] = None,
    template: Annotated[str, typer.Option("--template", "-t", help="Prompt templates, comma-separated: none, "
                                          "short-qa, long-qa, multimedqa, or all (the paper's four).")] = "all",
    samples: Annotated[int, typer.Option("--samples", "-n", min=1, help="Answers per query and template.")] = 10,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="Sampling temperature (0 = greedy, "
                                               "local models).", rich_help_panel="Sampling")] = 0.75,
    top_p: Annotated[float, typer.Option("--top-p", help="Nucleus sampling mass, in (0, 1].",
                                         rich_help_panel="Sampling")] = 0.95,
    top_k: Annotated[int, typer.Option("--top-k", min=0, help="Top-k sampling (local models; 0 = off).",
                                       rich_help_panel="Sampling")] = 50,
    repetition_penalty: Annotated[float, typer.Option("--repetition-penalty", help="Repetition penalty (local "
                                                      "models; 1 = off).", rich_help_panel="Sampling")] = 1.2,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1, help="Maximum new tokens per answer.",
                                                rich_help_panel="Sampling")] = 512,
    seed: SeedOpt = 0,
    device: Annotated[str, typer.Option("--device", help="Torch device for a local model: auto (cuda when a GPU is "
                                        "there, else cpu), cpu, cuda, cuda:1 ...")] = "auto",
    max_retries: Annotated[int, typer.Option("--max-retries", min=0, help="Endpoint: retries on rate limits "
                                             "(429), timeouts and server errors, with exponential backoff.")] = 5,
) -> None:
    """Generate answers for an NRP study with the paper's prompt templates (none, short QA, long QA, MultiMedQA),
    n samples per query and fixed sampling settings recorded in every row (Heineking et al. 2024)."""
    from stableval.commands.output import wrote
    from stableval.data.files import output_format, write_frame
    from stableval.errors import InputError
    from stableval.nrp.generate import (
        EndpointGenerator,
        Generator,
        SamplingSettings,
        TransformersGenerator,
        generate_answers,
        read_queries,
    )

    try:
        output_format(output)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--output") from None
    chosen = _templates(template)
    try:  # a bad setting is a usage error (exit 2)
        settings = SamplingSettings(temperature=temperature, top_p=top_p, top_k=top_k,
                                    repetition_penalty=repetition_penalty, max_new_tokens=max_new_tokens, seed=seed)
    except InputError as error:
        raise typer.BadParameter(f"got {error.value!r}; allowed: {error.allowed}",
                                 param_hint=flag_spelling(error.option) if error.option else None) from None
    with bad_input_exits():
        table = read_queries(queries)
        generator: Generator
        if endpoint is not None:
            generator = EndpointGenerator(endpoint, model, name=name, max_retries=max_retries)
        else:
            generator = TransformersGenerator(model, device=device, name=name)
        answers = generate_answers(table, generator, templates=chosen, n=samples, settings=settings, progress=True)
        try:
            write_frame(answers, output)
        except OSError as error:
            raise fail(f"cannot write {output}: {error}") from None
    wrote(output)
    empty = int((answers["text"].str.strip() == "").sum())
    typer.echo(f"{len(answers):,} answers by {generator.model_id} ({len(table)} queries x {len(chosen)} "
               f"template(s) x {samples} samples; temperature {temperature:g}, top_p {top_p:g}, max_new_tokens "
               f"{max_new_tokens}, seed {seed})" + (f"; warning: {empty} empty answer(s): nrp score refuses them, "
                                                   "regenerate or remove them" if empty else ""))


@app.command("study")
@ranker_options
@output_options()
def study(
    collection: CollectionArg,
    answers: Annotated[Path, typer.Argument(help="Generated answers (as for score): qid, model, prompt, text.",
                                            show_default=False)],
    ranker: Annotated[str, typer.Option("--ranker", "-r", help="Ranker choosing each model's top answer (by NRP), "
                                        "the top document and the system ranking (see evaluate-rankers).",
                                        rich_help_panel="Ranker")] = "bm25",
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated models, one top answer each "
                                               "(default: every model of ANSWERS; 1 to 19).")] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help="Use the answers of this prompt (default: the only "
                                               "one, or multimedqa).")] = None,
    topics: Annotated[int, typer.Option("--topics", min=1, help="Topics drawn (reproducibly, --seed) among those "
                                        "every model answered.")] = 20,
    min_grade: Annotated[float, typer.Option("--min-grade", help="The top document is the ranker's best of this "
                                             "grade or more.")] = 1.0,
    seed: SeedOpt = 0,
    portal: Annotated[Path | None, typer.Option("--portal", help="Write the portal's rank-documents question file "
                                                "(JSONL) here.", rich_help_panel="Output")] = None,
    label_studio: Annotated[Path | None, typer.Option("--label-studio", help="Write Label Studio ranker tasks "
                                                      "(JSON) here.", rich_help_panel="Output")] = None,
    rankings_out: Annotated[Path | None, typer.Option("--rankings-out", help="Write the system ranking (qid, item, "
                                                      "score, rank, source) here, for nrp agree.",
                                                      rich_help_panel="Output")] = None,
    options: RankerOptions = RankerOptions(),
    out: Output = Output(),
) -> None:
    """Build the expert user study of the paper: per topic the top answer (by NRP) of each model and the top
    relevant document, shuffled; export to the portal and to Label Studio."""
    from stableval.commands.output import wrote
    from stableval.nrp.collection import read_answers_table
    from stableval.nrp.study import build_study, write_label_studio_tasks, write_portal_questions

    chosen = [m.strip() for m in models.split(",") if m.strip()] if models else None
    for path, flag in ((portal, "--portal"), (label_studio, "--label-studio"), (rankings_out, "--rankings-out")):
        check_output_path(path, flag)
    with bad_input_exits():
        _, model = options.ranker(ranker)
        data = options.collection(collection)
        result = build_study(data, read_answers_table(answers), model, models=chosen, prompt=prompt, topics=topics,
                             seed=seed, min_grade=min_grade, progress=True)
        try:
            if portal is not None:
                wrote(write_portal_questions(result, portal))
            if label_studio is not None:
                wrote(write_label_studio_tasks(result, label_studio))
        except OSError as error:
            raise fail(f"cannot write: {error}") from None
    if rankings_out is not None:
        write_csv(result.items.assign(source=result.items["model"].where(result.items["kind"] == "answer",
                                                                         "document"))[
            ["qid", "item", "score", "system_rank", "source"]].rename(columns={"system_rank": "rank"}), rankings_out)
    shown = result.items.drop(columns=["query", "text"])
    out.emit(TableResult(shown, "Expert study: items per topic in the order shown", result.notes,
                         {"topics": result.topics}))


def _rank_flow_plot(experts: dict[str, list[str]], system: dict[str, dict[str, float]], files: list[Path],
                    path: Path) -> None:
    """Fig. 3: the system's order of the expert's items (highest score first, ties by item id) above the
    expert's order, items labelled by source (from the files, or the authors' answer ids, else ``document``)."""
    import numpy as np

    from stableval.nrp.study import item_sources, read_item_sources
    from stableval.report.figures.rank_flow import rank_flow_figure, ranked_sources

    known: dict[str, str] = {}
    for file in files:
        known.update(read_item_sources(file))
    ranker_order = {q: sorted(items, key=lambda i: (-system[q].get(i, -np.inf), i)) for q, items in experts.items()}
    sources = item_sources((i for items in experts.values() for i in items), known)
    panels = {"system ranking": ranked_sources(ranker_order, sources), "expert": ranked_sources(experts, sources)}
    save_plot(rank_flow_figure(panels, title=f"Rank flow over {len(experts)} topics: system (top) vs expert "
                                             "(bottom)"), path, dpi=120)
