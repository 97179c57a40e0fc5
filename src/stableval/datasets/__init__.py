"""Loaders of public rating datasets: each reads the files you pass (never downloads) into an annotation table.

The registry :data:`DATASETS` maps a name to its loader; :func:`load_dataset` gives every dataset the same shape,
a :class:`Dataset` (``table``, ``gold``, ``description``). ``stableval convert NAME PATH -o OUT`` writes the table
to a file. Each loader's docstring states the source, the license and the conversion; ``table.notes`` count
every row dropped or kept and why.

>>> sorted(DATASETS)
['convabuse', 'dawid-skene', 'mslr', 'mt-bench', 'qags', 'truth-inference']
>>> DATASETS["qags"].options
('separate_workers',)

Public datasets that a study command reads as they are (not as an annotation table) are registered in
:data:`STUDY_DATASETS`, with ``kind="study"``; ``stableval convert`` does not list them. The readers of other
formats (judgments with flags, label sets, predictions, gold files) live beside them in this package.

>>> sorted(STUDY_DATASETS), STUDY_DATASETS["ddx"].options
(['ddx', 'medqa', 'nvidia-reliability'], ('conditions', 'risks'))
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stableval.datasets._common import Dataset
from stableval.datasets.convabuse import load_convabuse
from stableval.datasets.dawid_skene import load_dawid_skene
from stableval.datasets.ddx import load_ddx
from stableval.datasets.gold import GoldLabels, gold_accuracy, read_gold, write_gold
from stableval.datasets.medqa import load_medqa
from stableval.datasets.mslr import load_mslr
from stableval.datasets.mt_bench import MAPPINGS, load_mt_bench
from stableval.datasets.nvidia_reliability import read_toy_json
from stableval.datasets.qags import load_qags
from stableval.datasets.truth_inference import load_truth_inference

__all__ = [
    "DATASETS",
    "MAPPINGS",
    "STUDY_DATASETS",
    "Dataset",
    "DatasetInfo",
    "GoldLabels",
    "gold_accuracy",
    "load_convabuse",
    "load_dataset",
    "load_dawid_skene",
    "load_ddx",
    "load_medqa",
    "load_mslr",
    "load_mt_bench",
    "load_qags",
    "load_truth_inference",
    "read_gold",
    "read_toy_json",
    "write_gold",
]


@dataclass(frozen=True)
class DatasetInfo:
    """One registry entry.

    Attributes:
        name: the registry name.
        loader: the function (``path, **options``) → :class:`AnnotationTable` or :class:`Dataset` (for
            ``kind="study"``: the study's own record, e.g. :class:`~stableval.datasets.medqa.MedQARatings`).
        title: one line: what the dataset is.
        citation: the paper.
        license: the data license.
        path: where the files are in the shared data folder (``../shared/data/<path>``), for the examples.
        options: keyword options the loader takes.
        kind: ``"annotations"`` (converted to an annotation table: :func:`load_dataset`, ``stableval convert``)
            or ``"study"`` (read as it is by a study command: :data:`STUDY_DATASETS`).
    """

    name: str
    loader: Callable[..., Any]
    title: str
    citation: str
    license: str
    path: str
    options: tuple[str, ...] = ()
    kind: str = "annotations"


DATASETS: dict[str, DatasetInfo] = {info.name: info for info in (
    DatasetInfo("convabuse", load_convabuse, "ConvAbuse: abuse severity of conversations with 2 bots, 8 annotators",
                "Cercas Curry, Abercrombie & Rieser (2021), EMNLP", "CC BY 4.0",
                "convabuse/1_full/ConvAbuseEMNLPfull.csv"),
    DatasetInfo("qags", load_qags, "QAGS: factual support of summary sentences (CNN, XSUM), MTurk workers",
                "Wang, Cho & Lewis (2020), ACL", "none stated (cite the paper)", "qags/data",
                ("separate_workers",)),
    DatasetInfo("mslr", load_mslr, "MSLR 2022 Cochrane: facet ratings of 6 summarisation systems, 2 annotators",
                "Wang et al. (2023), ACL", "Apache-2.0", "mslr/data/data_with_overlap_scores.json",
                ("min_annotators",)),
    DatasetInfo("mt-bench", load_mt_bench, "MT-Bench human pairwise votes on 6 chat models, 65 judges",
                "Zheng et al. (2023), NeurIPS Datasets and Benchmarks", "CC BY 4.0",
                "mt_bench_human_judgments/mt_bench_human_votes_available.jsonl",
                ("mapping", "turns", "duplicates")),
    DatasetInfo("truth-inference", load_truth_inference, "Crowdsourcing truth-inference folder: answer.csv + "
                "truth.csv (gold)", "Zheng et al. (2017), PVLDB 10(5)", "none stated (research use)",
                "zheng2017_truth_inference/d_Duck_Identification", ("truth", "agent", "levels", "duplicates")),
    DatasetInfo("dawid-skene", load_dawid_skene, "Dawid & Skene (1979) anaesthetist data (or the caries data)",
                "Dawid & Skene (1979), JRSS C 28(1)", "MIT (dallascard transcription); GPL-2 (rater package)",
                "dawid_skene_1979", ("data",)),
)}


#: Public datasets read as they are by a study command (``stableval medqa``, ``ddx``, ``reliability``).
STUDY_DATASETS: dict[str, DatasetInfo] = {info.name: info for info in (
    DatasetInfo("medqa", load_medqa, "Relabeled MedQA: 3+ clinicians per MedQA test question, blind then seeing "
                "the key (stableval medqa)", "Saab et al. (2024), arXiv:2404.18416, App. C.2",
                "CC BY 4.0 (annotations)", "medqa_relabelling/medqa_relabelling.csv", kind="study"),
    DatasetInfo("ddx", load_ddx, "Dermatology DDx: experts' partial rankings of skin conditions per case "
                "(stableval ddx)", "Stutz et al. (2023), arXiv:2307.02191", "CC BY 4.0 (annotations)",
                "dermatology_ddx/data/dermatology_selectors.json", ("conditions", "risks"), kind="study"),
    DatasetInfo("nvidia-reliability", read_toy_json, "NVIDIA Win-Tie-Loss reliability notebook: evaluator and QC "
                "judgments (stableval reliability)", "NVIDIA GenerativeAIExamples, Reliability_Scoring_Win_Tie_Loss",
                "not stated for the toy data (code Apache-2.0)", "nvidia_reliability_wtl_toy/toy_data.json",
                kind="study"),
)}


def _canonical(name: str) -> str:
    key = name.strip().lower().replace("_", "-")
    if key not in DATASETS:
        raise ValueError(f"no dataset {name!r}; allowed: {', '.join(DATASETS)}")
    return key


def load_dataset(name: str, path: str | os.PathLike[str], **options: Any) -> Dataset:
    """Load a registered dataset by name (``mt_bench`` and ``mt-bench`` both work) as a :class:`Dataset`.

    Options a dataset does not take raise ``ValueError`` naming the ones it does.

    >>> load_dataset("qags", "/nowhere", mapping="baseline")
    Traceback (most recent call last):
    ...
    ValueError: dataset 'qags' takes no option 'mapping'; it takes: separate_workers
    """
    info = DATASETS[_canonical(name)]
    unknown = sorted(set(options) - set(info.options))
    if unknown:
        raise ValueError(f"dataset {info.name!r} takes no option {unknown[0]!r}; it takes: "
                         + (", ".join(info.options) or "no options"))
    loaded = info.loader(path, **options)
    if isinstance(loaded, Dataset):
        return loaded
    description = (f"{info.title}. {info.citation}; license: {info.license}. {loaded.n_judgments:,} judgments of "
                   f"{loaded.n_responses:,} responses by {loaded.n_raters:,} raters.")
    return Dataset(name=info.name, table=loaded, gold=None, description=description)
