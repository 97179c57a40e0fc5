"""Rater and item diagnostics: hand-computed metrics, the Dawid & Skene (1979) reference, flags, GLAD's
difficulty."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.aggregate import Stableval
from stableval.data import read_annotations
from stableval.data.table import AnnotationTable
from stableval.evaluate.diagnostics import diagnose, posterior_entropy, rater_metrics, spammer_score

from paths import shared_file
from synthetic import planted_table, yes_no_table

# One rater, K = 3, rows = true level, columns = given level; priors mu = (0.5, 0.3, 0.2)
PI = np.array([[0.7, 0.2, 0.1],
               [0.1, 0.6, 0.3],
               [0.0, 0.2, 0.8]])


MU = np.array([0.5, 0.3, 0.2])


def test_rater_metrics_by_hand() -> None:
    row = rater_metrics(PI[None], MU).iloc[0]
    assert row["accuracy"] == pytest.approx((0.7 + 0.6 + 0.8) / 3)                 # 0.7
    assert row["weighted_accuracy"] == pytest.approx(0.5 * 0.7 + 0.3 * 0.6 + 0.2 * 0.8)  # 0.69
    assert row["leniency"] == pytest.approx((0.1 + 0.3 + 0.8) / 3)                 # column K-1: 0.4
    assert row["strictness"] == pytest.approx((0.7 + 0.1 + 0.0) / 3)               # column 0: 0.2667
    # over: true 0 -> given 1 or 2 (0.3), true 1 -> given 2 (0.3), true 2 -> none
    assert row["over_rating"] == pytest.approx(0.5 * 0.3 + 0.3 * 0.3)              # 0.24
    # under: true 1 -> given 0 (0.1), true 2 -> given 0 or 1 (0.2)
    assert row["under_rating"] == pytest.approx(0.3 * 0.1 + 0.2 * 0.2)             # 0.07
    assert row["weighted_accuracy"] + row["over_rating"] + row["under_rating"] == pytest.approx(1.0)
    # spammer score: pairs of rows, squared differences summed over columns, / (K (K-1)) = / 6
    pairs = (0.6**2 + 0.4**2 + 0.2**2) + (0.7**2 + 0.0**2 + 0.7**2) + (0.1**2 + 0.4**2 + 0.5**2)
    assert pairs == pytest.approx(0.56 + 0.98 + 0.42)
    assert row["spammer_score"] == pytest.approx(1.96 / 6)


def test_spammer_score_reference_cases() -> None:
    # binary: Raykar & Yu's (alpha + beta - 1)^2 with sensitivity alpha and specificity beta
    alpha, beta = 0.8, 0.65
    binary = np.array([[beta, 1 - beta], [1 - alpha, alpha]])
    assert spammer_score(binary[None])[0] == pytest.approx((alpha + beta - 1) ** 2)
    # rank one (every row the same: labels independent of the truth) -> 0; identity -> 1
    rank_one = np.tile([0.2, 0.5, 0.3], (3, 1))
    assert spammer_score(np.stack([rank_one, np.eye(3)])) == pytest.approx([0.0, 1.0])
    # symmetric errors with accuracy p: ((K p - 1) / (K - 1))^2; a permutation (always wrong, informative) -> 1
    k, p = 4, 0.55
    symmetric = np.full((k, k), (1 - p) / (k - 1)) + np.eye(k) * (p - (1 - p) / (k - 1))
    flipped = np.eye(3)[::-1]
    assert spammer_score(np.stack([symmetric])) == pytest.approx(((k * p - 1) / (k - 1)) ** 2)
    assert spammer_score(flipped[None]) == pytest.approx(1.0)
    assert rater_metrics(flipped[None], np.full(3, 1 / 3))["accuracy"].iloc[0] == pytest.approx(1 / 3)


def test_entropy_and_ambiguity_by_hand() -> None:
    posteriors = np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0]])
    expected = -(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25))  # 1.0397 nats = 1.5 bits
    np.testing.assert_allclose(posterior_entropy(posteriors), [expected, 0.0])
    assert expected / np.log(2) == pytest.approx(1.5)


def test_response_table_and_ambiguous_listing() -> None:
    # the paper's smoothing (alpha_pi 1.01) keeps every posterior away from 0 and 1 on these few judgments; the
    # default (alpha_pi 1, chosen on the gold benchmark) makes q3 certain
    paper = Stableval(alpha_pi=1.01, init="paper")
    result = diagnose(yes_no_table(), paper, ambiguity_threshold=0.0)
    responses = result.responses
    posterior = responses[["p_no", "p_yes"]].to_numpy()
    np.testing.assert_allclose(posterior.sum(axis=1), 1.0)
    np.testing.assert_allclose(responses["confidence"], posterior.max(axis=1))
    np.testing.assert_allclose(responses["ambiguity"], 1 - posterior.max(axis=1))
    np.testing.assert_allclose(responses["entropy"], posterior_entropy(posterior))
    assert responses[["n_no", "n_yes"]].to_numpy().tolist() == [[0, 3], [3, 0], [1, 2], [1, 1]]
    assert responses["predicted"].tolist() == np.array(["no", "yes"])[posterior.argmax(axis=1)].tolist()
    ambiguous = result.ambiguous
    assert (np.diff(ambiguous["ambiguity"].to_numpy()) <= 0).all()  # most ambiguous first
    assert ambiguous["ambiguity"].gt(0).all() and len(ambiguous) == int(responses["ambiguous"].sum())
    details = dict(zip(ambiguous["item"], ambiguous["details"], strict=True))
    assert details["q4"] == "a=no; b=yes" and details["q3"] == "a=yes; b=no; c=yes"
    # a higher threshold lists fewer, and always exactly those above it
    strict = diagnose(yes_no_table(), paper, ambiguity_threshold=0.005)
    assert set(strict.ambiguous["item"]) == set(responses.loc[responses["ambiguity"] > 0.005, "item"]) == {"q4"}
    raters = result.raters
    assert raters.set_index("rater").loc[["a", "b", "c"], "ratings"].tolist() == [4, 4, 3]
    assert (np.diff(raters["accuracy"].to_numpy()) <= 0).all()


def test_flags_spammer_and_adversary() -> None:
    rng = np.random.default_rng(4)
    n, k = 300, 3
    truth = rng.integers(0, k, n)
    rows = []
    for r in range(6):  # good raters: right 85% of the time
        labels = np.where(rng.random(n) < 0.85, truth, rng.integers(0, k, n))
        rows += [(i, f"good{r}", int(y)) for i, y in enumerate(labels)]
    rows += [(i, "spammer", int(y)) for i, y in enumerate(rng.integers(0, k, n))]   # ignores the truth
    rows += [(i, "adversary", int((z + 1) % k)) for i, z in enumerate(truth)]        # always wrong, systematically
    frame = pd.DataFrame(rows, columns=["item", "rater", "label"]).assign(agent="A")
    table = AnnotationTable.from_frame(frame, levels=("low", "mid", "high"))
    for method in ("ds", "stableval"):
        raters = diagnose(table, method).raters.set_index("rater")
        assert raters.loc["spammer", "near_uniform"] and raters.loc["spammer", "spammer_score"] < 0.05
        assert raters.loc["adversary", "below_chance"] and not raters.loc["adversary", "near_uniform"]
        assert raters.loc["adversary", "accuracy"] < 0.05
        assert raters.loc["adversary", "spammer_score"] > 0.9  # always wrong, but informative (a permutation)
        good = raters.loc[[f"good{r}" for r in range(6)]]
        assert not good["below_chance"].any() and not good["near_uniform"].any()
        assert good["accuracy"].between(0.8, 0.95).all()  # 0.85 + 0.15 / 3 = 0.9 expected
        assert raters.index[-1] == "adversary"  # sorted by accuracy, best first


def read_reference_error_rates(path: Path) -> tuple[np.ndarray, np.ndarray]:
    text = path.read_text()
    marginals = np.array([float(x) for x in re.search(r"Class marginals\s*\[([^\]]*)\]", text).group(1).split()])
    block = text.split("Error rates", 1)[1].split("Incidence-of-error rates", 1)[0]
    numbers = np.array([float(x) for x in re.findall(r"\d+\.\d*", block)])
    return marginals, numbers.reshape(5, 4, 4)


def test_dawid_skene_1979_observer_accuracies_match_reference() -> None:
    data = shared_file("dawid_skene_1979", "anesthesia_long_dallascard.csv")
    reference_file = shared_file("dawid_skene_1979", "reference_em_output_dallascard_impl.txt")
    marginals, error_rates = read_reference_error_rates(reference_file)
    table = read_annotations(data, columns={"item": "patient", "rater": "observer", "label": "response"},
                             levels="1,2,3,4", duplicates="keep", default_agent="all")
    result = diagnose(table, "ds", ambiguity_threshold=0.01)
    raters = result.raters.set_index("rater").loc[["1", "2", "3", "4", "5"]]
    # the reference prints 2 decimals: every cell is within 0.005, so are means and prior-weighted sums
    reference_accuracy = np.diagonal(error_rates, axis1=1, axis2=2).mean(axis=1)
    np.testing.assert_allclose(raters["accuracy"], reference_accuracy, atol=0.005)
    np.testing.assert_allclose(raters["leniency"], error_rates[:, :, 3].mean(axis=1), atol=0.005)
    np.testing.assert_allclose(raters["strictness"], error_rates[:, :, 0].mean(axis=1), atol=0.005)
    reference_weighted = np.diagonal(error_rates, axis1=1, axis2=2) @ marginals
    np.testing.assert_allclose(raters["weighted_accuracy"], reference_weighted, atol=0.01)
    np.testing.assert_allclose(result.priors, marginals, atol=0.005)
    np.testing.assert_allclose(result.confusion_frame("1").to_numpy(), error_rates[0], atol=0.005)
    assert raters["ratings"].tolist() == [135, 45, 45, 45, 45]
    assert raters["responses"].tolist() == [45] * 5
    # the three uncertain patients of the reference output, most ambiguous first
    ambiguous = result.ambiguous
    assert ambiguous["item"].tolist() == ["35", "38", "7"]
    np.testing.assert_allclose(ambiguous["confidence"], [0.948, 0.979, 0.981], atol=0.001)
    assert ambiguous["predicted"].tolist() == ["2", "3", "1"]
    assert ambiguous["details"].iloc[2] == "1=1; 1=2; 1=2; 2=2; 3=1; 4=1; 5=1"  # patient 7 in Table 1


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="confusion matrices"):
        diagnose(yes_no_table(), "mv")
    with pytest.raises(ValueError, match="ambiguity threshold"):
        diagnose(yes_no_table(), ambiguity_threshold=1.0)
    with pytest.raises(ValueError, match="spammer threshold"):
        diagnose(yes_no_table(), spammer_threshold=-0.1)


def test_to_dict_is_strict_json_with_confusion_matrices() -> None:
    result = diagnose(yes_no_table(), "stableval", ambiguity_threshold=0.0)
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert payload["method"] == "STABLEVAL" and payload["levels"] == ["no", "yes"]
    assert payload["responses_total"] == 4 and payload["ambiguous_count"] == len(payload["ambiguous"])
    by_rater = {row["rater"]: row for row in payload["raters"]}
    np.testing.assert_allclose(by_rater["a"]["confusion"], result.confusion_frame("a").to_numpy(), atol=1e-6)
    assert np.allclose(np.sum(by_rater["c"]["confusion"], axis=1), 1.0)


# ---------------------------------------------------------------------------------------------- diagnose
def test_diagnose_shows_glad_difficulty_beside_the_ambiguity() -> None:
    table, hard = planted_table()
    result = diagnose(table, "glad")
    assert result.difficulty_source == "glad"
    assert int(result.responses["difficulty"].to_numpy().argmax()) == hard
    assert result.hardest.iloc[0]["item"] == "i7"
    summary = result.to_dict()["difficulty"]
    assert summary["source"] == "GLAD" and summary["hardest"][0]["item"] == "i7"
    assert summary["spearman_with_entropy"] > 0  # the hard response is also the uncertain one
    plain = diagnose(table, "ds")
    assert plain.difficulty_source is None and "difficulty" not in plain.to_dict()
    beside = diagnose(table, "ds", difficulty=True)
    assert beside.difficulty_source == "glad" and beside.hardest.iloc[0]["item"] == "i7"
    assert "difficulty" not in diagnose(table, "glad", difficulty=False).responses


def test_diagnose_reads_each_raters_own_evidence_not_the_prior_smoothed_rows() -> None:
    """Issue 28: with the pooled prior as the default, ``diagnose`` read STABLEVAL's MAP confusion rows, which the
    prior pulls towards the crowd's: a rater who always gives one level got a spammer score above 0 (0.0029 in the
    portal's planted-raters test) and a random rater of 48 ratings was no longer flagged. The diagnostics now read
    each rater's own expected counts against the fitted consensus (the MAP rows of a flat prior)."""
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, 120)
    rows = []
    for item, level in enumerate(truth):
        for rater in range(4):
            rows.append((item, "A", f"honest-{rater}", int(level) if rng.random() < 0.85 else int(rng.integers(3))))
        rows.append((item, "A", "constant", 2))
        rows.append((item, "A", "random", int(rng.integers(3))))
    table = AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "agent", "rater", "label"]),
                                       levels=("a", "b", "c"))
    result = diagnose(table, "stableval")
    raters = result.raters.set_index("rater")
    assert raters.loc["constant", "spammer_score"] == pytest.approx(0.0, abs=1e-12)
    assert raters.loc["random", "near_uniform"] and raters.loc["constant", "near_uniform"]
    assert not raters.loc[[f"honest-{r}" for r in range(4)], "near_uniform"].any()
    fitted = Stableval().fit(table)
    assert fitted.fit_summary()["prior_from"] == "flat fit" and min(fitted.fit_summary()["prior_strength"]) > 1


def test_fragile_majorities_by_hand() -> None:
    """Issue 31, hand-worked: 3 raters on 5 responses (levels no/yes). q1 3-0: removing any rater leaves 2-0,
    stable. q2 2-1: removing a 'yes' rater gives 1-1, fragile. q3 1-1 (two raters): removing either decides it,
    fragile (a tie). q4 one judgment: never fragile. q5 0-3 stable. So 2 fragile, 1 of them tied; with ambiguity the
    mean of 1 - max posterior over the five responses."""
    import pandas as pd

    from stableval.data import AnnotationTable
    from stableval.evaluate.diagnostics import diagnose, fragile_majorities

    rows = [("q1", "a", 1), ("q1", "b", 1), ("q1", "c", 1), ("q2", "a", 1), ("q2", "b", 1), ("q2", "c", 0),
            ("q3", "a", 1), ("q3", "b", 0), ("q4", "a", 1), ("q5", "a", 0), ("q5", "b", 0), ("q5", "c", 0)]
    frame = pd.DataFrame(rows, columns=["item", "rater", "label"]).assign(agent="A")
    table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
    assert fragile_majorities(table.vote_counts()).tolist() == [False, True, True, False, False]
    result = diagnose(table, "ds")
    findings = result.key_findings()
    assert (findings["fragile_majorities"], findings["ties"], findings["responses"]) == (2, 1, 5)
    assert findings["mean_ambiguity"] == pytest.approx(result.responses["ambiguity"].mean())
    texted = result.with_item_text({"q2": "Is it so?"})
    assert texted.responses.set_index("item")["text"].to_dict() == {"q1": "", "q2": "Is it so?", "q3": "", "q4": "",
                                                                    "q5": ""}


def test_fragile_majorities_is_vectorised_on_a_large_table() -> None:
    """One million responses in well under a second: no loop per row."""
    import time

    import numpy as np

    from stableval.evaluate.diagnostics import fragile_majorities

    counts = np.random.default_rng(0).integers(0, 4, size=(1_000_000, 3))
    start = time.perf_counter()
    fragile = fragile_majorities(counts)
    assert time.perf_counter() - start < 2.0
    top = np.sort(counts, axis=1)
    expected = (counts.sum(axis=1) >= 2) & (top[:, 2] - top[:, 1] <= 1)
    assert np.array_equal(fragile, expected)
