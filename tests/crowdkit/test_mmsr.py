"""M-MSR against crowd-kit 1.4.2 itself on random answers (issue 32)."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.crowdkit import MMSR

from crowdkit_fixtures import random_answers


@pytest.mark.parametrize("seed", [0, 1])
def test_mmsr_matches_crowdkit(seed: int) -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")
    answers, truth = random_answers(seed, n_tasks=40, n_workers=8, per_task=6)
    ours = MMSR(n_iter=200).fit(answers)
    theirs = crowdkit.MMSR(n_iter=200).fit(answers)
    theirs_labels = theirs.predict(answers).sort_index()
    np.testing.assert_allclose(ours.skills_.to_numpy(), theirs.skills_.sort_index().to_numpy(), atol=1e-6)
    assert (ours.labels_.to_numpy() == theirs_labels.to_numpy()).all()
    assert (ours.labels_ == truth.loc[ours.labels_.index]).mean() > 0.8
