"""GoldMajorityVote against crowd-kit 1.4.2 itself on random answers with gold on a third of the tasks (issue 32)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.crowdkit import GoldMajorityVote

from crowdkit_fixtures import random_answers


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_majority_vote_matches_crowdkit(seed: int) -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")
    answers, truth = random_answers(seed)
    gold = truth.iloc[::3]
    ours = GoldMajorityVote().fit(answers, gold)
    theirs = crowdkit.GoldMajorityVote().fit(answers, gold)
    pd.testing.assert_series_equal(ours.skills_, theirs.skills_.sort_index(), check_names=False)
    # crowd-kit's GoldMajorityVote.predict_proba is its MajorityVote with these skills (called directly: the
    # former breaks on scikit-learn >= 1.6, __sklearn_tags__)
    expected = crowdkit.MajorityVote().fit(answers, skills=theirs.skills_).probas_
    np.testing.assert_allclose(ours.predict_proba(answers).sort_index().to_numpy(),
                               expected.sort_index().sort_index(axis=1).to_numpy(), atol=1e-12)


def test_gold_majority_vote_skills_by_hand() -> None:
    """w1 right on t1, wrong on t3; w2 right on both; w3 answered no gold task and gets no skill."""
    answers = pd.DataFrame({"task": ["t1", "t3", "t1", "t3", "t2"], "worker": ["w1", "w1", "w2", "w2", "w3"],
                            "label": ["x", "x", "x", "y", "x"]})
    model = GoldMajorityVote().fit(answers, pd.Series({"t1": "x", "t3": "y"}))
    assert model.skills_.to_dict() == {"w1": 0.5, "w2": 1.0}
    with pytest.raises(ValueError, match="no skill"):
        model.predict(answers)
