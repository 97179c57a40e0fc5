# Copied from crowd-kit (github.com/Toloka/crowd-kit, commit 35f06615), tests/aggregation/test_majority_vote.py,
# to run crowd-kit's own tests against stableval.crowdkit. Copyright 2020 Crowd-Kit team authors.
# Licensed under the Apache License, Version 2.0 (LICENSE in this folder); what was changed: NOTICE.
from typing import Any

import pandas as pd
import pytest
from pandas.testing import assert_series_equal

from stableval.crowdkit import (
    GoldMajorityVote,
    MajorityVote,
)

from .data_gold_mv import multiple_gt_df  # noqa F401
from .data_gold_mv import multiple_gt_gt  # noqa F401
from .data_gold_mv import multiple_gt_aggregated, multiple_gt_skills  # noqa F401
from .data_mv import simple_skills_result_mv  # noqa F401


def test_majority_vote_with_skills(
    simple_answers_df: pd.DataFrame,
    simple_skills_result_mv: "pd.Series[Any]",  # noqa F811
) -> None:
    mv = MajorityVote()
    mv.fit_predict(simple_answers_df, skills=simple_skills_result_mv)
    assert mv.skills_ is not None, "no skills_"
    assert_series_equal(mv.skills_, simple_skills_result_mv)


def test_majority_vote_with_missing_skills_value(
    simple_answers_df: pd.DataFrame,
    simple_skills_result_mv: "pd.Series[Any]",  # noqa F811
) -> None:
    mv = MajorityVote(on_missing_skill="value", default_skill=1000000)
    simple_skills_result_mv = simple_skills_result_mv.drop(
        "0c3eb7d5fcc414db137c4180a654c06e"
    )
    mv.fit_predict(simple_answers_df, skills=simple_skills_result_mv)

    frauded_tasks = simple_answers_df[
        simple_answers_df["worker"] == "0c3eb7d5fcc414db137c4180a654c06e"
    ]["task"]
    for task in frauded_tasks:
        assert mv.labels_[task] == "parrot"  # type: ignore


def test_majority_vote_with_missing_skills_error(
    simple_answers_df: pd.DataFrame,
    simple_skills_result_mv: "pd.Series[Any]",  # noqa F811
) -> None:
    mv = MajorityVote(on_missing_skill="error")
    simple_skills_result_mv = simple_skills_result_mv.drop(
        "0c3eb7d5fcc414db137c4180a654c06e"
    )
    with pytest.raises(ValueError):
        mv.fit_predict(simple_answers_df, skills=simple_skills_result_mv)


def test_majority_vote_with_missing_skills_ignore(
    simple_answers_df: pd.DataFrame,
    simple_skills_result_mv: "pd.Series[Any]",  # noqa F811
) -> None:
    mv = MajorityVote(on_missing_skill="ignore")
    simple_skills_result_mv = simple_skills_result_mv.drop(
        "0c3eb7d5fcc414db137c4180a654c06e"
    )
    mv.fit_predict(simple_answers_df, skills=simple_skills_result_mv)
    assert "0c3eb7d5fcc414db137c4180a654c06e" not in mv.skills_.index  # type: ignore


def test_majority_vote_with_missing_skills_ignore_all(
    simple_answers_df: pd.DataFrame,
    simple_skills_result_mv: "pd.Series[Any]",  # noqa F811
) -> None:
    mv = MajorityVote(on_missing_skill="ignore")
    with pytest.raises(ValueError):
        mv.fit_predict(simple_answers_df, skills=pd.Series([], dtype=float))


def test_gold_mv_multiple_gt(
    multiple_gt_df: pd.DataFrame,  # noqa F811
    multiple_gt_gt: "pd.Series[Any]",  # noqa F811
    multiple_gt_skills: "pd.Series[Any]",  # noqa F811
    multiple_gt_aggregated: "pd.Series[Any]",  # noqa F811
) -> None:
    gmv = GoldMajorityVote()
    aggregated = gmv.fit_predict(multiple_gt_df, true_labels=multiple_gt_gt)
    assert aggregated is not None, "no aggregated"
    skills = gmv.skills_
    assert skills is not None, "no skills"
    assert_series_equal(skills, multiple_gt_skills)
    assert_series_equal(aggregated, multiple_gt_aggregated)
