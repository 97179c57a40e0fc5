"""Wawa: parity with crowd-kit 1.4.2 (fixtures made by tests/oracles/make_crowdkit_fixture.py).

Tolerances: 1e-9 on the synthetic set, and on the dog set 1e-9 for the weighted vote from crowd-kit's skills and
for every worker with no tied majority vote (crowd-kit breaks ties by pandas' column order; we give them to the
lowest level)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stableval.aggregate import Judgments, Wawa
from stableval.data.frames import as_table

from crowdkit_fixtures import compare_with_crowdkit, load_crowdkit


def test_wawa_matches_crowdkit_on_synthetic() -> None:
    frame, expected, skills = load_crowdkit("wawa", "synthetic")
    model = Wawa().fit(frame)
    np.testing.assert_allclose(compare_with_crowdkit(model, expected), 0.0, atol=1e-9)
    assert skills is not None
    np.testing.assert_allclose(model.skills_.loc[skills.index], skills, atol=1e-9)


def test_wawa_matches_crowdkit_on_dog_except_for_tie_breaking() -> None:
    frame, expected, skills = load_crowdkit("wawa", "dog")
    assert skills is not None
    table = as_table(frame)
    model = Wawa().fit(table)
    # step 3 alone: the vote weighted by crowd-kit's skills is crowd-kit's answer
    judgments = Judgments(table.response_matrix(), table.n_raters, table.n_levels)
    theirs = judgments.shares(skills.loc[list(table.raters)].to_numpy())
    levels = [c[1:] for c in expected.columns if c.startswith("p")]
    ours = pd.DataFrame(theirs, index=list(table.items), columns=list(table.levels)).loc[expected.index, levels]
    np.testing.assert_allclose(ours.to_numpy(), expected[[f"p{c}" for c in levels]].to_numpy(), atol=1e-9)
    # step 2: every worker who judged no task with a tied majority has crowd-kit's skill
    votes = table.vote_counts()
    tied = (votes == votes.max(axis=1, keepdims=True)).sum(axis=1) > 1
    touched = np.zeros(table.n_raters, dtype=bool)
    touched[table.rater[tied[table.response]]] = True
    clean = [str(r) for r in np.asarray(table.raters)[~touched]]
    assert len(clean) >= 20
    np.testing.assert_allclose(model.skills_.loc[clean], skills.loc[clean], atol=1e-9)
    agree = (model.labels_.loc[expected.index] == expected["label"].astype(str)).mean()
    assert agree >= 0.995  # 805 of 807 tasks
