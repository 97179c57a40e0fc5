"""Shared test fixtures: paths to the public datasets beside the repository, and small synthetic tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


def shared_file(*parts: str) -> Path:
    """Path of a file under ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"public dataset not available here: {path} (it lives in ../shared/data beside the repo)")
    return path
