"""The dataset registry: names and options, and the study datasets kept apart from ``convert``."""

from __future__ import annotations

import pandas as pd
import pytest

from stableval.datasets import DATASETS, MAPPINGS, load_dataset

from paths import shared_file


# ====================================================================================== registry and CLI
def test_registry_names_and_options() -> None:
    from stableval.commands.convert import DATASET_NAMES, MAPPING_NAMES

    assert DATASET_NAMES == tuple(DATASETS)
    assert MAPPING_NAMES == tuple(MAPPINGS)
    with pytest.raises(ValueError, match="no dataset"):
        load_dataset("imagenet", ".")
    with pytest.raises(ValueError, match="takes no option 'turns'"):
        load_dataset("convabuse", ".", turns=(1,))


def test_study_datasets_are_registered_apart_from_convert() -> None:
    """MedQA, DDx and the NVIDIA notebook data are registered (kind "study") but not offered by convert."""
    from stableval.commands.convert import DATASET_NAMES
    from stableval.datasets import STUDY_DATASETS
    from stableval.datasets.ddx import DDxAnnotations
    from stableval.datasets.medqa import MedQARatings

    assert not set(STUDY_DATASETS) & set(DATASET_NAMES)
    assert {info.kind for info in STUDY_DATASETS.values()} == {"study"}
    assert {info.kind for info in DATASETS.values()} == {"annotations"}
    expected = {"medqa": MedQARatings, "ddx": DDxAnnotations, "nvidia-reliability": pd.DataFrame}
    for name, info in STUDY_DATASETS.items():
        loaded = info.load(shared_file(*info.path.split("/")))
        assert isinstance(loaded, expected[name]), name
    with pytest.raises(ValueError, match="no dataset"):
        load_dataset("medqa", ".")
