"""Dermatology DDx annotations: IRN aggregation by hand and load errors naming case and value."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stableval.datasets.ddx import DDxAnnotations, load_ddx, load_scores
from stableval.errors import InputError


def test_irn_aggregation_by_hand() -> None:
    ann = DDxAnnotations.from_selectors([[[[0], [1, 2]], [[2], [0]], [[1], [3], [0]]]], conditions=list("abcd"))
    # a: 1 + 1/2 + 1/3; b: 1/2 + 1; c: 1/2 + 1; d: 1/2
    assert np.allclose(ann.aggregate(), [[11 / 6, 3 / 2, 3 / 2, 1 / 2]])
    assert ann.top1().tolist() == [[True, False, False, False]]


def test_load_errors_name_case_and_value(tmp_path: Path) -> None:
    path = tmp_path / "sel.json"
    path.write_text(json.dumps([[[[0]]], [[[1], []]]]))
    with pytest.raises(InputError, match=r"sel.json, row 2: case 2, ranking 1, group 2 is empty"):
        load_ddx(path)
    path.write_text(json.dumps([[[[0], [0]]]]))
    with pytest.raises(InputError, match="condition listed twice"):
        load_ddx(path)
    names = tmp_path / "names.txt"
    names.write_text("a\nb\n")
    path.write_text(json.dumps([[[[5]]]]))
    with pytest.raises(InputError, match=r"not a condition index: got 5; allowed: integers 0..1"):
        load_ddx(path, conditions=names)
    risks = tmp_path / "risks.txt"
    risks.write_text("0\n7\n")
    path.write_text(json.dumps([[[[1]]]]))
    with pytest.raises(InputError, match=r"risks.txt, row 2: not a risk category: got '7'"):
        load_ddx(path, conditions=names, risks=risks)
    path.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_ddx(path)
    scores = tmp_path / "scores.txt"
    np.savetxt(scores, np.array([[0.1, np.nan]]))
    with pytest.raises(InputError, match=r"row 1, column '2': score is not a finite number"):
        load_scores(scores, shape=(1, 2))
    with pytest.raises(InputError, match=r"wrong shape.*allowed: 3 cases × 2 conditions"):
        load_scores(scores, shape=(3, 2))
