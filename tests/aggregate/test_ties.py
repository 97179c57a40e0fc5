"""The tie rules, declared once (``aggregate/ties.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from stableval.aggregate import MajorityVote


def test_the_tie_rules_are_one_vocabulary() -> None:
    """Issue 25: majority vote's ``ties`` and the rater bootstrap's ``ties`` are subsets of one declaration
    (``stableval.aggregate.ties``), and a rule both take breaks the same tie the same way."""
    from stableval.aggregate.majority_vote import TIE_POLICIES
    from stableval.aggregate.ties import TIE_RULES
    from stableval.evaluate.rater_bootstrap import TIES, ground_truth

    assert set(TIE_POLICIES) | set(TIES) == set(TIE_RULES)
    assert MajorityVote.PARAMETERS[0].choices == TIE_POLICIES
    labels = np.array([[0, 2, 1, 2, 0], [1, 1, 2, 2, 1], [2, 0, 2, 0, 1]])  # two ties, one clear majority
    X = np.zeros((3, 5 * 3))
    for item, row in enumerate(labels):
        for rater, level in enumerate(row):
            X[item, rater * 3 + level] += 1
    for rule in sorted(set(TIE_POLICIES) & set(TIES) - {"random"}):
        votes = MajorityVote(ties=rule).fit_matrix(sp.csr_matrix(X), 5, 3).posteriors_
        np.testing.assert_array_equal(votes, ground_truth(labels, 3, ties=rule), err_msg=rule)
    with pytest.raises(ValueError, match="ties='exclude': allowed one of split, lowest, highest, random, first"):
        MajorityVote(ties="exclude")
    with pytest.raises(ValueError, match="ties must be one of split, random, lowest, exclude; got 'first'"):
        ground_truth(labels, 3, ties="first")
