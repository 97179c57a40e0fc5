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

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.datasets._common import Dataset as Dataset
    from stableval.datasets.convabuse import load_convabuse as load_convabuse
    from stableval.datasets.dawid_skene import load_dawid_skene as load_dawid_skene
    from stableval.datasets.ddx import load_ddx as load_ddx
    from stableval.datasets.gold import (
        GoldLabels as GoldLabels,
        gold_accuracy as gold_accuracy,
        read_gold as read_gold,
        write_gold as write_gold,
    )
    from stableval.datasets.medqa import load_medqa as load_medqa
    from stableval.datasets.mslr import load_mslr as load_mslr
    from stableval.datasets.mt_bench import MAPPINGS as MAPPINGS, load_mt_bench as load_mt_bench
    from stableval.datasets.nvidia_reliability import read_toy_json as read_toy_json
    from stableval.datasets.qags import load_qags as load_qags
    from stableval.datasets.registry import (
        DATASETS as DATASETS,
        OPTIONS as OPTIONS,
        STUDY_DATASETS as STUDY_DATASETS,
        DatasetInfo as DatasetInfo,
        load_dataset as load_dataset,
    )
    from stableval.datasets.truth_inference import load_truth_inference as load_truth_inference


__getattr__, __dir__, __all__ = lazy_package(globals())
