"""Consistency rules (hand-worked cases) and safe Markdown rendering."""

from __future__ import annotations

import pytest

from stableval.errors import InputError
from stableval.portal.tasks.render import markdown_to_html
from stableval.portal.tasks.rules import DEFAULT_RULES, allowed_ratings, check_ratings, validate_rules

CRITERIA = [{"key": "accuracy", "label": "Accuracy"}, {"key": "helpfulness", "label": "Helpfulness"}]


@pytest.mark.parametrize(("choice", "a", "b", "ok"), [
    ("a", "4", "4", True), ("a", "5", "1", True), ("a", "2", "3", False),
    ("b", "2", "3", True), ("b", "3", "3", True), ("b", "4", "3", False),
    ("tie", "1", "5", True), ("neither", "5", "1", True),
    ("a", "na", "5", True), ("b", "5", "na", True),
])
def test_default_rules_follow_the_spec(choice: str, a: str, b: str, ok: bool) -> None:
    problems = check_ratings(CRITERIA[:1], DEFAULT_RULES, {"accuracy": choice}, {"accuracy": a}, {"accuracy": b})
    assert (problems == []) is ok


def test_one_message_per_violated_criterion_and_missing_ratings() -> None:
    problems = check_ratings(CRITERIA, DEFAULT_RULES, {"accuracy": "a", "helpfulness": "b"},
                             {"accuracy": "1", "helpfulness": "5"}, {"accuracy": "5"})
    assert [p.criterion for p in problems] == ["accuracy", "helpfulness"]
    assert "at least" in problems[0].message and "(got A 1, B 5)" in problems[0].message
    assert problems[1].message == "Helpfulness: choose a rating for B (or “unable to judge”)."
    assert problems[1].field == "rb-helpfulness"


def test_rules_are_data_per_track() -> None:
    rules = validate_rules({"a": ">", "b": "<", "tie": "=="})
    assert check_ratings(CRITERIA[:1], rules, {"accuracy": "tie"}, {"accuracy": "3"}, {"accuracy": "4"})
    assert not check_ratings(CRITERIA[:1], rules, {"accuracy": "tie"}, {"accuracy": "4"}, {"accuracy": "4"})
    assert check_ratings(CRITERIA[:1], rules, {"accuracy": "a"}, {"accuracy": "4"}, {"accuracy": "4"})
    assert sorted(allowed_ratings("b", rules, "3", "a")) == ["1", "2", "na"]
    with pytest.raises(InputError, match="unknown relation"):
        validate_rules({"a": "=>"})
    with pytest.raises(InputError, match="unknown pairwise choice"):
        validate_rules({"maybe": ">="})


@pytest.mark.parametrize("attack", [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "![x](javascript:alert(1))",
    "<svg/onload=alert(1)>",
    '[x](JaVaScRiPt:alert(1) "t")',
])
def test_markdown_never_emits_active_content(attack: str) -> None:
    html = markdown_to_html(f"Answer: {attack}\n\n**bold** and a [link](https://example.org)")
    lowered = html.lower()
    for bad in ("<script", "onerror=", "onload=", "javascript:", "<img", "<svg"):
        assert bad not in lowered
    assert "alert(1)" in html  # shown as text, not dropped
    assert "<strong>bold</strong>" in html and 'href="https://example.org"' in html
