"""Relabeled MedQA: label-error definition, exclusion shares and accuracies derived by hand and analytically."""

from __future__ import annotations

import ast
import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.datasets.medqa import load_medqa, read_medqa_predictions
from stableval.errors import InputError
from stableval.studies.medqa import FILTERS, LETTERS, evaluate_medqa

from conftest import shared_file

runner = CliRunner()
HEADER = ("qid,worker_id,answer_idx,blind_answerable,blind_answers,info_missing,important_info_missing,"
          "seen_change,seen_answerable,seen_answers\n")
# q1: clean. q2: all raters flag important info missing. q3: all keep a blind answer that is not the key
# (label error). q4: all change to two answers incl. the key (multiple answers). q5: one of three rejects the key
# (changed to "not answerable"); one accepts after changing; one agreed blind. q6: two of four flag missing info.
ROWS = """\
1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,
1,b,A,TRUE,['A'],FALSE,FALSE,FALSE,,
1,c,A,TRUE,['A'],FALSE,FALSE,FALSE,,
2,a,B,TRUE,['B'],TRUE,TRUE,FALSE,,
2,b,B,TRUE,['B'],TRUE,TRUE,FALSE,,
2,c,B,TRUE,['B'],TRUE,TRUE,FALSE,,
3,a,C,TRUE,['A'],FALSE,FALSE,FALSE,,
3,b,C,TRUE,['A'],FALSE,FALSE,FALSE,,
3,c,C,TRUE,"['A', 'B']",FALSE,FALSE,TRUE,TRUE,['A']
4,a,D,TRUE,['C'],FALSE,FALSE,TRUE,TRUE,"['C', 'D']"
4,b,D,TRUE,['D'],FALSE,FALSE,TRUE,TRUE,"['D', 'C']"
4,c,D,TRUE,['C'],FALSE,FALSE,TRUE,TRUE,"['C', 'D', 'A']"
5,a,A,TRUE,['B'],FALSE,FALSE,TRUE,TRUE,['A']
5,b,A,TRUE,['A'],FALSE,FALSE,FALSE,,
5,c,A,TRUE,['C'],FALSE,FALSE,TRUE,FALSE,
6,a,B,TRUE,['B'],TRUE,TRUE,FALSE,,
6,b,B,TRUE,['B'],TRUE,TRUE,FALSE,,
6,c,B,TRUE,['B'],FALSE,FALSE,FALSE,,
6,d,B,FALSE,,FALSE,FALSE,TRUE,TRUE,['B']
"""


@pytest.fixture
def fixture_csv(tmp_path: Path) -> Path:
    path = tmp_path / "medqa.csv"
    path.write_text(HEADER + ROWS)
    return path


def test_flags_follow_the_definition(fixture_csv: Path) -> None:
    ratings = load_medqa(fixture_csv)
    assert ratings.qids.tolist() == ["1", "2", "3", "4", "5", "6"]
    assert "".join(LETTERS[k] for k in ratings.key) == "ABCDAB"
    counts = ratings.flag_counts().set_index("qid")
    assert counts["missing_info"].tolist() == [0, 3, 0, 0, 0, 2]
    assert counts["label_error"].tolist() == [0, 0, 3, 0, 1, 0]   # q5: only rater c (no option after seeing)
    assert counts["multiple_answers"].tolist() == [0, 0, 0, 3, 0, 0]
    assert any("1 rating(s) changed to 'no option" in note for note in ratings.notes)


def test_exclusion_shares_and_accuracies_by_hand(fixture_csv: Path) -> None:
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
    ratings = load_medqa(fixture_csv)
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


def test_majority_vote(fixture_csv: Path) -> None:
    """Majority of 3: q6 (2 of 4 flag) is out when ≥2 of 3 draws flag: 3·(1/2)³ + (1/2)³ = 1/2."""
    result = evaluate_medqa(load_medqa(fixture_csv), n_draws=20000, how="majority", seed=1)
    share = result.exclusions.set_index("filter")["share"]["missing_info"]
    assert share == pytest.approx((1 + 0.5) / 6, abs=0.004)


def test_bad_input_is_rejected_with_location(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + "1,a,A,TRUE,\"__import__('os').system('echo hacked')\",FALSE,FALSE,FALSE,,\n")
    with pytest.raises(InputError, match=r"bad.csv, row 1, column 'blind_answers': not a list of answer letters"):
        load_medqa(path)
    path.write_text(HEADER + "1,a,A,TRUE,['A'],FALSE,maybe,FALSE,,\n")
    with pytest.raises(InputError, match=r"row 1, column 'important_info_missing'.*got 'maybe'"):
        load_medqa(path)
    path.write_text(HEADER + "1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,\n1,b,B,TRUE,['A'],FALSE,FALSE,FALSE,,\n")
    with pytest.raises(InputError, match=r"row 2, column 'answer_idx': key differs"):
        load_medqa(path)
    path.write_text(HEADER + "1,a,E,TRUE,['A'],FALSE,FALSE,FALSE,,\n")
    with pytest.raises(InputError, match="allowed: A, B, C or D"):
        load_medqa(path)
    path.write_text("qid,answer_idx\n1,A\n")
    with pytest.raises(InputError, match="missing column"):
        load_medqa(path)


def _independent_flags(path: Path) -> dict[str, list[tuple[bool, bool, bool]]]:
    """Per-row flags from the stdlib csv module, one row at a time (independent of the vectorised loader)."""
    out: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            def answers(text: str) -> list[str]:
                return list(ast.literal_eval(text)) if text else []
            final = answers(row["seen_answers"]) if row["seen_change"] == "TRUE" else answers(row["blind_answers"])
            out[row["qid"]].append((row["important_info_missing"] == "TRUE", row["answer_idx"] not in final,
                                    len(final) > 1))
    return out


def test_real_data_shares_match_the_analytic_expectation() -> None:
    """With k = 3 draws with replacement from n raters of whom m flag (all of) a set of reasons, all three draws
    flag them with probability (m/n)³; inclusion–exclusion over the reasons gives each filter's exact expected
    share. The bootstrap mean must agree within 4 standard errors."""
    path = shared_file("medqa_relabelling", "medqa_relabelling.csv")
    flags = _independent_flags(path)
    assert len(flags) == 1273 and sum(len(v) for v in flags.values()) == 3822

    def p_all(rows: list[tuple[bool, bool, bool]], reasons: tuple[int, ...]) -> float:
        return (sum(all(r[i] for i in reasons) for r in rows) / len(rows)) ** 3

    def p_union(rows: list[tuple[bool, bool, bool]], reasons: tuple[int, ...]) -> float:
        if len(reasons) == 1:
            return p_all(rows, reasons)
        if len(reasons) == 2:
            return p_all(rows, reasons[:1]) + p_all(rows, reasons[1:]) - p_all(rows, reasons)
        a, b, c = ((x,) for x in reasons)
        return (p_all(rows, a) + p_all(rows, b) + p_all(rows, c) - p_all(rows, a + b) - p_all(rows, a + c)
                - p_all(rows, b + c) + p_all(rows, reasons))

    reasons = {"missing_info": (0,), "label_error": (1,), "multiple_answers": (2,),
               "missing_info+label_error": (0, 1), "combined": (0, 1, 2)}
    ratings = load_medqa(path)
    result = evaluate_medqa(ratings, n_draws=1000, seed=0)
    for f, (name, which) in enumerate(reasons.items(), start=1):
        expected = np.mean([p_union(rows, which) for rows in flags.values()])
        replicates = result.share_replicates[:, f]
        se = replicates.std() / np.sqrt(replicates.size)
        assert abs(replicates.mean() - expected) < 4 * se, (name, replicates.mean(), expected)
    assert ratings.flags.sum(axis=0).tolist() == [sum(r[i] for v in flags.values() for r in v) for i in range(3)]


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


def test_cli(fixture_csv: Path, tmp_path: Path) -> None:
    preds = tmp_path / "answers.csv"
    preds.write_text("qid,answer\n1,A\n2,a\n3,A\n4,A\n5,A\n6,A\n")
    plot = tmp_path / "medqa.png"
    out = runner.invoke(app, ["medqa", str(fixture_csv), "-p", f"constA={preds}", "-B", "200", "--plot", str(plot),
                              "--format", "json"])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    none = next(r for r in payload["accuracy"] if r["filter"] == "none")
    assert none["model"] == "constA" and none["accuracy"] == pytest.approx(2 / 6)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = runner.invoke(app, ["medqa", str(fixture_csv), "-B", "50"])
    assert table.exit_code == 0 and "exclusion shares only" in table.stdout
    csv_out = runner.invoke(app, ["medqa", str(fixture_csv), "-p", str(preds), "-B", "50", "-f", "csv"])
    assert csv_out.stdout.splitlines()[0] == "metric,model,filter,mean,ci_low,ci_high"
    preds.write_text("qid,answer\n1,A\n")
    missing = runner.invoke(app, ["medqa", str(fixture_csv), "-p", str(preds)])
    assert missing.exit_code == 1 and "no answer for 5 of 6 questions" in missing.output
    preds.write_text("qid,answer\n1,E\n")
    bad = runner.invoke(app, ["medqa", str(fixture_csv), "-p", str(preds)])
    assert bad.exit_code == 1 and "answers.csv, row 1" in bad.output and "'E'" in bad.output


def test_predictions_reader_and_figure(fixture_csv: Path, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from stableval.report.figures import medqa_figure, save_figure

    preds = tmp_path / "answers.csv"
    preds.write_text("qid,answer\n1, b\n2,C\n")
    assert read_medqa_predictions(preds).to_dict() == {"1": "B", "2": "C"}
    preds.write_text("qid,answer\n1,B\n1,C\n")
    with pytest.raises(InputError, match=r"row 2, column 'qid': question answered twice"):
        read_medqa_predictions(preds)
    result = evaluate_medqa(load_medqa(fixture_csv), {"A": ["A"] * 6}, n_draws=50, seed=0)
    figure = medqa_figure(result)
    assert isinstance(figure, Figure) and figure.axes[0].get_ylabel() == "percent (%)"
    assert [t.get_text() for t in figure.axes[0].get_legend().get_texts()] == ["questions kept", "A accuracy"]
    out = save_figure(figure, tmp_path / "sub" / "medqa.svg")
    assert out.read_text().lstrip().startswith("<?xml")


def test_studies_sit_above_evaluate_and_datasets() -> None:
    """studies/ may import evaluate/ and datasets/, never the reverse."""
    import re

    src = Path(__file__).resolve().parents[1] / "src" / "stableval"
    upward = re.compile(r"^\s*(from|import) stableval\.studies", re.MULTILINE)
    for package in ("evaluate", "datasets", "data", "aggregate"):
        for module in (src / package).rglob("*.py"):
            assert not upward.search(module.read_text(encoding="utf-8")), module
