"""The truth-inference format: counts and gold, and continuous labels refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stableval.datasets import load_truth_inference
from stableval.errors import InputError

from paths import shared_file


# ====================================================================================== truth inference
def test_truth_inference_counts_and_gold() -> None:
    duck = load_truth_inference(shared_file("zheng2017_truth_inference", "d_Duck_Identification"))
    assert (duck.table.n_judgments, duck.table.n_responses, duck.table.n_raters, duck.table.n_agents) == (
        4212, 108, 39, 1)
    assert duck.gold is not None and len(duck.gold) == 108
    adult = load_truth_inference(shared_file("zheng2017_truth_inference", "s5_AdultContent"))
    raw = pd.read_csv(shared_file("zheng2017_truth_inference", "s5_AdultContent", "answer.csv"), dtype=str)
    assert adult.table.n_judgments == len(raw.drop_duplicates(["question", "worker"])) == 89_799
    assert (adult.table.n_responses, adult.table.n_raters, adult.table.n_levels) == (11040, 825, 4)
    assert adult.gold is not None and len(adult.gold) == 333  # of 1,517 gold rows; SOURCE.md
    assert any("left out 1,184 gold" in note for note in adult.table.notes)
    keep = load_truth_inference(shared_file("zheng2017_truth_inference", "s5_AdultContent"), duplicates="keep")
    assert keep.table.n_judgments == len(raw) == 92_721


def test_truth_inference_rejects_continuous_labels(tmp_path: Path) -> None:
    (tmp_path / "answer.csv").write_text("question,worker,answer\nq1,w1,25\nq1,w2,-60\n")
    with pytest.raises(InputError, match="integer class code") as caught:
        load_truth_inference(tmp_path)
    assert caught.value.row == 2 and caught.value.value == "-60"
    (tmp_path / "answer.csv").write_text("question,worker,answer\nq1,w1,1\n")
    (tmp_path / "truth.csv").write_text("question,truth\nq1,x\n")
    with pytest.raises(InputError, match="not an integer class code") as caught:
        load_truth_inference(tmp_path)
    assert caught.value.file == str(tmp_path / "truth.csv")
