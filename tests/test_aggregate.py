"""Aggregators against published and independently computed numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval import AnnotationTable, DawidSkene, MajorityVote, Stableval
from stableval.errors import NotFittedError

from conftest import TEST_DATA, shared_file
from synthetic import synthetic_frame


def anaesthesia_table() -> AnnotationTable:
    raw = pd.read_csv(shared_file("dawid_skene_1979", "anesthesia_long_dallascard.csv"), sep=";")
    frame = pd.DataFrame({"item": raw["patient"].map("{:02d}".format), "agent": "all",
                          "rater": raw["observer"], "label": raw["response"] - 1})
    return AnnotationTable.from_frame(frame, levels=("1", "2", "3", "4"))


def synthetic_table(seed: int = 0, **kwargs: object) -> AnnotationTable:
    frame, _ = synthetic_frame(seed=seed, **kwargs)  # type: ignore[arg-type]
    return AnnotationTable.from_frame(frame, levels=("0", "1", "2"))


# ------------------------------------------------------------------ Dawid & Skene (1979) anaesthesia table
def test_dawid_skene_reproduces_the_anaesthesia_reference() -> None:
    """Reference: dallascard EM output on Table 1 of Dawid & Skene (1979), in ../shared/data."""
    table = anaesthesia_table()
    model = DawidSkene().fit(table)
    # log-likelihood trace printed by the reference implementation (same soft-MV init)
    np.testing.assert_allclose(model.log_likelihood_[:4],
                               [-205.091138294, -194.550952357, -193.159445492, -192.942423964], atol=2e-6)
    assert model.log_likelihood_[-1] == pytest.approx(-192.890882, abs=2e-6)
    np.testing.assert_allclose(model.priors_, [0.400, 0.422, 0.112, 0.067], atol=6e-4)
    np.testing.assert_allclose(model.confusion_[0], [[0.89, 0.11, 0, 0], [0.07, 0.88, 0.05, 0],
                                                     [0, 0.34, 0.66, 0], [0, 0, 0.56, 0.44]], atol=6e-3)
    np.testing.assert_allclose(model.confusion_[2], [[1, 0, 0, 0], [0.11, 0.79, 0.11, 0],
                                                     [0, 0.4, 0.2, 0.4], [0, 0, 0.67, 0.33]], atol=6e-3)
    map_classes = model.posteriors_.argmax(axis=1) + 1  # items are "01".."45", in order
    assert map_classes.tolist() == [1, 4, 2, 2, 2, 2, 1, 3, 2, 2, 4, 3, 1, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1,
                                    2, 1, 1, 1, 1, 3, 1, 2, 2, 4, 2, 3, 3, 1, 1, 1, 2, 1, 2]
    confidence = model.posteriors_.max(axis=1)
    uncertain = {int(table.items[i]): round(float(confidence[i]), 3) for i in np.flatnonzero(confidence < 0.99)}
    assert uncertain == {7: 0.981, 35: 0.948, 38: 0.979}


def test_repeated_judgments_count_as_independent_reports() -> None:
    table = anaesthesia_table()
    assert table.n_judgments == 315 and table.n_responses == 45
    assert table.response_matrix().sum() == 315  # observer 1's three ratings per patient all counted


# ------------------------------------------------------------------ crowd-kit parity
def test_dawid_skene_matches_crowdkit_posteriors() -> None:
    """Fixture made by tests/oracles/make_crowdkit_fixture.py with crowd-kit 1.4.2, run to convergence."""
    data = pd.read_csv(TEST_DATA / "crowdkit_ds_input.csv")
    expected = pd.read_csv(TEST_DATA / "crowdkit_ds_posteriors.csv", index_col=0)
    frame = pd.DataFrame({"item": data["task"], "agent": "x", "rater": data["worker"], "label": data["label"]})
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    model = DawidSkene(tol=1e-12).fit(table)
    ours = pd.DataFrame(model.posteriors_, index=table.items, columns=expected.columns).loc[expected.index]
    np.testing.assert_allclose(ours.to_numpy(), expected.to_numpy(), atol=1e-6)


def test_dawid_skene_matches_crowdkit_live() -> None:
    crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit not installed (test-only oracle)")
    frame, _ = synthetic_frame(n_items=80, seed=3)
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    data = pd.DataFrame({"task": table.response, "worker": table.rater, "label": table.label})
    expected = crowdkit.DawidSkene(n_iter=5000, tol=1e-13).fit(data).probas_.sort_index().to_numpy()
    np.testing.assert_allclose(DawidSkene(tol=1e-12).fit(table).posteriors_, expected, atol=1e-6)


# ------------------------------------------------------------------ EM invariants
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_likelihood_and_log_posterior_never_decrease(seed: int) -> None:
    table = synthetic_table(seed, n_items=120, per_item=3)
    ds = DawidSkene(tol=1e-10).fit(table)
    sv = Stableval(alpha_mu=1.5, alpha_pi=2.0, tol=1e-10).fit(table)
    for history in (ds.log_likelihood_, sv.objective_):
        steps = np.diff(history)
        assert steps.min() > -1e-6 * abs(history[-1]), steps.min()
        assert history[-1] > history[0] + 1.0  # EM actually moved
    assert ds.converged_ and sv.converged_


@pytest.mark.parametrize("model", [DawidSkene(), Stableval(), Stableval(alpha_pi=3.0), MajorityVote()])
def test_posteriors_are_distributions(model: DawidSkene) -> None:
    posteriors = model.fit_predict_proba(synthetic_table(4)).to_numpy()
    assert posteriors.min() >= 0
    np.testing.assert_allclose(posteriors.sum(axis=1), 1.0, atol=1e-12)
    if hasattr(model, "confusion_"):
        np.testing.assert_allclose(model.confusion_.sum(axis=2), 1.0, atol=1e-12)
        assert model.priors_.sum() == pytest.approx(1.0)


def test_stableval_with_flat_priors_equals_dawid_skene() -> None:
    table = synthetic_table(5)
    ds = DawidSkene(tol=1e-12).fit(table)
    flat_soft = Stableval(alpha_mu=1.0, alpha_pi=1.0, init="soft", tol=1e-12).fit(table)
    np.testing.assert_allclose(flat_soft.posteriors_, ds.posteriors_, atol=1e-9)
    # Algorithm 1's own initialisation reaches the same maximum on well-identified data (EM is slow along
    # flat directions, so both run to a very tight tolerance)
    tight_ds = DawidSkene(tol=1e-14, max_iter=5000).fit(table)
    flat_alg1 = Stableval(alpha_mu=1.0, alpha_pi=1.0, tol=1e-14, max_iter=5000).fit(table)
    assert flat_alg1.log_likelihood_[-1] == pytest.approx(tight_ds.log_likelihood_[-1], abs=1e-6)
    np.testing.assert_allclose(flat_alg1.posteriors_, tight_ds.posteriors_, atol=1e-5)
    # alphas -> 1: the MAP solution tends to the ML one
    gaps = [np.abs(Stableval(alpha_mu=1 + d, alpha_pi=1 + d, init="soft", tol=1e-14, max_iter=5000)
                   .fit(table).posteriors_ - tight_ds.posteriors_).max() for d in (1e-2, 1e-3, 1e-4)]
    assert gaps[0] > 4 * gaps[1] > 16 * gaps[2] and gaps[2] < 3e-3


def test_stronger_dirichlet_prior_pulls_confusion_towards_uniform() -> None:
    table = synthetic_table(6, n_items=60)
    diag = [np.diagonal(Stableval(alpha_pi=a).fit(table).confusion_, axis1=1, axis2=2).mean()
            for a in (1.01, 3.0, 30.0)]
    assert diag[0] > diag[1] > diag[2] > 1 / 3


def test_gold_labels_clamp_posteriors() -> None:
    table = synthetic_table(8, n_items=50)
    gold = {("i0", "A"): "2", ("i1", "B"): 0}
    for model in (DawidSkene(), Stableval()):
        posteriors = model.fit(table, gold=gold).posteriors_
        frame = table.response_frame()
        i0 = int(np.flatnonzero((frame["item"] == "i0") & (frame["agent"] == "A"))[0])
        i1 = int(np.flatnonzero((frame["item"] == "i1") & (frame["agent"] == "B"))[0])
        np.testing.assert_allclose(posteriors[i0], [0, 0, 1])
        np.testing.assert_allclose(posteriors[i1], [1, 0, 0])


def test_unknown_gold_response_is_rejected() -> None:
    with pytest.raises(ValueError, match="no judgments"):
        DawidSkene().fit(synthetic_table(8, n_items=10), gold={("nope", "A"): 1})


def test_results_before_fit_raise_a_clear_error() -> None:
    with pytest.raises(NotFittedError, match=r"call fit\(table\) first"):
        _ = DawidSkene().posteriors_
    with pytest.raises(AttributeError):
        _ = DawidSkene().no_such_thing


def test_bad_hyper_parameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="alpha"):
        Stableval(alpha_pi=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        Stableval(epsilon=0)
    with pytest.raises(ValueError, match="ties='coin': allowed one of split"):
        MajorityVote(ties="coin")


# ------------------------------------------------------------------ majority vote
def tie_table() -> AnnotationTable:
    # response q1: 2 votes 'high', 1 'mid' -> high; q2: one 'low', one 'high' -> tie; q3: 'mid','mid','low','high'
    frame = pd.DataFrame({
        "item": ["q1"] * 3 + ["q2"] * 2 + ["q3"] * 4,
        "agent": "A",
        "rater": ["a", "b", "c", "a", "b", "a", "b", "c", "d"],
        "label": [2, 2, 1, 0, 2, 1, 1, 0, 2],
    })
    return AnnotationTable.from_frame(frame, levels=("low", "mid", "high"))


def test_majority_vote_soft_shares_and_tie_policies() -> None:
    table = tie_table()
    split = MajorityVote().fit(table)
    np.testing.assert_allclose(split.vote_shares_, [[0, 1 / 3, 2 / 3], [0.5, 0, 0.5], [0.25, 0.5, 0.25]])
    np.testing.assert_allclose(split.posteriors_, [[0, 0, 1], [0.5, 0, 0.5], [0, 1, 0]])
    assert split.tied_.tolist() == [False, True, False]
    assert MajorityVote(ties="lowest").fit(table).labels_.tolist() == [2, 0, 1]
    assert MajorityVote(ties="highest").fit(table).labels_.tolist() == [2, 2, 1]
    draws = {int(MajorityVote(ties="random", seed=s).fit(table).labels_[1]) for s in range(40)}
    assert draws == {0, 2}  # only tied levels, both reachable
    assert (MajorityVote(ties="random", seed=3).fit(table).labels_
            == MajorityVote(ties="random", seed=3).fit(table).labels_).all()
