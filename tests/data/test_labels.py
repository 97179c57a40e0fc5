"""Labels and credit: parsing a list of levels."""

from __future__ import annotations

import pytest

from stableval.data import parse_list
from stableval.errors import InputError


def test_parse_list() -> None:
    assert parse_list("a, b,,c ,") == ["a", "b", "c"]
    with pytest.raises(InputError, match="empty levels"):
        parse_list(" , ", what="levels")
