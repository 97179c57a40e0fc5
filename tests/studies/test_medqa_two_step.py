"""The Relabeled MedQA two-step design: changes after seeing the key and agreement, by hand and on the real file."""

from __future__ import annotations

import ast
import csv
from pathlib import Path

import pytest

from displayed import check_displayed
from stableval.datasets.medqa import load_medqa
from stableval.studies.medqa_two_step import two_step

from paths import shared_file


def test_changes_and_agreement_by_hand(medqa_csv: Path) -> None:
    """The fixture of tests/synthetic.py (MEDQA_ROWS): blind = key on q1 (3), q2 (3), q4b (changed to D,C, accepts),
    q5b, q6 a-c → 11 ratings, 1 changed, all accept; key among others: none; misses the key: q3 (3, c changed to
    A, none accepts), q4a, q4c (changed, accept), q5a (changed, accepts), q5c (changed to no option, rejects) → 7
    ratings, 5 changed, 3 accept; no answer: q6d (changed to B, accepts). Identical blind answer pairs: q1 3, q2 3,
    q3 1 (a, b), q4 1 (a, c), q5 0, q6 3 (a, b, c) = 11 of 3·5 + 6 = 21; seen: q1 3, q2 3, q3 3 (all A), q4 1 (a,
    b: C,D), q5 1 (a, b: A), q6 6 = 17 of 21. Every rater includes the key: blind q1, q2 (q6d gave none); seen q1,
    q2, q4, q6."""
    result = two_step(load_medqa(medqa_csv))
    changes = result.changes.set_index("blind")
    assert changes.loc["key", ["ratings", "changed", "accepts_key"]].tolist() == [11, 1, 11]
    assert changes.loc["key among others", "ratings"] == 0
    assert changes.loc["misses key", ["ratings", "changed", "accepts_key"]].tolist() == [7, 5, 3]
    assert changes.loc["no answer", ["ratings", "changed", "accepts_key"]].tolist() == [1, 1, 1]
    assert changes.loc["all", "ratings"] == 19
    agreement = result.agreement.set_index("measure")
    assert agreement.loc["rater pairs with identical answers", "blind"] == pytest.approx(11 / 21)
    assert agreement.loc["rater pairs with identical answers", "seen"] == pytest.approx(17 / 21)
    assert agreement.iloc[2][["blind", "seen"]].tolist() == [2, 4]
    check_displayed(result)


def test_real_file_matches_a_row_by_row_count() -> None:
    """On the shipped file the counts agree with the stdlib csv module, row by row (and with SOURCE.md: 2,153
    blind answers equal the key, 1,143 changed)."""
    path = shared_file("medqa_relabelling", "medqa_relabelling.csv")
    counts = {"key": [0, 0], "misses key": [0, 0]}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            blind = list(ast.literal_eval(row["blind_answers"])) if row["blind_answers"] else []
            group = "key" if blind == [row["answer_idx"]] else "misses key" if blind and row["answer_idx"] not in \
                blind else None
            if group:
                counts[group][0] += 1
                counts[group][1] += row["seen_change"] == "TRUE"
    changes = two_step(load_medqa(path)).changes.set_index("blind")
    for group, (n, changed) in counts.items():
        assert changes.loc[group, ["ratings", "changed"]].tolist() == [n, changed]
    assert changes.loc["key", "ratings"] == 2153 and changes.loc["all", "changed"] == 1143
