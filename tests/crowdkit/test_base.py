"""What every stableval.crowdkit model shares: results as plain attributes set by fit, every attribute listed in
dir() readable, a clear error before fit and for an unknown parameter (issue 32)."""

from __future__ import annotations

import pandas as pd
import pytest

import stableval.crowdkit as crowdkit
from stableval.errors import NotFittedError

ANSWERS = pd.DataFrame({"task": ["t1", "t1", "t1", "t2", "t2", "t2"], "worker": ["a", "b", "c"] * 2,
                        "label": ["yes", "yes", "no", "no", "no", "yes"]})
MODELS = [name for name in crowdkit.__all__ if name not in ("CrowdKitAggregator", "BinaryRelevance",
                                                               "GoldMajorityVote")]


def make(name: str) -> crowdkit.CrowdKitAggregator:
    return getattr(crowdkit, name)()


@pytest.mark.parametrize("name", MODELS)
def test_results_are_attributes_set_by_fit(name: str) -> None:
    model = make(name)
    with pytest.raises(NotFittedError, match="call fit"):
        _ = model.labels_
    assert "labels_" not in dir(model)
    assert model.fit_predict(ANSWERS) is model.labels_
    for attribute in dir(model):  # crowd-kit's tests read every attribute dir() lists
        getattr(model, attribute)
    assert set(type(model).results) <= set(dir(model))
    assert model.labels_.name == "agg_label" and model.labels_.index.name == "task"


@pytest.mark.parametrize("name", MODELS)
def test_an_unknown_parameter_names_the_allowed_ones(name: str) -> None:
    with pytest.raises(TypeError, match=f"{name} got an unexpected parameter 'n_iters'; allowed"):
        getattr(crowdkit, name)(n_iters=3)


def test_gold_and_binary_relevance_share_the_shapes() -> None:
    gold = crowdkit.GoldMajorityVote()
    assert gold.fit_predict(ANSWERS, pd.Series({"t1": "yes"})) is gold.labels_
    relevance = crowdkit.BinaryRelevance(crowdkit.MajorityVote())
    multi = ANSWERS.assign(label=[[label] for label in ANSWERS["label"]])
    assert relevance.fit_predict(multi) is relevance.labels_
    assert set(relevance.aggregators_) == {"yes", "no"}
