"""ZeroBasedSkill: parity with crowd-kit 1.4.2 to 1e-9 on both sets (the same arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.aggregate import ZeroBasedSkill

from crowdkit_fixtures import compare_with_crowdkit, load_crowdkit


@pytest.mark.parametrize("data", ["synthetic", "dog"])
def test_zero_based_skill_matches_crowdkit(data: str) -> None:
    frame, expected, skills = load_crowdkit("zbs", data)
    model = ZeroBasedSkill().fit(frame)
    np.testing.assert_allclose(compare_with_crowdkit(model, expected), 0.0, atol=1e-9)
    assert skills is not None
    np.testing.assert_allclose(model.skills_.loc[skills.index], skills, atol=1e-9)
    assert (model.labels_.loc[expected.index] == expected["label"].astype(str)).all()
