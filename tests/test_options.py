"""The shared option declaration (:mod:`stableval._options`): bounds that guard against typos and their override."""

from __future__ import annotations

import pytest

from stableval._options import MAX_STARTS, Option
from stableval.aggregate import Stableval


def test_a_size_bound_names_the_cost_and_the_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 (E6): a count above a size bound (``n_starts``, ``max_iter``) is refused naming how many times the
    work of the bound it asks and the override; with STABLEVAL_ALLOW_LARGE=1 it is taken. Other bounds stay."""
    starts = Option("n_starts", int, "Random starts.", default=10, ge=0, le=MAX_STARTS, size_bound=True)
    with pytest.raises(ValueError) as caught:
        starts.check(100_000)
    message = str(caught.value)
    assert message.startswith("n_starts=100000: allowed an integer in [0, 1000]") and "100× as long" in message
    assert "STABLEVAL_ALLOW_LARGE=1" in message
    with pytest.raises(ValueError, match="STABLEVAL_ALLOW_LARGE"):
        Stableval(n_starts=MAX_STARTS + 1)
    monkeypatch.setenv("STABLEVAL_ALLOW_LARGE", "1")
    assert starts.check(100_000) == 100_000 and Stableval(n_starts=MAX_STARTS + 1).n_starts == MAX_STARTS + 1
    with pytest.raises(ValueError, match=r"allowed an integer in \[0, 1000\]$"):
        starts.check(-1)  # the lower bound is not a size bound
    with pytest.raises(ValueError, match=r"allowed an integer in \[0, 4294967295\]$"):
        Option("seed", int, "Seed.", ge=0, le=2**32 - 1).check(2**32)  # nor is a seed's
