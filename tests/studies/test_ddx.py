"""Dermatology DDx: hand-derived bootstrap probabilities, synthetic predictors with known accuracy, real data."""

from __future__ import annotations

import json
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from stableval.datasets.ddx import DDxAnnotations, load_ddx
from stableval.studies.ddx import evaluate_ddx, noisy_predictor, positions

from paths import shared_file
from synthetic import certain_ddx_cases


def test_bootstrap_probability_with_ties_shared() -> None:
    """Rankings r1 = [a], [b] and r2 = [b]; 3 draws with replacement, n1 = number of r1 draws ~ Bin(3, 1/2).
    Scores: a = n1, b = n1/2 + (3 − n1). a wins iff n1 = 3 (prob 1/8); a and b tie iff n1 = 2 (prob 3/8, shared
    1/2 each). So P(truth = a) = 1/8 + 3/16 = 5/16, P(truth = b) = 11/16. A model ranking a first has expected top-1
    accuracy 5/16 and top-2 accuracy 1. Certainty: all rankings give a = 1, b = 1.5 → top-1 b, so certainty 11/16.
    """
    ann = DDxAnnotations.from_selectors([[[[0], [1]], [[1]]]], conditions=["a", "b", "c"])
    result = evaluate_ddx(ann, {"m": np.array([[0.9, 0.5, 0.1]])}, n_draws=20000, top_k=(1, 2), seed=3)
    acc = result.accuracy.set_index("k")["accuracy"]
    assert acc[1] == pytest.approx(5 / 16, abs=0.01)
    assert acc[2] == pytest.approx(1.0)
    assert result.certainty["certainty"][0] == pytest.approx(11 / 16, abs=0.01)
    assert result.accuracy.set_index("k")["frozen_accuracy"][1] == 0.0


def test_noisy_predictor_accuracy_is_exact_on_certain_cases() -> None:
    """When every ranking of a case puts the same condition first, every draw's truth is that condition, so the
    bootstrap accuracy equals the accuracy against it, with a zero-width interval; the truth sits at the
    predictor's recorded position, so top-k accuracy = share of cases with position < k, and per risk stratum the
    same share among cases whose truth has that risk. In expectation: p, p + (1−p)·2/9, p + (1−p)·4/9."""
    ann, truth = certain_ddx_cases(600, 30, seed=0)
    scores = noisy_predictor(ann, 0.6, seed=5)
    pos = positions(scores)[np.arange(600), truth]
    result = evaluate_ddx(ann, {"noisy": scores}, n_draws=50, seed=0)
    acc = result.accuracy.set_index(["k", "risk"])
    risk = ann.risks[truth]
    for k in (1, 3, 5):
        assert acc.loc[(k, "all"), "accuracy"] == pytest.approx(np.mean(pos < k))
        assert acc.loc[(k, "all"), "ci_low"] == pytest.approx(acc.loc[(k, "all"), "ci_high"])
        assert acc.loc[(k, "all"), "frozen_accuracy"] == pytest.approx(np.mean(pos < k))
        for r, name in enumerate(("low", "medium", "high")):
            assert acc.loc[(k, name), "accuracy"] == pytest.approx(np.mean(pos[risk == r] < k))
            assert acc.loc[(k, name), "cases"] == pytest.approx(np.sum(risk == r))
    expected = {1: 0.6, 3: 0.6 + 0.4 * 2 / 9, 5: 0.6 + 0.4 * 4 / 9}
    for k, value in expected.items():
        assert acc.loc[(k, "all"), "accuracy"] == pytest.approx(value, abs=4 * np.sqrt(value * (1 - value) / 600))
    assert np.all(result.certainty["certainty"] == 1.0)


def test_mixing_certain_and_coin_flip_cases() -> None:
    """Half the cases are certain (truth t, predicted first); half have two single-condition rankings [a] and [b]
    (3 draws: a wins with probability 1/2, no ties with an odd number of draws), with a predicted first, b second.
    Expected top-1 accuracy (1 + 1/2)/2 = 3/4; top-3 accuracy 1; certainty of a coin-flip case: the all-rankings
    top-1 is the tie {a, b}, so each draw agrees with probability 1/2 (|{a} ∩ {a,b}| / (1·2))."""
    cases, scores = [], []
    for i in range(200):
        row = np.zeros(6)
        if i % 2 == 0:
            cases.append([[[0]], [[0], [1]]])
            row[0] = 1
        else:
            cases.append([[[2]], [[3]]])
            row[2], row[3] = 1.0, 0.5
        scores.append(row)
    ann = DDxAnnotations.from_selectors(cases, conditions=list("abcdef"))
    result = evaluate_ddx(ann, {"m": np.array(scores)}, n_draws=400, seed=1)
    acc = result.accuracy.set_index("k")
    assert acc.loc[1, "accuracy"] == pytest.approx(0.75, abs=0.01)
    assert acc.loc[3, "accuracy"] == pytest.approx(1.0)
    assert np.allclose(result.certainty["certainty"][1::2], 0.5)
    assert result.least_certain(3)["case"].tolist() == [1, 3, 5]


def _irn_oracle(selectors: list) -> list[set[int]]:
    """Top-1 sets from exact fractions, one case at a time (independent of the vectorised code)."""
    tops = []
    for case in selectors:
        score: dict[int, Fraction] = defaultdict(Fraction)
        for ranking in case:
            for g, group in enumerate(ranking, start=1):
                for cond in group:
                    score[cond] += Fraction(1, g)
        best = max(score.values())
        tops.append({c for c, v in score.items() if v == best})
    return tops


def test_real_data_irn_and_certainty() -> None:
    path = shared_file("dermatology_ddx", "data", "dermatology_selectors.json")
    ann = load_ddx(path, conditions=path.parent / "dermatology_conditions.txt",
                   risks=path.parent / "dermatology_risks.txt")
    assert (ann.n_cases, ann.n_rankings, ann.n_conditions) == (1947, 9602, 419)
    selectors = json.loads(path.read_text())
    oracle = _irn_oracle(selectors)
    top = ann.top1()
    assert [set(np.flatnonzero(row).tolist()) for row in top] == oracle
    result = evaluate_ddx(ann, {"p": noisy_predictor(ann, 0.7, seed=1)}, n_draws=100, seed=0)
    single = ann.rankings_per_case == 1
    # one ranking: every draw repeats it, so certainty = 1/|top group|² · |top group| = 1/|top group|
    assert np.allclose(result.certainty["certainty"][single], 1 / top[single].sum(axis=1))
    unanimous_top = np.array([len({tuple(r[0]) for r in case}) == 1 and len(case[0][0]) == 1 for case in selectors])
    assert np.all(result.certainty["certainty"][unanimous_top] == 1.0)
    acc = result.accuracy.set_index(["k", "risk"])
    assert acc.loc[(1, "all"), "accuracy"] < acc.loc[(3, "all"), "accuracy"] < acc.loc[(5, "all"), "accuracy"]
    strata = acc.xs(1, level="k").loc[["low", "medium", "high"], "cases"].sum()
    assert strata == pytest.approx(1947)


def test_annotations_record_and_top_entries() -> None:
    """The data record (datasets.ddx) gives the tied IRN top-1 of any rankings; the study scores against it."""
    ann = DDxAnnotations.from_selectors([[[[0]], [[1]]], [[[2], [0]]]], conditions=["a", "b", "c"],
                                        risks=[0, 1, 2])
    row, cond = ann.top_entries(np.arange(ann.n_rankings), np.array([0, 0, 1]))
    assert list(zip(row.tolist(), cond.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 2)]
    result = evaluate_ddx(ann, {"a": np.array([[1.0, 0, 0], [1.0, 0, 0]])}, n_draws=10, top_k=(1,), seed=0)
    payload = result.to_dict(least_certain=1)
    json.dumps(payload, allow_nan=False)
    by_risk = {r["risk"]: r for r in payload["accuracy"]}
    assert by_risk["high"]["frozen_accuracy"] == 0.0 and by_risk["medium"]["accuracy"] == 0.0


@pytest.mark.parametrize("method", ["irn", "borda", "pl", "bayes-pl", "rater-pl"])
def test_every_ranking_method_on_certain_cases(method: str) -> None:
    """Issue 29: on cases whose rankings all put one condition first, every registered method finds that truth in
    every sample (certainty 1 for the bootstrap methods; the frozen key is the truth), and the plausibility of each
    case sums to 1."""
    ann, truth = certain_ddx_cases(30, 6, seed=4)
    scores = noisy_predictor(ann, 0.6, seed=1)
    result = evaluate_ddx(ann, {"m": scores}, method=method, n_draws=20, top_k=(1,), seed=0)
    assert result.settings["method"] == method
    np.testing.assert_allclose(result.plausibility.sum(axis=1), 1.0)
    expected = float(np.mean(positions(scores)[np.arange(30), truth] < 1))
    if method != "bayes-pl":   # its posterior mean and samples may put another condition first on thin cases
        assert (np.argmax(result.plausibility, axis=1) == truth).all()
        assert result.accuracy.set_index("risk")["frozen_accuracy"]["all"] == pytest.approx(expected)
        assert result.accuracy["accuracy"][0] == pytest.approx(expected)
        assert (result.certainty["certainty"] == 1).all()


def test_the_generic_bootstrap_path_equals_the_irn_fast_path() -> None:
    """Issue 29: IRN through the estimator fitted on stacked draws gives the same numbers as the annotations'
    exact-integer path (an IRN subclass is not the fast path)."""
    from stableval.aggregate.rankings import IRN

    class SlowIRN(IRN):
        pass

    ann = DDxAnnotations.from_selectors([[[[0], [1]], [[1]], [[2, 0]]], [[[1]], [[1], [0]]], [[[2]]]],
                                        conditions=["a", "b", "c"])
    scores = {"m": np.array([[0.9, 0.5, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])}
    fast = evaluate_ddx(ann, scores, n_draws=300, top_k=(1, 2), seed=5)
    slow = evaluate_ddx(ann, scores, method=SlowIRN(), n_draws=300, top_k=(1, 2), seed=5)
    np.testing.assert_allclose(slow.replicates, fast.replicates)
    np.testing.assert_allclose(slow.certainty["certainty"], fast.certainty["certainty"])


def test_plausibility_accuracy_is_the_expected_hit() -> None:
    """Rankings [a] and [b]: IRN plausibility a 1/2, b 1/2; a model ranking b first earns 1/2 at k = 1."""
    ann = DDxAnnotations.from_selectors([[[[0]], [[1]]]], conditions=["a", "b"])   # IRN: a 1/2, b 1/2
    result = evaluate_ddx(ann, {"m": np.array([[0.1, 0.9]])}, n_draws=10, top_k=(1,))
    assert result.accuracy["plausibility_accuracy"][0] == pytest.approx(0.5)
    assert result.plausibility_frame()["plausibility"].tolist() == [0.5, 0.5]
