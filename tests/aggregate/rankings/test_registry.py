"""The ranking method registry: every method is declared once and the docs tables are derived from it (issue 29)."""

from __future__ import annotations

import pytest

from stableval.aggregate.rankings.registry import (
    RANKING_REGISTRY,
    default_ranking_method,
    parse_ranking_param,
    parse_ranking_params,
    ranking_method_table,
    ranking_parameter_table,
    resolve_ranking_methods,
)

from paths import REPO


def test_the_docs_tables_are_the_registry() -> None:
    text = (REPO / "docs" / "rankings.md").read_text(encoding="utf-8")
    assert ranking_method_table() in text and ranking_parameter_table() in text


def test_one_default_and_every_method_builds_with_its_declared_defaults() -> None:
    assert [name for name, m in RANKING_REGISTRY.items() if m.default] == [default_ranking_method()]
    for name, method, estimator in resolve_ranking_methods("all"):
        assert estimator.get_params() == {option.name: option.default for option in method.params}, name
        assert method.title and method.summary and method.colour.startswith("#")


def test_unknown_methods_and_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="unknown ranking method 'nope'"):
        resolve_ranking_methods("irn,nope")
    with pytest.raises(ValueError, match="pl has no parameter 'shape'"):
        parse_ranking_param("pl.shape=2")


def test_parameters_of_methods_that_do_not_run_are_refused_not_ignored() -> None:
    """Issue 29: ``--ranking-param`` text → per-method values, checked by the declarations."""
    assert parse_ranking_params(["PL.prior_shape=3", "rater-pl.tol=1e-6", "pl.solver=ilsr"],
                                chosen=["pl", "rater-pl"]) == {"pl": {"prior_shape": 3.0, "solver": "ilsr"},
                                                               "rater-pl": {"tol": 1e-6}}
    assert parse_ranking_params([], chosen=["irn"]) == {}
    with pytest.raises(ValueError, match="not among the chosen ranking methods"):
        parse_ranking_params(["pl.prior_shape=3"], chosen=["irn", "borda"])
    with pytest.raises(ValueError, match="a number ≥ 1"):
        parse_ranking_params(["pl.prior_shape=0.5"], chosen=["pl"])
