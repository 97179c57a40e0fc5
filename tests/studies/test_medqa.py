"""Relabeled MedQA: exclusion shares and accuracies derived by hand and analytically."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.datasets.medqa import load_medqa
from stableval.studies.medqa import FILTERS, LETTERS, evaluate_medqa

from paths import shared_file


def test_exclusion_shares_and_accuracies_by_hand(medqa_csv: Path) -> None:
    """Hand derivation (N = 6 questions, 3 ratings drawn with replacement, unanimous vote).

    Exclusion probabilities per question: q2 missing info, q3 label error, q4 multiple answers with probability 1
    (every rater flags); q5 label error with (1/3)³ = 1/27 (one of three raters); q6 missing info with
    (2/4)³ = 1/8; q1 never. Expected shares: missing info (1 + 1/8)/6, label error (1 + 1/27)/6, multiple 1/6,
    missing+label (2 + 1/27 + 1/8)/6, combined (3 + 1/27 + 1/8)/6.

    Predictions: the key itself scores 1 under every filter. The constant answer "A" is right on q1 and q5 only
    (keys A, A): 2/6 on the original key; without multiple answers (q4 always out, nothing else) exactly 2/5;
    combined keeps q1 always, q5 w.p. 26/27, q6 w.p. 7/8 (q2–q4 always out), so the accuracy per draw is 2/3 (both
    kept), 1 (q6 out), 1/2 (q5 out) or 1 (both out), with expectation
    26/27·7/8·2/3 + 26/27·1/8 + 1/27·7/8·1/2 + 1/27·1/8.
    A seeded uniformly random answer: its realised correctness vector c gives c.mean() on the original key, and
    under "multiple answers" exactly (c.sum() − c[q4]) / 5.
    """
    ratings = load_medqa(medqa_csv)
    key = pd.Series(np.asarray(LETTERS)[ratings.key], index=ratings.qids)
    random_answers = np.random.default_rng(11).choice(list(LETTERS), 6)
    preds = {"key": key, "A": ["A"] * 6, "random": random_answers}
    result = evaluate_medqa(ratings, preds, n_draws=20000, seed=4)
    share = result.exclusions.set_index("filter")["share"]
    expected = {"none": 0, "missing_info": (1 + 1 / 8) / 6, "label_error": (1 + 1 / 27) / 6,
                "multiple_answers": 1 / 6, "missing_info+label_error": (2 + 1 / 27 + 1 / 8) / 6,
                "combined": (3 + 1 / 27 + 1 / 8) / 6}
    for name, value in expected.items():
        assert share[name] == pytest.approx(value, abs=0.004), name
    acc = result.accuracy.set_index(["model", "filter"])["accuracy"]
    assert all(acc["key", f] == 1.0 for f in FILTERS)
    assert acc["A", "none"] == pytest.approx(2 / 6)
    assert acc["A", "multiple_answers"] == pytest.approx(2 / 5)
    combined = 26 / 27 * 7 / 8 * 2 / 3 + 26 / 27 * 1 / 8 + 1 / 27 * 7 / 8 / 2 + 1 / 27 / 8
    assert acc["A", "combined"] == pytest.approx(combined, abs=0.003)
    correct = random_answers == np.asarray(LETTERS)[ratings.key]
    assert acc["random", "none"] == pytest.approx(correct.mean())
    assert acc["random", "multiple_answers"] == pytest.approx((correct.sum() - correct[3]) / 5)
    # vote over all raters once: q2, q3, q4 (unanimous among all their raters)
    assert result.exclusions.set_index("filter")["share_all_raters"]["combined"] == pytest.approx(3 / 6)
    # without predictions the exclusion shares are the same
    alone = evaluate_medqa(ratings, None, n_draws=20000, seed=4)
    assert np.array_equal(alone.share_replicates, result.share_replicates) and alone.accuracy.empty


def test_majority_vote(medqa_csv: Path) -> None:
    """Majority of 3: q6 (2 of 4 flag) is out when ≥2 of 3 draws flag: 3·(1/2)³ + (1/2)³ = 1/2."""
    result = evaluate_medqa(load_medqa(medqa_csv), n_draws=20000, how="majority", seed=1)
    share = result.exclusions.set_index("filter")["share"]["missing_info"]
    assert share == pytest.approx((1 + 0.5) / 6, abs=0.004)


def test_real_data_synthetic_predictions() -> None:
    """Key → 1.0 everywhere; constant 'A' → #questions keyed A / 1273 on the original key; a seeded uniform random
    answer has expected accuracy 1/4 under every filter (it is independent of the ratings), so each mean lies
    within 4·sqrt(1/4·3/4/1197) of 1/4 (1197 = fewest questions kept on average)."""
    path = shared_file("medqa_relabelling", "medqa_relabelling.csv")
    with path.open(newline="") as handle:
        keys = {row["qid"]: row["answer_idx"] for row in csv.DictReader(handle)}
    ratings = load_medqa(path)
    qids = ratings.qids
    random = pd.Series(np.random.default_rng(0).choice(list(LETTERS), len(qids)), index=qids)
    preds = {"key": pd.Series(keys), "A": pd.Series("A", index=list(keys)), "random": random}
    result = evaluate_medqa(ratings, preds, n_draws=300, seed=1)
    acc = result.accuracy.set_index(["model", "filter"])["accuracy"]
    assert acc["A", "none"] == pytest.approx(sum(v == "A" for v in keys.values()) / 1273)
    assert all(acc["key", f] == 1.0 for f in FILTERS)
    tolerance = 4 * np.sqrt(0.25 * 0.75 / 1197)
    assert all(abs(acc["random", f] - 0.25) < tolerance for f in FILTERS)


def test_per_question_table_by_hand(medqa_csv: Path) -> None:
    """Issue 31: per question the flag shares and the exclusion probabilities of the hand derivation above
    (q6: 2 of 4 raters flag missing info, share 1/2, unanimous probability (1/2)³ = 1/8; q5: label error 1/3,
    probability 1/27; q2–q4 probability 1; q1 never), and each rater's blind answers."""
    result = evaluate_medqa(load_medqa(medqa_csv), n_draws=20000, seed=4)
    table = result.per_question.set_index("qid")
    assert table["raters"].tolist() == [3, 3, 3, 3, 3, 4]
    assert table["missing_info_share"].tolist() == [0, 1, 0, 0, 0, 0.5]
    assert table["label_error_share"].tolist() == pytest.approx([0, 0, 1, 0, 1 / 3, 0])
    assert table.loc["6", "missing_info_p"] == pytest.approx(1 / 8, abs=0.01)
    assert table.loc["5", "label_error_p"] == pytest.approx(1 / 27, abs=0.006)
    assert table.loc[["2", "3", "4"], "excluded_p"].tolist() == [1, 1, 1] and table.loc["1", "excluded_p"] == 0
    assert table.loc["3", "blind_answers"] == "A; A; A,B" and table.loc["6", "blind_answers"] == "B; B; B; -"
    assert table.loc["5", "blind_key_share"] == pytest.approx(1 / 3)
    # the probabilities average to the shares of the exclusion table
    share = result.exclusions.set_index("filter")["share"]
    assert table["excluded_p"].mean() == pytest.approx(share["combined"])
    assert table["missing_info_p"].mean() == pytest.approx(share["missing_info"])


def test_the_reason_column_is_selectable(tmp_path: Path) -> None:
    """Issue 31: --reason info_missing reads the info_missing flag instead of important_info_missing."""
    from synthetic import MEDQA_HEADER

    path = tmp_path / "r.csv"
    path.write_text(MEDQA_HEADER + "1,a,A,TRUE,['A'],TRUE,FALSE,FALSE,,\n1,b,A,TRUE,['A'],TRUE,TRUE,FALSE,,\n")
    important = evaluate_medqa(load_medqa(path), n_draws=10).per_question
    anything = evaluate_medqa(load_medqa(path, missing="info_missing"), n_draws=10)
    assert important["missing_info_share"].tolist() == [0.5]
    assert anything.per_question["missing_info_share"].tolist() == [1.0]
    assert anything.settings["reason"] == "info_missing"
    from stableval.errors import InputError
    with pytest.raises(InputError, match="allowed one of important_info_missing, info_missing"):
        load_medqa(path, missing="other")


def test_table_says_the_questions_kept_are_a_mean(medqa_csv: Path) -> None:
    """Issue 27: "questions kept" (1,239.1) is a mean over draws; the table says so."""
    import io

    from rich.console import Console

    from stableval.datasets.medqa import load_medqa
    from stableval.studies.medqa import evaluate_medqa

    result = evaluate_medqa(load_medqa(medqa_csv), {}, n_draws=20, seed=0)
    console = Console(file=io.StringIO(), width=200)
    result.render(console)
    assert "mean questions kept" in console.file.getvalue()  # type: ignore[attr-defined]
