"""What the dataset loaders share: JSON Lines and row errors of one shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stableval.errors import InputError


def test_dataset_loaders_share_the_json_lines_errors(tmp_path: Path) -> None:
    from stableval.datasets import load_mslr, load_qags

    mslr = tmp_path / "m.json"
    mslr.write_text(json.dumps({"review_id": "CD1", "predictions": []}) + "\n{oops\n")
    with pytest.raises(InputError) as caught:
        load_mslr(mslr)
    assert "line 2 is not valid JSON" in str(caught.value) and caught.value.row == 2
    assert caught.value.allowed == "one JSON object per line (a review)"
    qags = tmp_path / "mturk_xsum.jsonl"
    qags.write_text("\n{oops\n")
    with pytest.raises(InputError) as caught:
        load_qags(qags)
    assert "line 2 is not valid JSON" in str(caught.value) and caught.value.allowed == "one JSON object per line"


def test_dataset_row_errors_keep_their_message_shape(tmp_path: Path) -> None:
    from stableval.datasets import load_dawid_skene

    path = tmp_path / "caries.csv"
    path.write_text("rater_1,rater_2,rater_3,rater_4,rater_5,n\n1,1,1,1,1,3\n1,3,1,1,1,2\n")
    with pytest.raises(InputError) as caught:
        load_dawid_skene(path)
    assert str(caught.value) == (f"{path}, row 2, column 'rater_2': caries rating is not 1 or 2 (line 3): got '3'; "
                                 "allowed: 1 (sound) or 2 (caries)")
