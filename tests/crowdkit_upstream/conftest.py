# Copied from crowd-kit (github.com/Toloka/crowd-kit, commit 35f06615), tests/conftest.py,
# to run crowd-kit's own tests against stableval.crowdkit. Copyright 2020 Crowd-Kit team authors.
# Licensed under the Apache License, Version 2.0 (LICENSE in this folder); what was changed: NOTICE.
import random
from typing import Any

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def not_random() -> None:
    random.seed(42)
    np.random.seed(42)


# toy YSDA dataset


@pytest.fixture
def toy_answers_df() -> pd.DataFrame:
    return pd.DataFrame(
        [
            ["w1", "t1", "no"],
            ["w1", "t2", "yes"],
            ["w1", "t3", "yes"],
            ["w1", "t4", "yes"],
            ["w1", "t5", "yes"],
            ["w2", "t1", "yes"],
            ["w2", "t2", "yes"],
            ["w2", "t3", "no"],
            ["w2", "t4", "yes"],
            ["w2", "t5", "no"],
            ["w3", "t2", "yes"],
            ["w3", "t3", "no"],
            ["w3", "t4", "yes"],
            ["w3", "t5", "no"],
            ["w4", "t1", "yes"],
            ["w4", "t2", "no"],
            ["w4", "t3", "yes"],
            ["w4", "t4", "yes"],
            ["w4", "t5", "no"],
            ["w5", "t1", "no"],
            ["w5", "t2", "no"],
            ["w5", "t3", "no"],
            ["w5", "t4", "yes"],
            ["w5", "t5", "no"],
        ],
        columns=["worker", "task", "label"],
    )


@pytest.fixture
def toy_ground_truth_df() -> "pd.Series[Any]":
    return pd.Series(
        ["yes", "yes", "no", "yes", "no"],
        pd.Index(["t1", "t2", "t3", "t4", "t5"], name="task"),
        name="agg_label",
    )


@pytest.fixture
def toy_gold_df() -> "pd.Series[Any]":
    return pd.Series(
        {
            "t1": "yes",
            "t2": "yes",
        }
    )


@pytest.fixture
def toy_worker_init_error_zero_df() -> pd.DataFrame:
    """
    The initial error matrix for toy dataset, which is filled with zeros.
    """
    worker_labels = [["w1", "w2", "w3", "w4", "w5"], ["yes", "no"]]
    worker_label_index = pd.MultiIndex.from_product(
        worker_labels, names=["worker", "label"]
    )
    init_error_df = pd.DataFrame(
        np.zeros((len(worker_label_index), 2)),
        index=worker_label_index,
        columns=["no", "yes"],
    )
    return init_error_df


# Simple dataset that imitates real toloka answers


@pytest.fixture
def simple_answers_df() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # good workers
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893eec",
                "goose",
            ],
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893efb",
                "parrot",
            ],
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893f03",
                "goose",
            ],
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893f05",
                "goose",
            ],
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893f02",
                "parrot",
            ],
            [
                "bde3b214b06c1efa6cb1bc6284dc72d2",
                "1231239876--5fac0d234ffb2f3b00893f08",
                "parrot",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893efb",
                "parrot",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893ee8",
                "chicken",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893f07",
                "parrot",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893efd",
                "chicken",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893ee4",
                "chicken",
            ],
            [
                "b17c3301ad2ccbb798716fdd405d16e8",
                "1231239876--5fac0d234ffb2f3b00893f03",
                "goose",
            ],
            [
                "a452e450f913cfa987cad58d50393718",
                "1231239876--5fac0d234ffb2f3b00893ee8",
                "chicken",
            ],
            [
                "a452e450f913cfa987cad58d50393718",
                "1231239876--5fac0d234ffb2f3b00893eec",
                "goose",
            ],
            [
                "a452e450f913cfa987cad58d50393718",
                "1231239876--5fac0d234ffb2f3b00893f05",
                "goose",
            ],
            [
                "a452e450f913cfa987cad58d50393718",
                "1231239876--5fac0d234ffb2f3b00893f02",
                "parrot",
            ],
            [
                "a452e450f913cfa987cad58d50393718",
                "1231239876--5fac0d234ffb2f3b00893f08",
                "parrot",
            ],
            [
                "0f65edea0a6dc7b9acba1dea313bbb3d",
                "1231239876--5fac0d234ffb2f3b00893eec",
                "goose",
            ],
            [
                "0f65edea0a6dc7b9acba1dea313bbb3d",
                "1231239876--5fac0d234ffb2f3b00893ee8",
                "chicken",
            ],
            [
                "0f65edea0a6dc7b9acba1dea313bbb3d",
                "1231239876--5fac0d234ffb2f3b00893f03",
                "goose",
            ],
            [
                "0f65edea0a6dc7b9acba1dea313bbb3d",
                "1231239876--5fac0d234ffb2f3b00893ee4",
                "chicken",
            ],
            # fraudster - always answers "parrot"
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893eec",
                "parrot",
            ],  # 'goose'
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893efb",
                "parrot",
            ],
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893f07",
                "parrot",
            ],
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893efd",
                "parrot",
            ],  # 'chicken'
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893ee4",
                "parrot",
            ],  # 'chicken'
            [
                "0c3eb7d5fcc414db137c4180a654c06e",
                "1231239876--5fac0d234ffb2f3b00893f05",
                "parrot",
            ],  # 'goose'
            # careless
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893efb",
                "parrot",
            ],
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893ee8",
                "goose",
            ],  # 'chicken'
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893f02",
                "parrot",
            ],
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893f08",
                "parrot",
            ],
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893f07",
                "parrot",
            ],
            [
                "e563e2fb32fce9f00123a65a1bc78c55",
                "1231239876--5fac0d234ffb2f3b00893efd",
                "goose",
            ],  # 'chicken'
        ],
        columns=["worker", "task", "label"],
    )


@pytest.fixture
def simple_ground_truth() -> "pd.Series[Any]":
    ground_truth = pd.Series(
        {
            "1231239876--5fac0d234ffb2f3b00893eec": "goose",
            "1231239876--5fac0d234ffb2f3b00893f03": "goose",
            "1231239876--5fac0d234ffb2f3b00893f05": "goose",
            "1231239876--5fac0d234ffb2f3b00893efb": "parrot",
            "1231239876--5fac0d234ffb2f3b00893f02": "parrot",
            "1231239876--5fac0d234ffb2f3b00893f08": "parrot",
            "1231239876--5fac0d234ffb2f3b00893f07": "parrot",
            "1231239876--5fac0d234ffb2f3b00893ee8": "chicken",
            "1231239876--5fac0d234ffb2f3b00893efd": "chicken",
            "1231239876--5fac0d234ffb2f3b00893ee4": "chicken",
        },
        name="agg_label",
    )
    ground_truth.index.name = "task"
    return ground_truth


@pytest.fixture
def simple_gold_df() -> "pd.Series[Any]":
    true_labels = pd.Series(
        {
            "1231239876--5fac0d234ffb2f3b00893eec": "goose",
            "1231239876--5fac0d234ffb2f3b00893efb": "parrot",
            "1231239876--5fac0d234ffb2f3b00893ee8": "chicken",
        }
    )
    true_labels.index.name = "task"
    return true_labels



@pytest.fixture
def data_with_bool_labels() -> pd.DataFrame:
    return pd.DataFrame(
        [
            ["w1", "t1", True],
            ["w1", "t2", True],
            ["w2", "t1", True],
            ["w2", "t2", True],
            ["w3", "t1", False],
            ["w3", "t2", False],
        ],
        columns=["worker", "task", "label"],
    )


@pytest.fixture
def bool_labels_ground_truth() -> "pd.Series[Any]":
    return pd.Series(
        [True, True], index=pd.Index(["t1", "t2"], name="task"), name="agg_label"
    )


# ---------------------------------------------------------------------------------------------------------------
# Added in stableval (not crowd-kit's): the tests of crowd-kit's private methods or of its quirks, each skipped with
# the reason (tests/crowdkit_upstream/NOTICE).
EXCLUDED = {
    "test_glad_aggregation.py::test_glad_e_step":
        "private methods: calls GLAD._init, GLAD._join_all and GLAD._e_step, crowd-kit's internals",
    "test_glad_aggregation.py::test_glad_derivative":
        "private methods: calls GLAD._gradient_Q, _compute_Q, _update_alphas_betas and _get_alphas_betas_by_point "
        "(stableval's GLAD is checked against crowd-kit's fitted values in tests/aggregate/test_glad.py)",
    "test_mace_aggregation.py::test_aggregate_mace_on_simple[em]":
        "quirk: asserts crowd-kit's accuracy of 0.9 under method='em' (one task of ten wrong from its random "
        "start); stableval's MACE gets all ten right (1.0)",
    "test_mace_aggregation.py::test_thetas_on_simple":
        "quirk: compares thetas_ to 1e-8 with crowd-kit's one random path (its draw order and internal worker "
        "order); stableval's MACE with crowd-kit's start gives the same labels, other thetas_",
}


def pytest_collection_modifyitems(items: Any) -> None:
    for item in items:
        reason = EXCLUDED.get(item.nodeid.split("crowdkit_upstream/")[-1])
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"excluded: {reason}"))
