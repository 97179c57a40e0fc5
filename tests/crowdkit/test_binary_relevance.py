"""BinaryRelevance against crowd-kit 1.4.2 itself on random multi-label answers (issue 32)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.crowdkit import BinaryRelevance, DawidSkene, MajorityVote


def multi_label_answers(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = ["cat", "dog", "bird", "fish"]
    rows = []
    for task in range(30):
        truth = set(rng.choice(labels, rng.integers(1, 3), replace=False))
        for worker in rng.choice(10, 5, replace=False):  # an odd number: no tied vote
            given = {label for label in labels if (label in truth) == (rng.random() < 0.85)}
            rows.append((f"t{task}", f"w{worker}", sorted(given)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.mark.parametrize("base", ["MajorityVote", "DawidSkene"])
def test_binary_relevance_matches_crowdkit(base: str) -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")
    answers = multi_label_answers(3)
    ours = BinaryRelevance({"MajorityVote": MajorityVote, "DawidSkene": DawidSkene}[base]()).fit_predict(answers)
    assert list(ours.index) == list(pd.unique(answers["task"]))  # tasks in order of first appearance
    ours = ours.sort_index()
    theirs = crowdkit.BinaryRelevance(getattr(crowdkit, base)()).fit_predict(answers).sort_index()
    assert [set(labels) for labels in ours] == [set(labels) for labels in theirs]
    assert list(ours.index) == list(theirs.index)
