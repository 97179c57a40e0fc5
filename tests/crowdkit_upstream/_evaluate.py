"""The accuracy the GLAD and MACE tests ask for (stands in for ``crowdkit.aggregation.utils.evaluate`` and
``evaluate_equal``, which are helpers of crowd-kit's, not part of its models' API)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd


def evaluate_equal(true: Any, predicted: Any) -> float:
    """1 when the predicted label is the true one, else 0."""
    return float(true == predicted)


def evaluate(true_df: pd.DataFrame, predicted_df: pd.DataFrame,
             evaluate_func: Callable[[Any, Any], float] = evaluate_equal) -> float:
    """The mean of ``evaluate_func(true, predicted)`` over the tasks of ``true_df`` (column ``label``, by task)."""
    joined = true_df[["label"]].join(predicted_df[["label"]], rsuffix="_predicted", how="left")
    return float(sum(evaluate_func(t, p) for t, p in zip(joined["label"], joined["label_predicted"], strict=True))
                 / len(joined))
