"""Loaders of public rating datasets: each reads the files you pass (never downloads) into an annotation table.

The registry :data:`DATASETS` (:mod:`stableval.datasets.registry`, which also declares every loader option) maps a
name to its loader; :func:`load_dataset` gives every dataset the same shape, a :class:`Dataset` (``table``,
``gold``, ``description``). ``stableval convert NAME PATH -o OUT`` writes the table to a file. Each loader's
docstring states the source, the license and the conversion; ``table.notes`` count every row dropped or kept and
why. Names load lazily (the command line reads the registry without pandas).

>>> from stableval.datasets import DATASETS, STUDY_DATASETS
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

from typing import TYPE_CHECKING

from stableval._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
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
    from stableval.datasets.registry import DATASETS, OPTIONS, STUDY_DATASETS, DatasetInfo, load_dataset
    from stableval.datasets.truth_inference import load_truth_inference

_HOME = {
    "Dataset": "stableval.datasets._common",
    "load_convabuse": "stableval.datasets.convabuse",
    "load_dawid_skene": "stableval.datasets.dawid_skene",
    "load_ddx": "stableval.datasets.ddx",
    "GoldLabels": "stableval.datasets.gold",
    "gold_accuracy": "stableval.datasets.gold",
    "read_gold": "stableval.datasets.gold",
    "write_gold": "stableval.datasets.gold",
    "load_medqa": "stableval.datasets.medqa",
    "load_mslr": "stableval.datasets.mslr",
    "MAPPINGS": "stableval.datasets.mt_bench",
    "load_mt_bench": "stableval.datasets.mt_bench",
    "read_toy_json": "stableval.datasets.nvidia_reliability",
    "load_qags": "stableval.datasets.qags",
    "DATASETS": "stableval.datasets.registry",
    "OPTIONS": "stableval.datasets.registry",
    "STUDY_DATASETS": "stableval.datasets.registry",
    "DatasetInfo": "stableval.datasets.registry",
    "load_dataset": "stableval.datasets.registry",
    "load_truth_inference": "stableval.datasets.truth_inference",
}

__all__ = [
    "DATASETS",
    "MAPPINGS",
    "OPTIONS",
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

__getattr__, __dir__ = lazy_exports(globals(), _HOME, __all__)
