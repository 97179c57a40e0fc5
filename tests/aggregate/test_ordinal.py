"""The ordinal (ordered-probit) rater model: its M-step derivatives, likelihood, parameter recovery and plumbing."""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import approx_fprime, minimize
from scipy.stats import norm

from stableval.aggregate import DawidSkene, OrdinalRaters, Stableval
from stableval.aggregate.ordinal import METHOD, ordinal_confusion, ordinal_strength, rater_objective
from stableval.aggregate.registry import default_methods, get_method
from stableval.data.table import AnnotationTable

PRIOR = (1.0, float(np.log(0.5)), 1.0)  # shift_sd, log of the spread's prior median, spread_sd: the defaults


def _objective_by_hand(counts: np.ndarray, b: float, t: float) -> float:
    """One rater's M-step objective written from the formula with scipy's normal CDF, cell by cell."""
    k = counts.shape[0]
    cuts = [-np.inf] + [level + 0.5 for level in range(k - 1)] + [np.inf]
    s = np.exp(t)
    total = 0.0
    for true, given in itertools.product(range(k), range(k)):
        if not counts[true, given]:
            continue
        p = norm.cdf((cuts[given + 1] - true - b) / s) - norm.cdf((cuts[given] - true - b) / s)
        total += counts[true, given] * np.log(p)
    return float(total - 0.5 * (b / PRIOR[0]) ** 2 - 0.5 * ((t - PRIOR[1]) / PRIOR[2]) ** 2)


def _simulate(shifts: np.ndarray, spreads: np.ndarray, n_items: int, k: int, per_item: int,
              seed: int) -> tuple[AnnotationTable, np.ndarray]:
    """Ratings drawn from the model itself: each item's true level uniform, ``per_item`` raters per item."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    n_raters = len(shifts)
    raters = np.stack([rng.choice(n_raters, per_item, replace=False) for _ in range(n_items)])
    latent = truth[:, None] + shifts[raters] + spreads[raters] * rng.standard_normal(raters.shape)
    given = np.clip(np.floor(latent + 0.5), 0, k - 1).astype(int)
    frame = pd.DataFrame({"item": np.repeat(np.arange(n_items), per_item), "agent": "A",
                          "rater": [f"r{r:02d}" for r in raters.ravel()], "label": given.ravel()})
    return AnnotationTable.from_frame(frame, levels=tuple(str(level) for level in range(k))), truth


def _truth_per_response(table: AnnotationTable, truth: np.ndarray) -> np.ndarray:
    """The planted level of every response of the table (the table orders items its own way)."""
    return truth[table.items.to_numpy().astype(int)[table.response_item]]


def test_confusion_rows_match_the_normal_cdf_and_sum_to_one() -> None:
    confusion = ordinal_confusion(np.array([0.3, -1.2]), np.array([0.8, 0.4]), 4)
    assert np.allclose(confusion.sum(axis=2), 1.0)
    # rater 1 (shift -1.2, spread 0.4), true level 2, given level 1: the interval (0.5, 1.5) around 2 - 1.2
    expected = norm.cdf((1.5 - 2 + 1.2) / 0.4) - norm.cdf((0.5 - 2 + 1.2) / 0.4)
    assert confusion[1, 2, 1] == pytest.approx(expected, rel=1e-12)
    # far in the upper tail the survival-function path keeps relative accuracy (the naive difference gives 0)
    tail = ordinal_confusion(np.array([-9.0]), np.array([1.0]), 3)[0, 0, 2]
    assert tail == pytest.approx(norm.sf(0.5 + 1.5 + 9.0 - 1.0), rel=1e-9)  # P(latent > 1.5 | true 0, b=-9)


@pytest.mark.parametrize(("b", "t"), [(0.0, np.log(0.5)), (0.7, -0.2), (-1.5, 0.6)])
def test_m_step_objective_gradient_and_hessian_match_independent_computations(b: float, t: float) -> None:
    counts = np.array([[9.0, 3.0, 0.5], [2.0, 7.0, 4.0], [0.0, 1.5, 8.0]])
    value, grad, hessian = rater_objective(counts[None], np.array([b]), np.array([t]), *PRIOR)
    assert value[0] == pytest.approx(_objective_by_hand(counts, b, t), rel=1e-10)

    def f(theta: np.ndarray) -> float:
        return float(rater_objective(counts[None], theta[:1], theta[1:], *PRIOR)[0][0])

    def g_shift(theta: np.ndarray, /) -> float:
        return float(rater_objective(counts[None], theta[:1], theta[1:], *PRIOR)[1][0, 0])

    def g_log_spread(theta: np.ndarray, /) -> float:
        return float(rater_objective(counts[None], theta[:1], theta[1:], *PRIOR)[1][0, 1])

    point = np.array([b, t])
    assert np.allclose(grad[0], approx_fprime(point, f, 1e-7), rtol=1e-5, atol=1e-5)
    numeric = np.stack([approx_fprime(point, g_shift, 1e-7), approx_fprime(point, g_log_spread, 1e-7)])
    assert np.allclose(hessian[0], numeric, rtol=1e-4, atol=1e-4)


def test_newton_m_step_reaches_scipy_optimum_for_every_rater_at_once() -> None:
    rng = np.random.default_rng(3)
    counts = rng.gamma(1.0, 3.0, size=(6, 4, 4)) + 10.0 * np.eye(4)[None]
    counts[2] = np.diag([20.0, 0, 0, 0])  # a rater who saw one level only: the priors hold the rest
    counts[3] = 0.0  # a rater with no counts at all: the prior mode
    counts[4, :, 0] += 15.0  # a strict one
    model = OrdinalRaters()
    shift, log_spread, value = model._raters_m_step(counts, np.zeros(6), np.full(6, np.log(0.5)))
    for r in range(6):
        def negative(x: np.ndarray, /, r: int = r) -> float:
            return -_objective_by_hand(counts[r], float(x[0]), float(x[1]))

        best = minimize(negative, x0=np.array([0.0, np.log(0.5)]), method="Nelder-Mead",
                        options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 4000})
        assert -best.fun <= value[r] + 1e-7
        assert np.allclose([shift[r], log_spread[r]], best.x, atol=1e-4)
    assert shift[3] == 0.0 and log_spread[3] == pytest.approx(np.log(0.5))
    assert shift[4] < -0.3  # the strict rater reads low


@pytest.mark.parametrize("strength", [np.inf, 2.0])
def test_likelihood_matches_brute_force_enumeration_on_three_items(strength: float) -> None:
    frame = pd.DataFrame({"item": [1, 1, 2, 2, 2, 3, 3], "agent": "A", "rater": ["a", "b", "a", "b", "c", "b", "c"],
                          "label": [2, 1, 0, 0, 1, 2, 2]})
    table = AnnotationTable.from_frame(frame, levels=("0", "1", "2"))
    model = OrdinalRaters(max_iter=3, strength=strength).fit(table)
    rater_code = {name: code for code, name in enumerate(table.raters)}
    pi, mu = model.confusion_, model.priors_
    labels = {(1, "a"): 2, (1, "b"): 1, (2, "a"): 0, (2, "b"): 0, (2, "c"): 1, (3, "b"): 2, (3, "c"): 2}
    total = 0.0  # sum over all 3^3 joint true levels of the complete-data likelihood
    for levels in itertools.product(range(3), repeat=3):
        p = 1.0
        for item, z in zip((1, 2, 3), levels, strict=True):
            p *= mu[z]
            for (it, rater), given in labels.items():
                if it == item:
                    p *= pi[rater_code[rater], z, given]
        total += p
    assert model.log_likelihood_[-1] == pytest.approx(np.log(total), rel=1e-9)


@pytest.mark.parametrize("strength", [np.inf, "auto"])
def test_em_objective_never_decreases(strength: float | str) -> None:
    table, _ = _simulate(np.array([0.6, -0.6, 0.0, 0.3]), np.array([0.6, 0.6, 1.0, 0.4]), 80, 5, 3, seed=1)
    model = OrdinalRaters(strength=strength).fit(table)
    assert model.converged_
    assert np.all(np.diff(model.objective_) >= -1e-9 * np.abs(model.objective_[1:]))


def test_planted_shifts_and_spreads_are_recovered_with_sign_and_size() -> None:
    shifts = np.array([-0.8, -0.4, 0.0, 0.0, 0.4, 0.8, 0.2, -0.2])
    spreads = np.array([0.4, 0.6, 0.5, 0.9, 0.5, 0.4, 0.7, 0.3])
    table, truth = _simulate(shifts, spreads, 600, 5, 4, seed=7)
    model = OrdinalRaters(strength=np.inf).fit(table)
    assert np.allclose(model.confusion_, ordinal_confusion(model.shift_, model.spread_, 5))
    order = np.array([int(name[1:]) for name in table.raters])  # table rater code -> planted rater
    assert np.allclose(model.shift_, shifts[order], atol=0.12)
    assert np.allclose(model.spread_, spreads[order], rtol=0.25)
    assert np.sign(model.shift_[np.abs(shifts[order]) >= 0.2]).tolist() == np.sign(
        shifts[order][np.abs(shifts[order]) >= 0.2]).tolist()
    accuracy = float((model.posteriors_.argmax(axis=1) == _truth_per_response(table, truth)).mean())
    assert accuracy > 0.85


def test_ordinal_beats_dawid_skene_when_raters_are_sparse_and_ordinal() -> None:
    """Where it helps: 40 raters with ~30 judgments each on a 5-level scale cannot fill a 5x5 confusion matrix."""
    rng = np.random.default_rng(11)
    shifts, spreads = rng.normal(0.0, 0.5, 40), rng.uniform(0.4, 0.9, 40)
    table, truth = _simulate(shifts, spreads, 300, 5, 4, seed=12)
    gold = _truth_per_response(table, truth)
    ordinal = float((OrdinalRaters().fit(table).posteriors_.argmax(axis=1) == gold).mean())
    ds = float((DawidSkene().fit(table).posteriors_.argmax(axis=1) == gold).mean())
    assert ordinal > ds + 0.03


def test_strength_zero_is_map_dawid_skene_and_auto_follows_the_evidence() -> None:
    table, _ = _simulate(np.array([0.5, -0.5, 0.0, 0.2]), np.array([0.5, 0.7, 0.5, 0.4]), 120, 4, 3, seed=4)
    free = OrdinalRaters(strength=0.0).fit(table)
    reference = Stableval(init="soft", alpha_mu=1.01).fit(table)  # flat confusion prior, MAP EM from the vote shares
    assert free.objective_[-1] >= reference.objective_[-1] - 1e-6 * abs(reference.objective_[-1])
    assert free.strength_ == 0.0
    # data drawn from the ordinal model ask for a strong pull towards its rows
    assert OrdinalRaters().fit(table).strength_ > 10.0
    shape = ordinal_confusion(np.zeros(3), np.full(3, 0.6), 4)
    assert ordinal_strength(50 * shape, shape) > 100 * ordinal_strength(50 * shape[:, :, ::-1], shape)


def test_gold_clamps_known_responses() -> None:
    table, truth = _simulate(np.array([0.5, -0.5, 0.0]), np.array([0.5, 0.5, 0.5]), 30, 3, 3, seed=2)
    gold = np.full(table.n_responses, -1)
    gold[:5] = (_truth_per_response(table, truth)[:5] + 1) % 3  # deliberately different from the votes
    model = OrdinalRaters().fit_matrix(table.response_matrix(), table.n_raters, table.n_levels, gold=gold)
    assert model.posteriors_[np.arange(5), gold[:5]].tolist() == [1.0] * 5


@pytest.mark.parametrize(("params", "message"), [({"shift_sd": 0}, "shift_sd=0: allowed a number > 0"),
                                                 ({"spread": -1.0}, "spread=-1.0: allowed a number > 0"),
                                                 ({"alpha_mu": 0.5}, "alpha_mu=0.5: allowed a number ≥ 1"),
                                                 ({"max_iter": 0}, "max_iter=0: allowed an integer in [1, 1000000]"),
                                                 ({"strength": -1}, "strength=-1: allowed a number in [0, inf], "
                                                                    "or one of auto"),
                                                 ({"strength": "big"}, "strength='big': allowed"),
                                                 ({"init": "paper"}, "init='paper': allowed one of best, soft, hard")])
def test_bad_hyper_parameters_are_refused_by_name(params: dict[str, Any], message: str) -> None:
    """The messages of the parameter declarations (issue 25): the name, the value and what is allowed."""
    with pytest.raises(ValueError, match=re.escape(message)):
        OrdinalRaters(**params)


def test_registered_as_an_optional_rater_model() -> None:
    assert get_method("ordinal") is METHOD and METHOD.rater_model and METHOD.batch == "each"
    assert "ordinal" not in default_methods() and not METHOD.primary
    assert get_method("ordinal").build(shift_sd=0.5).get_params()["shift_sd"] == 0.5
    assert OrdinalRaters(strength="inf").strength == np.inf  # as --param ordinal.strength=inf gives it


def test_diagnose_lists_each_raters_shift_and_spread() -> None:
    import io

    from rich.console import Console

    from stableval.evaluate.diagnostics import diagnose

    shifts = np.array([-0.7, 0.0, 0.7, 0.0])
    table, _ = _simulate(shifts, np.full(4, 0.5), 150, 4, 3, seed=5)
    result = diagnose(table, "ordinal", params={"strength": "inf"})
    shift = dict(zip(result.raters["rater"], result.raters["shift"].to_numpy(dtype=float), strict=True))
    assert shift["r00"] < -0.4 < 0.4 < shift["r02"]
    assert result.raters["spread"].between(0.25, 0.8).all()
    buffer = io.StringIO()
    result.render(Console(file=buffer, width=200))
    assert "Ordinal reading" in buffer.getvalue() and "r00 -0." in buffer.getvalue()
    assert "shift" not in diagnose(table, "ds").raters.columns
