"""``InputOptions``: defaults, immutability and the duplicate policies declared once."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from stableval.data import InputOptions, load, read_any

from paths import SMALL_ANNOTATIONS, SMALL_PAIRWISE


# ====================================================================================== InputOptions
def test_input_options_rejects_an_unknown_duplicate_policy() -> None:
    with pytest.raises(ValueError, match=r"duplicates='mean' is not a policy; allowed: 'error', 'first', 'last', "
                                         r"'keep'"):
        InputOptions(duplicates="mean")
    with pytest.raises(ValueError, match="is not a policy"):
        read_any(SMALL_ANNOTATIONS, duplicates="mean")


def test_input_options_defaults_and_immutability() -> None:
    options = InputOptions()
    assert (options.levels, options.credit, options.duplicates, options.columns, options.default_agent,
            options.pairwise, options.format) == (None, None, "error", None, None, None, None)
    with pytest.raises(FrozenInstanceError):
        options.duplicates = "keep"  # type: ignore[misc]
    assert load(SMALL_PAIRWISE, None).votes is not None  # None means the defaults


def test_duplicate_policies_are_declared_once() -> None:
    """Issue 25: ``DUPLICATE_POLICIES``, the ``--duplicates`` choices of every command and the dataset option are
    one declaration (``DuplicatePolicy``)."""
    from typer.testing import CliRunner

    from stableval.cli import app
    from stableval.commands.common import INPUT_FLAGS, Duplicates
    from stableval.data import DUPLICATE_POLICIES, DuplicatePolicy
    from stableval.data.duplicates import DUPLICATE_POLICIES as FROM_DUPLICATES
    from stableval.datasets.registry import OPTIONS

    assert DUPLICATE_POLICIES is FROM_DUPLICATES == tuple(DuplicatePolicy) == ("error", "first", "last", "keep")
    assert Duplicates is DuplicatePolicy and INPUT_FLAGS["duplicates"][1] is DuplicatePolicy.ERROR
    assert OPTIONS["duplicates"].choices is DUPLICATE_POLICIES
    for command in ("score", "mt-bench"):
        result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0 and "<error|first|last|keep>" in result.output
