"""The rater simulator against analytic and independent results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from stableval.aggregate import MajorityVote, Stableval
from stableval.errors import InputError
from stableval.simulate import RATER_TYPES, SimulationConfig, kendall_tau_b, level_distribution, simulate, true_scores

QUIET = {"strict": 0.0, "lenient": 0.0, "adversarial": 0.0, "hard": 0.0}


# ---------------------------------------------------------------------- truth
def test_true_score_is_the_exact_expected_credit() -> None:
    q = np.array([0.85, 0.5, 0.2])
    credit = (0.0, 0.25, 1.0)
    config = SimulationConfig(qualities=tuple(q), credit=credit)
    by_hand = (1 - q) ** 2 * credit[0] + 2 * q * (1 - q) * credit[1] + q**2 * credit[2]  # Binomial(2, q)
    np.testing.assert_allclose(true_scores(config), by_hand, rtol=0, atol=1e-15)
    # evenly spaced credit: the expected credit of Binomial(K-1, q) / (K-1) is q itself, for any K
    for k in (2, 3, 5, 7):
        np.testing.assert_allclose(true_scores(SimulationConfig(qualities=tuple(q), levels=k)), q, atol=1e-14)
    np.testing.assert_allclose(level_distribution(q, 5), scipy.stats.binom.pmf(np.arange(5)[None], 4, q[:, None]),
                               atol=1e-15)


def test_sampled_levels_follow_the_model() -> None:
    config = SimulationConfig(qualities=(0.9, 0.6, 0.3), items=4000, raters=10, labels_per_response=1, levels=4)
    sim = simulate(config, seed=3)
    expected = level_distribution(config.qualities, 4)
    for a in range(3):
        observed = np.bincount(sim.level[sim.response_agent == a], minlength=4)
        assert scipy.stats.chisquare(observed, expected[a] * observed.sum()).pvalue > 1e-3
    # the realised mean credit is within 4 standard errors of the exact expectation
    variance = (expected * (config.credit_array()[None, :] - true_scores(config)[:, None]) ** 2).sum(axis=1)
    se = np.sqrt(variance / 4000)
    assert np.all(np.abs(sim.sample_scores - sim.true_scores) < 4 * se)


def test_strict_and_lenient_raters_shift_the_scale() -> None:
    base = dict(qualities=(0.7, 0.4), items=300, raters=6, labels_per_response=3, accuracy=(1.0, 1.0),
                shift=(1.0, 1.0), adversarial=0.0, hard=0.0)
    strict = simulate(SimulationConfig(strict=1.0, lenient=0.0, **base), seed=0)  # type: ignore[arg-type]
    np.testing.assert_array_equal(strict.label, np.maximum(strict.level[strict.response] - 1, 0))
    lenient = simulate(SimulationConfig(strict=0.0, lenient=1.0, **base), seed=0)  # type: ignore[arg-type]
    np.testing.assert_array_equal(lenient.label, np.minimum(lenient.level[lenient.response] + 1, 2))


def test_adversarial_raters_reverse_the_scale() -> None:
    config = SimulationConfig(qualities=(0.85, 0.55, 0.2), items=200, raters=8, labels_per_response=3,
                              accuracy=(1.0, 1.0), strict=0.0, lenient=0.0, adversarial=1.0, hard=0.0)
    sim = simulate(config, seed=1)
    assert set(sim.rater_truth()["type"]) == {"adversarial"}
    np.testing.assert_array_equal(sim.label, 2 - sim.level[sim.response])  # exact mirror
    # majority vote on a fully adversarial pool scores 1 - the true credit and reverses the ranking
    table = sim.table()
    mv = MajorityVote().fit(table).posteriors_ @ table.credit
    scores = np.bincount(table.response_agent, weights=mv) / table.responses_per_agent()
    np.testing.assert_allclose(scores, 1.0 - sim.sample_scores, atol=1e-12)
    assert kendall_tau_b(scores, sim.true_scores) == -1.0


def test_hard_responses_get_random_labels() -> None:
    config = SimulationConfig(qualities=(0.95, 0.9), items=2000, raters=5, labels_per_response=2, accuracy=(1, 1),
                              strict=0.0, lenient=0.0, adversarial=0.0, hard=1.0, hard_noise=1.0)
    sim = simulate(config, seed=2)
    observed = np.bincount(sim.label, minlength=3)
    assert scipy.stats.chisquare(observed).pvalue > 1e-3  # uniform whatever the (mostly top) true level
    half = simulate(config.replace(hard=0.5), seed=2)
    wrong = half.label != half.level[half.response]
    assert not wrong[~half.hard[half.response]].any()  # accuracy 1 outside hard responses
    assert 0.5 < wrong[half.hard[half.response]].mean() < 0.8  # 2/3 of uniform labels miss the true level


def test_design_and_population() -> None:
    config = SimulationConfig(items=50, raters=20, labels_per_response=7, strict=0.2, lenient=0.1,
                              adversarial=0.25)
    sim = simulate(config, seed=5)
    pairs = sim.response.astype(np.int64) * config.raters + sim.rater
    assert np.unique(pairs).size == sim.n_judgments  # L distinct raters per response
    assert np.all(np.bincount(sim.response) == 7)
    counts = pd.Series(np.asarray(RATER_TYPES)[sim.rater_type]).value_counts().to_dict()
    assert counts == {"reliable": 9, "strict": 4, "adversarial": 5, "lenient": 2}
    assert np.all((sim.rater_accuracy >= 0.65) & (sim.rater_accuracy <= 0.95))
    # reproducible from the seed, different for another seed
    again = simulate(config, seed=5)
    np.testing.assert_array_equal(sim.label, again.label)
    assert not np.array_equal(sim.label, simulate(config, seed=6).label)


def test_table_round_trip() -> None:
    sim = simulate(SimulationConfig(items=12, raters=6, labels_per_response=2, level_names=("bad", "ok", "good")),
                   seed=0)
    table = sim.table()
    assert (table.n_judgments, table.n_responses, table.n_agents) == (144, 72, 6)
    frame = table.to_frame().merge(sim.response_truth(), on=["item", "agent"])
    assert len(frame) == 144
    rebuilt = sim.frame().merge(sim.response_truth(), on=["item", "agent"])
    pd.testing.assert_frame_equal(frame.sort_values(["item", "agent", "rater"]).reset_index(drop=True),
                                  rebuilt.sort_values(["item", "agent", "rater"]).reset_index(drop=True))


def test_reliable_population_with_many_raters_recovers_the_truth() -> None:
    config = SimulationConfig(qualities=(0.85, 0.7, 0.55, 0.4), items=150, raters=40, labels_per_response=15,
                              accuracy=(0.75, 0.95), **QUIET)  # type: ignore[arg-type]
    sim = simulate(config, seed=4)
    table = sim.table()
    model = Stableval().fit(table)
    # responses are coded in (item, agent) order in both the table and the simulation
    assert (model.posteriors_.argmax(axis=1) == sim.level).mean() > 0.995
    scores = np.bincount(table.response_agent, weights=model.posteriors_ @ table.credit) / 150
    np.testing.assert_allclose(scores, sim.sample_scores, atol=0.01)
    assert kendall_tau_b(scores, sim.true_scores) == 1.0


def test_invalid_settings_name_the_setting() -> None:
    with pytest.raises(InputError, match=r"strict \+ lenient \+ adversarial.*got 1.2"):
        SimulationConfig(strict=0.6, lenient=0.6, adversarial=0.0)
    with pytest.raises(InputError, match=r"option 'labels_per_response'.*allowed: an integer from 1 to raters"):
        SimulationConfig(raters=4, labels_per_response=5)
    with pytest.raises(InputError, match="option 'qualities'"):
        SimulationConfig(qualities=(0.5, 1.2))


@pytest.mark.parametrize(("settings", "name", "says"), [
    ({"items": 1_000_000_000}, "items", "GiB"), ({"levels": 5000}, "levels", "from 2 to 1000"),
    ({"raters": 10_000_000, "levels": 10}, "raters", "GiB")])
def test_a_study_too_large_to_hold_is_refused_with_its_size(settings: dict, name: str, says: str) -> None:
    """Issue 26 (E6): ``--items 1000000000`` was a 22.4 GiB MemoryError, ``--levels 5000`` one of 5.6 GiB."""
    with pytest.raises(InputError) as caught:
        SimulationConfig(**settings)
    assert caught.value.option == name and says in str(caught.value)


@pytest.mark.parametrize(("settings", "name", "says"), [
    ({"items": 1_000_000_000}, "items", "670.6 GiB"), ({"levels": 5000}, "levels", "GiB")])
def test_a_study_too_large_names_the_override(settings: dict, name: str, says: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 (E6): the refusal gives the study's size and names STABLEVAL_ALLOW_LARGE=1, which lifts the bounds
    (the levels bound and the cells bound; monkeypatched small here so the study stays tiny)."""
    with pytest.raises(InputError) as caught:
        SimulationConfig(**settings)
    assert caught.value.option == name and says in str(caught.value)
    assert "STABLEVAL_ALLOW_LARGE=1" in str(caught.value), str(caught.value)
    import stableval.simulate.simulator as simulator

    monkeypatch.setattr(simulator, "MAX_LEVELS", 3)
    monkeypatch.setattr(simulator, "MAX_CELLS", 100)
    with pytest.raises(InputError, match="STABLEVAL_ALLOW_LARGE"):
        SimulationConfig(items=20, levels=4)
    monkeypatch.setenv("STABLEVAL_ALLOW_LARGE", "1")
    assert simulate(SimulationConfig(items=20, levels=4), seed=0).level.max() <= 3
