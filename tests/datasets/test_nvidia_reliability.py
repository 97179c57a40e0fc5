"""NVIDIA's reliability notebook format: bad toy JSON refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stableval.datasets.nvidia_reliability import read_toy_json
from stableval.errors import InputError


def test_bad_toy_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"output_values": {"e": {"item_flag": "No"}}, "QC": {}}]))
    with pytest.raises(InputError, match="no 'best'"):
        read_toy_json(path)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="row 1"):
        read_toy_json(path)


def test_the_notebook_json_carries_flag_reasons(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 31: the notebook format's flag_reason is read beside item_flag."""
    import json

    from stableval.datasets.nvidia_reliability import read_toy_json

    path = tmp_path / "flags.json"
    path.write_text(json.dumps([{"output_values": {"e1": {"item_flag": "Yes", "flag_reason": "medical advice"},
                                                   "e2": {"item_flag": "Yes"}},
                                 "QC": {"q": {"item_flag": "No", "best": "tie"}}}]))
    assert read_toy_json(path)["flag_reason"].tolist() == ["medical advice", "unspecified", ""]
