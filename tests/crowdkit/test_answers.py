"""crowd-kit's input read as crowd-kit reads it: a missing column is a KeyError (and stableval's InputError),
label, task and worker dtypes come back unchanged, empty input gives empty results (issue 32)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import stableval.crowdkit as crowdkit
from stableval.crowdkit.answers import Answers
from stableval.errors import InputError, MissingColumnError

MODELS = [name for name in crowdkit.__all__ if name not in ("CrowdKitAggregator", "BinaryRelevance",
                                                               "GoldMajorityVote")]


@pytest.mark.parametrize("column", ["task", "worker", "label"])
def test_a_missing_column_is_a_key_error_and_an_input_error(column: str) -> None:
    data = pd.DataFrame({"task": [1], "worker": [2], "label": ["x"]}).drop(columns=column)
    with pytest.raises(KeyError) as caught:
        crowdkit.DawidSkene().fit(data)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, MissingColumnError)
    assert str(caught.value).startswith(f"column {column!r}: data has no column {column!r}")


@pytest.mark.parametrize("name", MODELS)
def test_boolean_labels_and_integer_ids_keep_their_dtypes(name: str) -> None:
    data = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [7, 8, 9] * 2,
                         "label": [True, True, False, False, False, True]})
    labels = getattr(crowdkit, name)().fit(data).labels_
    assert labels.dtype == bool and labels.index.dtype == np.int64
    assert labels.to_dict() == {1: True, 2: False}


@pytest.mark.parametrize("name", MODELS)
def test_empty_input_gives_empty_results(name: str) -> None:
    model = getattr(crowdkit, name)().fit(pd.DataFrame([], columns=["task", "worker", "label"]))
    assert model.labels_.empty


def test_pyarrow_tables_read_as_frames() -> None:
    data = pd.DataFrame({"task": ["a", "a", "b"], "worker": ["x", "y", "x"], "label": [1, 1, 0]})
    answers = Answers.of(pa.Table.from_pandas(data))
    assert answers.tasks.tolist() == ["a", "b"] and answers.labels.tolist() == [0, 1]
