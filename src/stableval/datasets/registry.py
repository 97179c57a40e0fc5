"""The dataset registry: every public dataset and every loader option, declared once, importable without pandas.

``load_dataset`` checks options against it, and ``stableval convert`` builds its flags from :data:`OPTIONS` (so
``stableval --help`` stays fast and a new option is one entry here). Loaders are named ``"module:function"`` and
imported on first use.

>>> sorted(DATASETS)
['convabuse', 'dawid-skene', 'mslr', 'mt-bench', 'qags', 'truth-inference']
>>> DATASETS["qags"].options, OPTIONS["turns"].parse("2,1")
(('separate_workers',), (1, 2))
>>> sorted(STUDY_DATASETS), STUDY_DATASETS["ddx"].options
(['ddx', 'medqa', 'nvidia-reliability'], ('conditions', 'risks'))
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stableval._options import Option
from stableval.data.options import DUPLICATE_POLICIES
from stableval.wording import plural

__all__ = ["DATASETS", "OPTIONS", "STUDY_DATASETS", "DatasetInfo", "DatasetOption", "canonical_name", "load_dataset"]


def _turns(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts or any(p not in ("1", "2") for p in parts):
        raise ValueError(f"{text!r}: give 1, 2 or 1,2")
    return tuple(sorted({int(p) for p in parts}))


#: one keyword option of one or more loaders: the shared option declaration (name, kind, help, choices, parse, flag)
DatasetOption = Option


#: every loader option, by name
OPTIONS: dict[str, DatasetOption] = {option.name: option for option in (
    DatasetOption("mapping", str, "mt-bench: how a vote becomes levels (default baseline: win 2 / tie 1 / loss 0).",
                  choices=("baseline", "drop-ties", "tie-as-win", "tie-as-loss", "tie-0.25", "tie-0.75")),
    DatasetOption("turns", str, "mt-bench: turns to keep: 1, 2 or 1,2 (default 1). Turn 1 is complete; turn 2 is "
                  "PARTIAL (869 of 1,666 votes, winners skewed).", parse=_turns),
    DatasetOption("duplicates", str, "mt-bench, truth-inference: the same vote/answer given twice by one rater: keep "
                  "all (mt-bench default), first (truth-inference default), last, or error (the importers' "
                  "default, as for any ratings file).", choices=DUPLICATE_POLICIES),
    DatasetOption("separate_workers", bool, "qags: keep the two files' worker ids apart (default: one id space, as "
                  "in the original analysis).", flag="--separate-workers/--shared-workers"),
    DatasetOption("min_annotators", int, "mslr: keep responses with at least this many annotators (default 2).", ge=1),
    DatasetOption("truth", Path, "truth-inference: gold file (default truth.csv beside answer.csv)."),
    DatasetOption("agent", str, "truth-inference: agent name of every question (default: the folder's name)."),
    DatasetOption("levels", str, "truth-inference: answer values as ordered level names, worst first (default "
                  "integer codes 0..K-1). Importers: the answers' levels, worst first, when the export does not "
                  "order them (choices, labels)."),
    DatasetOption("data", str, "dawid-skene: anesthesia (default, dallascard transcription), anesthesia-rater or "
                  "caries.", choices=("anesthesia", "anesthesia-rater", "caries")),
    DatasetOption("conditions", Path, "ddx: condition names, one per line."),
    DatasetOption("risks", Path, "ddx: risk category per condition, one per line."),
)}


@dataclass(frozen=True)
class DatasetInfo:
    """One registry entry.

    Attributes:
        name: the registry name.
        loader: ``"module:function"`` of the loader, ``function(path, **options)`` → an annotation table or a
            :class:`~stableval.datasets.Dataset` (for ``kind="study"``: the study's own record, e.g.
            :class:`~stableval.datasets.medqa.MedQARatings`).
        title: one line: what the dataset is.
        citation: the paper.
        license: the data license.
        path: where the files are in the shared data folder (``../shared/data/<path>``), for the examples.
        options: names of the :data:`OPTIONS` the loader takes.
        kind: ``"annotations"`` (converted to an annotation table: ``load_dataset``, ``stableval convert``) or
            ``"study"`` (read as it is by a study command: :data:`STUDY_DATASETS`).
    """

    name: str
    loader: str
    title: str
    citation: str
    license: str
    path: str
    options: tuple[str, ...] = ()
    kind: str = "annotations"

    def __post_init__(self) -> None:
        unknown = [option for option in self.options if option not in OPTIONS]
        if unknown:
            raise ValueError(f"dataset {self.name!r}: options {unknown} are not declared in OPTIONS")

    def load(self, path: Any, **options: Any) -> Any:
        """Call the loader (imported now) on ``path``."""
        module, _, function = self.loader.partition(":")
        return getattr(importlib.import_module(module), function)(path, **options)


DATASETS: dict[str, DatasetInfo] = {info.name: info for info in (
    DatasetInfo("convabuse", "stableval.datasets.convabuse:load_convabuse",
                "ConvAbuse: abuse severity of conversations with 2 bots, 8 annotators",
                "Cercas Curry, Abercrombie & Rieser (2021), EMNLP", "CC BY 4.0",
                "convabuse/1_full/ConvAbuseEMNLPfull.csv"),
    DatasetInfo("qags", "stableval.datasets.qags:load_qags",
                "QAGS: factual support of summary sentences (CNN, XSUM), MTurk workers",
                "Wang, Cho & Lewis (2020), ACL", "none stated (cite the paper)", "qags/data",
                ("separate_workers",)),
    DatasetInfo("mslr", "stableval.datasets.mslr:load_mslr",
                "MSLR 2022 Cochrane: facet ratings of 6 summarisation systems, 2 annotators",
                "Wang et al. (2023), ACL", "Apache-2.0", "mslr/data/data_with_overlap_scores.json",
                ("min_annotators",)),
    DatasetInfo("mt-bench", "stableval.datasets.mt_bench:load_mt_bench",
                "MT-Bench human pairwise votes on 6 chat models, 65 judges",
                "Zheng et al. (2023), NeurIPS Datasets and Benchmarks", "CC BY 4.0",
                "mt_bench_human_judgments/mt_bench_human_votes_available.jsonl",
                ("mapping", "turns", "duplicates")),
    DatasetInfo("truth-inference", "stableval.datasets.truth_inference:load_truth_inference",
                "Crowdsourcing truth-inference folder: answer.csv + truth.csv (gold)",
                "Zheng et al. (2017), PVLDB 10(5)", "none stated (research use)",
                "zheng2017_truth_inference/d_Duck_Identification", ("truth", "agent", "levels", "duplicates")),
    DatasetInfo("dawid-skene", "stableval.datasets.dawid_skene:load_dawid_skene",
                "Dawid & Skene (1979) anaesthetist data (or the caries data)",
                "Dawid & Skene (1979), JRSS C 28(1)", "MIT (dallascard transcription); GPL-2 (rater package)",
                "dawid_skene_1979", ("data",)),
)}

#: Public datasets read as they are by a study command (``stableval medqa``, ``ddx``, ``reliability``).
STUDY_DATASETS: dict[str, DatasetInfo] = {info.name: info for info in (
    DatasetInfo("medqa", "stableval.datasets.medqa:load_medqa",
                "Relabeled MedQA: 3+ clinicians per MedQA test question, blind then seeing the key (stableval medqa)",
                "Saab et al. (2024), arXiv:2404.18416, App. C.2", "CC BY 4.0 (annotations)",
                "medqa_relabelling/medqa_relabelling.csv", kind="study"),
    DatasetInfo("ddx", "stableval.datasets.ddx:load_ddx",
                "Dermatology DDx: experts' partial rankings of skin conditions per case (stableval ddx)",
                "Stutz et al. (2023), arXiv:2307.02191", "CC BY 4.0 (annotations)",
                "dermatology_ddx/data/dermatology_selectors.json", ("conditions", "risks"), kind="study"),
    DatasetInfo("nvidia-reliability", "stableval.datasets.nvidia_reliability:read_toy_json",
                "NVIDIA Win-Tie-Loss reliability notebook: evaluator and QC judgments (stableval reliability)",
                "NVIDIA GenerativeAIExamples, Reliability_Scoring_Win_Tie_Loss",
                "not stated for the toy data (code Apache-2.0)", "nvidia_reliability_wtl_toy/toy_data.json",
                kind="study"),
)}


def canonical_name(name: str) -> str:
    """A dataset's registry name (``mt_bench`` and ``MT-Bench`` both give ``mt-bench``)."""
    key = name.strip().lower().replace("_", "-")
    if key not in DATASETS:
        raise ValueError(f"no dataset {name!r}; allowed: {', '.join(DATASETS)}")
    return key


def load_dataset(name: str, path: Any, **options: Any) -> Any:
    """Load a registered dataset by name (``mt_bench`` and ``mt-bench`` both work) as a
    :class:`~stableval.datasets.Dataset` (``table``, ``gold``, ``description``).

    Options a dataset does not take raise ``ValueError`` naming the ones it does.

    >>> load_dataset("qags", "/nowhere", mapping="baseline")
    Traceback (most recent call last):
    ...
    ValueError: dataset 'qags' takes no option 'mapping'; it takes: separate_workers
    """
    from stableval.datasets._common import Dataset

    info = DATASETS[canonical_name(name)]
    unknown = sorted(set(options) - set(info.options))
    if unknown:
        raise ValueError(f"dataset {info.name!r} takes no option {unknown[0]!r}; it takes: "
                         + (", ".join(info.options) or "no options"))
    loaded = info.load(path, **options)
    if isinstance(loaded, Dataset):
        return loaded
    description = (f"{info.title}. {info.citation}; license: {info.license}. "
                   f"{plural(loaded.n_judgments, 'judgment')} of {plural(loaded.n_responses, 'response')} by "
                   f"{plural(loaded.n_raters, 'rater')}.")
    return Dataset(name=info.name, table=loaded, gold=None, description=description)
