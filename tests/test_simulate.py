"""The rater simulator, the batched EM kernel and the ablation metrics, against analytic and independent results."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from typer.testing import CliRunner

from stableval.aggregate import DawidSkene, MajorityVote, Stableval
from stableval.aggregate.batch_em import ProblemBatch, batch_em, batch_fit
from stableval.cli import app
from stableval.data.table import AnnotationTable
from stableval.errors import InputError
from stableval.evaluate.intervals import t_interval
from stableval.simulate import (
    RATER_TYPES,
    SimulationConfig,
    kendall_tau_b,
    level_distribution,
    mean_subset_tau,
    rank_accuracy,
    simulate,
    true_scores,
)
from stableval.simulate.raters import adversarial_confusion, reliable_confusion, shift_confusion

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


# ---------------------------------------------------------------------- raters
def test_confusion_matrices_are_stochastic_and_structured() -> None:
    accuracy = np.array([0.7, 0.9])
    for k in (2, 3, 5):
        reliable = reliable_confusion(accuracy, k)
        np.testing.assert_allclose(reliable.sum(axis=2), 1.0)
        np.testing.assert_allclose(np.diagonal(reliable, axis1=1, axis2=2), accuracy[:, None] * np.ones(k))
        reverse = adversarial_confusion(accuracy, k, "reverse")
        np.testing.assert_allclose(reverse, reliable[:, :, ::-1])  # level o reported as K-1-o
        np.testing.assert_allclose(adversarial_confusion(accuracy, k, "random"), 1.0 / k)
    # K = 5, accuracy 0.7: 80% of the 0.3 error mass to the neighbours of level 0 (only level 1)
    row0 = reliable_confusion(np.array([0.7]), 5)[0, 0]
    np.testing.assert_allclose(row0, [0.7, 0.24, 0.02, 0.02, 0.02])
    strict = shift_confusion(np.eye(3)[None], np.array([0.3]), -1)[0]
    np.testing.assert_allclose(strict, [[1, 0, 0], [0.3, 0.7, 0], [0, 0.3, 0.7]])


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


# ---------------------------------------------------------------------- batched EM
def _problems(seed: int) -> tuple[list, list]:
    config = SimulationConfig(items=40, raters=12, labels_per_response=4, adversarial=0.2, hard=0.1)
    sims = [simulate(config, seed=seed + i) for i in range(3)]
    problems = [(s.response, s.rater, s.label, s.n_responses) for s in sims]
    # a rater subset, re-coded as in the grid (responses without judgments dropped)
    s = sims[0]
    keep = np.isin(s.rater, np.arange(0, 12, 2))
    used, code = np.unique(s.response[keep], return_inverse=True)
    problems.append((code, s.rater[keep], s.label[keep], used.size))
    return problems, sims


@pytest.mark.parametrize("max_iter", [500, 7])  # 7: most problems stop at max_iter, unconverged
@pytest.mark.parametrize("method", ["ds", "stableval"])
def test_batched_em_matches_the_single_table_estimators(method: str, max_iter: int) -> None:
    problems, _ = _problems(10)
    batch = ProblemBatch.from_problems(problems, n_raters=12, n_levels=3)
    plain = {"max_iter": max_iter, "acceleration": "none"}  # the batch runs plain EM steps
    fit = batch_em(batch, DawidSkene(**plain) if method == "ds" else Stableval(**plain))
    for p, (response, rater, label, _n) in enumerate(problems):
        # zero-padded item names keep the table's (sorted) response order equal to the batch's
        frame = pd.DataFrame({"item": [f"{i:05d}" for i in response], "agent": "A", "rater": rater,
                              "label": label})
        table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
        model = (DawidSkene(**plain) if method == "ds" else Stableval(**plain)).fit(table)
        rows = slice(batch.starts[p], batch.starts[p + 1])
        np.testing.assert_allclose(fit.posteriors[rows], model.posteriors_, atol=1e-6)
        assert fit.n_iter[p] == model.n_iter_
        assert fit.converged[p] == model.converged_
        assert fit.objective[p] == pytest.approx(model.objective_[-1], rel=1e-9)
        np.testing.assert_array_equal(batch_fit(batch, MajorityVote()).distribution[rows],
                                      MajorityVote().fit(table).posteriors_)


def test_a_problem_gives_the_same_bits_alone_or_in_any_batch() -> None:
    problems, _ = _problems(20)
    together = batch_em(ProblemBatch.from_problems(problems, 12, 3), Stableval())
    alone = batch_em(ProblemBatch.from_problems(problems[2:3], 12, 3), Stableval())
    shuffled = batch_em(ProblemBatch.from_problems([problems[3], problems[2]], 12, 3), Stableval())
    batch = ProblemBatch.from_problems(problems, 12, 3)
    rows = slice(batch.starts[2], batch.starts[3])
    np.testing.assert_array_equal(together.posteriors[rows], alone.posteriors)
    np.testing.assert_array_equal(shuffled.posteriors[problems[3][3]:], alone.posteriors)


# ---------------------------------------------------------------------- metrics
def test_kendall_tau_b_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(200, 6)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(200, 6)).astype(float)
    ours = kendall_tau_b(x, y)
    for row in range(200):
        expected = scipy.stats.kendalltau(x[row], y[row]).statistic
        if np.isnan(expected):
            assert np.isnan(ours[row])
        else:
            assert ours[row] == pytest.approx(expected, abs=1e-12)


def test_rank_accuracy_and_stability_by_hand() -> None:
    truth = np.array([0.9, 0.7, 0.5, 0.3])
    assert rank_accuracy(np.array([0.8, 0.9, 0.5, 0.3]), truth) == pytest.approx(5 / 6)  # one pair swapped
    assert rank_accuracy(np.array([0.8, 0.8, 0.5, 0.3]), truth) == pytest.approx(5.5 / 6)  # one pair tied
    full = np.array([0.9, 0.7, 0.5, 0.3])
    subsets = np.array([[0.9, 0.7, 0.5, 0.3], [0.3, 0.5, 0.7, 0.9], [0.8, 0.9, 0.5, 0.3]])
    # tau_b: 1, -1 and (5 - 1) / 6
    assert mean_subset_tau(full, subsets) == pytest.approx((1 - 1 + 4 / 6) / 3)


def test_t_interval_matches_scipy() -> None:
    values = np.random.default_rng(1).normal(size=25)
    _mean, sd, low, high, n = t_interval(values)
    expected = scipy.stats.t.interval(0.95, 24, loc=values.mean(), scale=scipy.stats.sem(values))
    assert (low, high) == pytest.approx(expected, abs=1e-12)
    assert n == 25 and sd == pytest.approx(values.std(ddof=1))
    assert math.isnan(t_interval(np.array([np.nan]))[0])


# ---------------------------------------------------------------------- CLI
def test_simulate_command_writes_a_table_every_command_can_read(tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "study.csv"
    result = runner.invoke(app, ["simulate", "-o", str(out), "--items", "20", "--raters", "8", "-L", "3",
                                 "--levels", "bad,ok,good", "--qualities", "0.9,0.5,0.2", "--seed", "3"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["item", "agent", "rater", "label"] and len(frame) == 180
    agents = pd.read_csv(tmp_path / "study.agents.csv")
    np.testing.assert_allclose(agents["true_score"], [0.9, 0.5, 0.2])
    assert len(pd.read_csv(tmp_path / "study.responses.csv")) == 60
    assert len(pd.read_csv(tmp_path / "study.raters.csv")) == 8
    scored = runner.invoke(app, ["score", str(out), "--levels", "bad,ok,good", "-B", "0", "-f", "csv"])
    assert scored.exit_code == 0, scored.output
    # same seed, same file
    again = tmp_path / "again.csv"
    runner.invoke(app, ["simulate", "-o", str(again), "--items", "20", "--raters", "8", "-L", "3",
                        "--levels", "bad,ok,good", "--qualities", "0.9,0.5,0.2", "--seed", "3"])
    assert again.read_text() == out.read_text()


def test_simulate_command_rejects_bad_settings(tmp_path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), "--strict", "0.6", "--lenient", "0.6"])
    assert result.exit_code == 1
    assert "add up to more than 1" in result.output
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.csv"), "--raters", "4", "-L", "6"])
    assert result.exit_code == 1 and "option '--labels-per-response'" in result.output
    result = runner.invoke(app, ["simulate", "-o", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2
