"""Loaders of public rating datasets: each reads the files you pass (never downloads) into an annotation table.

The registry :data:`DATASETS` maps a name to its loader; :func:`load_dataset` gives every dataset the same shape,
a :class:`Dataset` (``table``, ``gold``, ``description``). ``stableval convert NAME PATH -o OUT`` writes the table
to a file. Each loader's docstring states the source, the license and the conversion; ``table.notes`` count
every row dropped or kept and why.

>>> sorted(DATASETS)
['convabuse', 'dawid-skene', 'mslr', 'mt-bench', 'qags', 'truth-inference']
>>> DATASETS["qags"].options
('separate_workers',)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stableval.data.table import AnnotationTable
from stableval.datasets._common import Dataset
from stableval.datasets.convabuse import load_convabuse
from stableval.datasets.dawid_skene import load_dawid_skene
from stableval.datasets.gold import gold_accuracy, read_gold, write_gold
from stableval.datasets.mslr import load_mslr
from stableval.datasets.mt_bench import MAPPINGS, load_mt_bench
from stableval.datasets.qags import load_qags
from stableval.datasets.truth_inference import load_truth_inference

__all__ = [
    "DATASETS",
    "MAPPINGS",
    "Dataset",
    "DatasetInfo",
    "gold_accuracy",
    "load_convabuse",
    "load_dataset",
    "load_dawid_skene",
    "load_mslr",
    "load_mt_bench",
    "load_qags",
    "load_truth_inference",
    "read_gold",
    "write_gold",
]


@dataclass(frozen=True)
class DatasetInfo:
    """One registry entry.

    Attributes:
        name: the registry name.
        loader: the function (``path, **options``) → :class:`AnnotationTable` or :class:`Dataset`.
        title: one line: what the dataset is.
        citation: the paper.
        license: the data license.
        path: where the files are in the shared data folder (``../shared/data/<path>``), for the examples.
        options: keyword options the loader takes.
    """

    name: str
    loader: Callable[..., AnnotationTable | Dataset]
    title: str
    citation: str
    license: str
    path: str
    options: tuple[str, ...] = ()


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
