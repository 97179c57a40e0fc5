"""KOS against crowd-kit 1.4.2 itself on random binary answers (issue 32)."""

from __future__ import annotations

import pandas as pd
import pytest

from stableval.crowdkit import KOS

from crowdkit_fixtures import random_answers


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kos_matches_crowdkit(seed: int) -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")
    answers, _ = random_answers(seed, labels=("no", "yes"), per_task=7)
    ours = KOS(n_iter=20).fit(answers).labels_
    theirs = crowdkit.KOS(n_iter=20).fit(answers).labels_.sort_index()
    assert (ours.to_numpy() == theirs.to_numpy()).mean() >= 0.95  # signs of near-zero sums may differ


def test_kos_keeps_boolean_labels_and_refuses_three() -> None:
    answers = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": [1, 2, 3] * 2, "label": [True, True, False] * 2})
    labels = KOS(n_iter=5).fit(answers).labels_
    assert labels.dtype == bool and labels.tolist() == [True, True]
    with pytest.raises(ValueError, match="binary"):
        KOS().fit(answers.assign(label=["a", "b", "c"] * 2))
