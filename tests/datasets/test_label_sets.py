"""Per-item label sets and prediction files: the readers."""

from __future__ import annotations

import pytest

from stableval.datasets.label_sets import read_label_sets, read_predictions_file
from stableval.errors import InputError


def test_read_label_sets_long_and_counts(tmp_path) -> None:
    long = tmp_path / "long.csv"
    long.write_text("item,label\ni1,cat\ni1,dog\ni2,dog\n")
    sets = read_label_sets(long)
    assert sets.levels == ("cat", "dog") and sets.counts().tolist() == [[1, 1], [0, 1]]
    counts = tmp_path / "counts.csv"
    counts.write_text("item,cat,dog\ni1,1,1\ni2,0,x\n")
    with pytest.raises(InputError, match=r"counts.csv, row 2, column 'dog'.*got 'x'"):
        read_label_sets(counts)
    counts.write_text("item,cat,dog\ni1,1,1\ni2,0,1\n")
    assert read_label_sets(counts).counts().tolist() == [[1, 1], [0, 1]]


def test_predictions_file_reader(tmp_path) -> None:
    path = tmp_path / "preds.csv"
    path.write_text("item,answer\ni1,yes\ni2, no \n")
    assert read_predictions_file(path).to_dict() == {"i1": "yes", "i2": "no"}
    path.write_text("item,prediction\ni1,yes\ni1,no\n")
    with pytest.raises(InputError, match=r"row 2.*item predicted twice"):
        read_predictions_file(path)
    path.write_text("item,guess\ni1,yes\n")
    with pytest.raises(InputError, match="no prediction column"):
        read_predictions_file(path)
    assert read_predictions_file(path, prediction_col="guess").to_dict() == {"i1": "yes"}
