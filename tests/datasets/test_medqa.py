"""Relabeled MedQA ratings: the label-error flags, bad input with its location, real-data shares and the
predictions reader."""

from __future__ import annotations

import ast
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from stableval.datasets.medqa import load_medqa, read_medqa_predictions
from stableval.errors import InputError
from stableval.studies.medqa import LETTERS, evaluate_medqa

from paths import shared_file
from synthetic import MEDQA_HEADER


def test_flags_follow_the_definition(medqa_csv: Path) -> None:
    ratings = load_medqa(medqa_csv)
    assert ratings.qids.tolist() == ["1", "2", "3", "4", "5", "6"]
    assert "".join(LETTERS[k] for k in ratings.key) == "ABCDAB"
    counts = ratings.flag_counts().set_index("qid")
    assert counts["missing_info"].tolist() == [0, 3, 0, 0, 0, 2]
    assert counts["label_error"].tolist() == [0, 0, 3, 0, 1, 0]   # q5: only rater c (no option after seeing)
    assert counts["multiple_answers"].tolist() == [0, 0, 0, 3, 0, 0]
    assert any("1 rating(s) changed to 'no option" in note for note in ratings.notes)


def test_bad_input_is_rejected_with_location(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(MEDQA_HEADER + "1,a,A,TRUE,\"__import__('os').system('echo hacked')\",FALSE,FALSE,FALSE,,\n")
    with pytest.raises(InputError, match=r"bad.csv, row 1, column 'blind_answers': not a list of answer letters"):
        load_medqa(path)
    path.write_text(MEDQA_HEADER + "1,a,A,TRUE,['A'],FALSE,maybe,FALSE,,\n")
    with pytest.raises(InputError, match=r"row 1, column 'important_info_missing'.*got 'maybe'"):
        load_medqa(path)
    path.write_text(MEDQA_HEADER + "1,a,A,TRUE,['A'],FALSE,FALSE,FALSE,,\n1,b,B,TRUE,['A'],FALSE,FALSE,FALSE,,\n")
    with pytest.raises(InputError, match=r"row 2, column 'answer_idx': key differs"):
        load_medqa(path)
    path.write_text(MEDQA_HEADER + "1,a,E,TRUE,['A'],FALSE,FALSE,FALSE,,\n")
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


def test_predictions_reader_and_figure(medqa_csv: Path, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from stableval.report.figures import medqa_figure, save_figure

    preds = tmp_path / "answers.csv"
    preds.write_text("qid,answer\n1, b\n2,C\n")
    assert read_medqa_predictions(preds).to_dict() == {"1": "B", "2": "C"}
    preds.write_text("qid,answer\n1,B\n1,C\n")
    with pytest.raises(InputError, match=r"row 2, column 'qid': question answered twice"):
        read_medqa_predictions(preds)
    result = evaluate_medqa(load_medqa(medqa_csv), {"A": ["A"] * 6}, n_draws=50, seed=0)
    figure = medqa_figure(result)
    assert isinstance(figure, Figure) and figure.axes[0].get_ylabel() == "percent (%)"
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["questions kept", "A accuracy"]
    out = save_figure(figure, tmp_path / "sub" / "medqa.svg")
    assert out.read_text().lstrip().startswith("<?xml")


def test_figure_starts_at_zero_and_no_label_collides(medqa_csv: Path) -> None:
    """Issue 27: the y-axis started above 0 without saying so, value labels overlapped, and the title did not
    say what the bars are."""
    from stableval.report.figures import medqa_figure

    result = evaluate_medqa(load_medqa(medqa_csv), {"A": ["A"] * 6, "B": ["B"] * 6, "C": ["C"] * 6}, n_draws=50,
                            seed=0)
    figure = medqa_figure(result)
    ax = figure.axes[0]
    assert ax.get_ylim()[0] == 0 and "share of questions kept" in ax.get_title()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in ax.texts]
    assert len(boxes) == 4 * 4
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
    legend = figure.legends[0].get_window_extent(renderer)
    assert not legend.overlaps(ax.xaxis.label.get_window_extent(renderer))
