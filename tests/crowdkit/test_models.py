"""stableval.crowdkit's models against crowd-kit 1.4.2 itself on random answers: DawidSkene step by step (with
gold and initial errors), MajorityVote with skills, Wawa and ZeroBasedSkill predicting new data, GLAD's
parameters, MACE's labels (issue 32)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.crowdkit import GLAD, MACE, DawidSkene, MajorityVote, Wawa, ZeroBasedSkill

from crowdkit_fixtures import random_answers

crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")


def aligned(frame: pd.DataFrame) -> np.ndarray:
    return frame.sort_index().sort_index(axis=1).to_numpy()


@pytest.mark.parametrize("n_iter", [0, 1, 3])
def test_dawid_skene_step_by_step_with_gold_and_initial_errors(n_iter: int) -> None:
    answers, truth = random_answers(4)
    gold = truth.iloc[::5]
    theirs_model = crowdkit.DawidSkene(n_iter=n_iter, tol=0.0).fit(answers)
    prior_errors = theirs_model.errors_ * 7.0  # counts from "past work"
    for strategy in ("addition", "assign"):
        initial = prior_errors if strategy == "addition" else theirs_model.errors_
        ours = DawidSkene(n_iter=n_iter, tol=0.0, initial_error_strategy=strategy).fit(answers, gold, initial)
        theirs = crowdkit.DawidSkene(n_iter=n_iter, tol=0.0, initial_error_strategy=strategy).fit(
            answers, gold, initial)
        np.testing.assert_allclose(aligned(ours.probas_), aligned(theirs.probas_), atol=1e-6)
        np.testing.assert_allclose(aligned(ours.errors_), aligned(theirs.errors_), atol=1e-6)
        np.testing.assert_allclose(ours.priors_.sort_index().to_numpy(), theirs.priors_.sort_index().to_numpy(),
                                   atol=1e-6)
        assert ours.priors_.name == "prior" and ours.priors_.index.name == "label"


def test_majority_vote_with_skills_matches_crowdkit() -> None:
    answers, _ = random_answers(5)
    skills = pd.Series(np.linspace(0.2, 0.9, 12), index=pd.Index([f"w{i}" for i in range(12)], name="worker"))
    ours = MajorityVote().fit(answers, skills=skills)
    theirs = crowdkit.MajorityVote().fit(answers, skills=skills)
    np.testing.assert_allclose(aligned(ours.probas_), aligned(theirs.probas_), atol=1e-12)


@pytest.mark.parametrize("model", ["Wawa", "ZeroBasedSkill"])
def test_skills_predict_new_data_as_crowdkit(model: str) -> None:
    answers, _ = random_answers(6, per_task=7)  # seven answers a task: no tied vote
    ours = {"Wawa": Wawa, "ZeroBasedSkill": ZeroBasedSkill}[model]().fit(answers)
    theirs = getattr(crowdkit, model)().fit(answers)
    np.testing.assert_allclose(ours.skills_.to_numpy(), theirs.skills_.sort_index().to_numpy(), atol=1e-9)
    new, _ = random_answers(7, per_task=7)
    expected = crowdkit.MajorityVote().fit(new, skills=theirs.skills_).probas_  # crowd-kit's predict_proba
    np.testing.assert_allclose(aligned(ours.predict_proba(new)), aligned(expected), atol=1e-9)
    assert ours.predict(new) is ours.labels_


def test_glad_parameters_match_crowdkit() -> None:
    answers, _ = random_answers(8, n_tasks=30)
    ours = GLAD(n_iter=20).fit(answers)
    theirs = crowdkit.GLAD(n_iter=20).fit(answers)
    assert (ours.labels_ == theirs.labels_.sort_index()).all()
    np.testing.assert_allclose(ours.alphas_.to_numpy(), theirs.alphas_.sort_index().to_numpy(), atol=0.05)
    np.testing.assert_allclose(ours.betas_.to_numpy(), theirs.betas_.sort_index().to_numpy(), atol=0.05)
    assert ours.alphas_.name == "alpha" and ours.betas_.name == "beta" and len(ours.loss_history_) >= 1


def test_mace_labels_match_crowdkit() -> None:
    answers, _ = random_answers(9)
    ours = MACE(n_restarts=1, n_iter=20).fit(answers)
    theirs = crowdkit.MACE(n_restarts=1, n_iter=20).fit(answers)
    assert (ours.labels_.sort_index() == theirs.labels_.sort_index()).mean() >= 0.95
    assert ours.thetas_.shape == (12, 3) and ours.spamming_.shape == (12, 2)
