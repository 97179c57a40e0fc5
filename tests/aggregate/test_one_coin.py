"""One-coin Dawid–Skene: parity with crowd-kit 1.4.2 (fixtures made by tests/oracles/make_crowdkit_fixture.py),
a hand-worked step, gold, parameters, and skills by rater name.

Tolerances: 1e-5 on the dog set, where crowd-kit runs 296 EM steps to convergence, and 1e-9 step for step on the
synthetic set, where crowd-kit stops after 3 steps because its objective dips (so the comparison is at 3 steps;
fully converged the labels agree)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.aggregate import OneCoinDawidSkene, Wawa, ZeroBasedSkill

from crowdkit_fixtures import compare_with_crowdkit, load_crowdkit


def test_one_coin_matches_crowdkit_converged_on_dog() -> None:
    frame, expected, skills = load_crowdkit("onecoin", "dog")
    model = OneCoinDawidSkene(tol=1e-12, max_iter=5000).fit(frame)
    assert model.converged_
    np.testing.assert_allclose(compare_with_crowdkit(model, expected), 0.0, atol=1e-5)
    assert skills is not None
    np.testing.assert_allclose(model.skills_.loc[skills.index], skills, atol=1e-6)
    assert (model.labels_.loc[expected.index] == expected["label"].astype(str)).all()


def test_one_coin_matches_crowdkit_step_for_step_on_synthetic() -> None:
    frame, expected, _ = load_crowdkit("onecoin", "synthetic")
    fitted = OneCoinDawidSkene(max_iter=3).fit(frame)
    np.testing.assert_allclose(compare_with_crowdkit(fitted, expected), 0.0, atol=1e-9)
    converged = OneCoinDawidSkene(tol=1e-12).fit(frame)
    assert (converged.labels_.loc[expected.index] == expected["label"].astype(str)).all()
    assert np.abs(compare_with_crowdkit(converged, expected)).max() > 1e-3  # crowd-kit had stopped short of this


def test_one_coin_hand_worked() -> None:
    """Two levels, raters a (always right) and b (right once in two); vote-share start, one EM step by hand."""
    frame = pd.DataFrame({"task": ["t1", "t1", "t2", "t2"], "worker": ["a", "b", "a", "b"], "label": [1, 1, 0, 1]})
    model = OneCoinDawidSkene(max_iter=1).fit(frame)
    # M-step from vote shares [[0, 1], [.5, .5]]: s_a = (1 + .5)/2 = .75, s_b = (1 + .5)/2 = .75; priors [.25, .75]
    np.testing.assert_allclose(model.accuracy_, [0.75, 0.75])
    # E-step, t2: level 0 ∝ .25 · .75 · .25, level 1 ∝ .75 · .25 · .75
    np.testing.assert_allclose(model.posteriors_[1], [0.25, 0.75])
    np.testing.assert_allclose(model.errors_.loc[("a", "0")].to_numpy(), [0.75, 0.25])


def test_gold_clamps_and_informs_the_skills() -> None:
    frame = pd.DataFrame({"item": ["q1", "q1", "q1", "q2", "q2", "q2"], "agent": "A", "rater": list("abcabc"),
                          "label": [1, 1, 0, 0, 0, 0]})
    gold = {("q1", "A"): 0}
    for model in (OneCoinDawidSkene(), Wawa(), ZeroBasedSkill()):
        fitted = model.fit(frame, gold=gold)
        assert fitted.posteriors_[0].tolist() == [1.0, 0.0]
        assert fitted.skills_["c"] > fitted.skills_["a"]  # c agreed with the known level


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="n_iter=-1: allowed an integer ≥ 0"):  # 0 rounds (the plain vote) is
        ZeroBasedSkill(n_iter=-1)                                                 # crowd-kit's n_iter=0 (issue 32)
    with pytest.raises(ValueError, match="max_iter=0: allowed an integer in \\[1, 1000000\\]"):
        OneCoinDawidSkene(max_iter=0)
