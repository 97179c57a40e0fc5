"""Consistency rules between step 1 (pairwise choice) and step 2 (ratings 1-5), as data per track.

A track's ``rules`` map each pairwise choice to the relation that rating(A) must have to rating(B):
``{"a": ">=", "b": "<=", "tie": None, "neither": None}`` by default, as in the TxAgent portal's spec ("if Model
A was chosen as better ... Model A's score cannot be lower than Model B's"). "Unable to judge" (``na``) on either
side satisfies every rule. The server checks every criterion and returns one message per violated criterion.
The rating page also applies the rules as the rater clicks: :func:`live_rules` turns the rule of the step-1 choice
into a table of the ratings allowed on each side given the other's (from :func:`allowed_ratings`, so the browser's
``static/rating_rules.js`` holds no rule of its own and the server's check stays the authority).

>>> criteria = [{"key": "accuracy", "label": "Accuracy"}]
>>> [v.message for v in check_ratings(criteria, DEFAULT_RULES, {"accuracy": "a"}, {"accuracy": "2"},
...                                   {"accuracy": "4"})]
['Accuracy: you chose A as better, so the rating of A must be at least the rating of B (got A 2, B 4).']
>>> check_ratings(criteria, DEFAULT_RULES, {"accuracy": "a"}, {"accuracy": "4"}, {"accuracy": "4"})
[]
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stableval.errors import InputError

__all__ = ["CHOICES", "CHOICE_LABELS", "DEFAULT_CRITERIA", "DEFAULT_RULES", "RATINGS", "RELATIONS", "Violation",
           "allowed_ratings", "check_pairwise", "check_ratings", "live_rules", "rule_hint", "validate_rules"]

#: Step-1 choices and how the page names them.
CHOICE_LABELS: dict[str, str] = {"a": "A is better", "b": "B is better", "tie": "Tie (both equally good)",
                                 "neither": "Neither is good"}
CHOICES: tuple[str, ...] = tuple(CHOICE_LABELS)
#: Step-2 values: 1 (worst) .. 5 (best), or "na" = unable to judge.
RATINGS: tuple[str, ...] = ("1", "2", "3", "4", "5", "na")

#: The spec's five criteria (TxAgent evaluation portal).
DEFAULT_CRITERIA: tuple[dict[str, str], ...] = (
    {"key": "problem_resolution", "label": "Problem resolution"},
    {"key": "helpfulness", "label": "Helpfulness"},
    {"key": "scientific_consensus", "label": "Scientific consensus"},
    {"key": "accuracy", "label": "Accuracy"},
    {"key": "completeness", "label": "Completeness"},
)
DEFAULT_RULES: dict[str, str | None] = {"a": ">=", "b": "<=", "tie": None, "neither": None}

RELATIONS: dict[str, tuple[Callable[[int, int], bool], str]] = {
    ">=": (operator.ge, "at least"),
    ">": (operator.gt, "higher than"),
    "==": (operator.eq, "equal to"),
    "<=": (operator.le, "at most"),
    "<": (operator.lt, "lower than"),
}


@dataclass(frozen=True)
class Violation:
    """One problem on a step: the criterion key, the form field to focus and a readable message."""

    criterion: str
    field: str
    message: str


def validate_rules(rules: Mapping[str, Any] | None) -> dict[str, str | None]:
    """Check a rules mapping (choice -> relation or None) and fill missing choices with no constraint.

    >>> validate_rules({"a": ">=", "tie": "=="})
    {'a': '>=', 'b': None, 'tie': '==', 'neither': None}
    """
    if rules is None:
        return dict(DEFAULT_RULES)
    out: dict[str, str | None] = {}
    for choice, relation in rules.items():
        if choice not in CHOICES:
            raise InputError("unknown pairwise choice in rules", column="rules", value=choice,
                             allowed=", ".join(CHOICES))
        if relation is not None and relation not in RELATIONS:
            raise InputError(f"unknown relation for choice {choice!r}", column="rules", value=relation,
                             allowed=", ".join(RELATIONS) + " or null")
        out[choice] = relation
    return {choice: out.get(choice) for choice in CHOICES}


def rule_hint(choice: str | None, rules: Mapping[str, str | None]) -> str:
    """The sentence the rating page shows under a criterion: what the step-1 choice allows."""
    relation = rules.get(choice) if choice else None
    if relation is None:
        return "Any ratings are allowed."
    return f"Because you chose “{CHOICE_LABELS[str(choice)]}”, rate A {RELATIONS[relation][1]} B."


def allowed_ratings(choice: str | None, rules: Mapping[str, str | None], other: str | None, side: str
                    ) -> set[str]:
    """Ratings of ``side`` ("a" or "b") consistent with the choice, given the other side's rating.

    >>> sorted(allowed_ratings("a", DEFAULT_RULES, "3", "a"))
    ['3', '4', '5', 'na']
    """
    relation = rules.get(choice) if choice else None
    if relation is None or other in (None, "", "na"):
        return set(RATINGS)
    test = RELATIONS[relation][0]
    o = int(str(other))
    ok = {r for r in RATINGS[:-1] if (test(int(r), o) if side == "a" else test(o, int(r)))}
    return ok | {"na"}


def live_rules(choice: str | None, rules: Mapping[str, str | None]) -> dict[str, dict[str, list[str]]] | None:
    """The ratings allowed on each side given the other side's rating, for the page's live restriction: ``{"a":
    {rating of B: ratings of A allowed}, "b": {rating of A: ratings of B allowed}}``; None when the choice allows
    any ratings.

    >>> live_rules("a", DEFAULT_RULES)["a"]["4"], live_rules("a", DEFAULT_RULES)["b"]["2"]
    (['4', '5', 'na'], ['1', '2', 'na'])
    >>> live_rules("tie", DEFAULT_RULES) is None
    True
    """
    if (rules.get(choice) if choice else None) is None:
        return None
    return {side: {other: [r for r in RATINGS if r in allowed_ratings(choice, rules, other, side)]
                   for other in RATINGS[:-1]} for side in ("a", "b")}


def check_pairwise(criteria: Sequence[Mapping[str, str]], pairwise: Mapping[str, str]) -> list[Violation]:
    """Step 1: every criterion needs one of the four choices."""
    return [Violation(c["key"], f"pw-{c['key']}", f"{c['label']}: choose which answer is better.")
            for c in criteria if pairwise.get(c["key"]) not in CHOICES]


def check_ratings(
    criteria: Sequence[Mapping[str, str]],
    rules: Mapping[str, str | None],
    pairwise: Mapping[str, str],
    ratings_a: Mapping[str, str],
    ratings_b: Mapping[str, str],
) -> list[Violation]:
    """Step 2: every rating present, and consistent with the step-1 choice; one message per criterion."""
    problems: list[Violation] = []
    for c in criteria:
        key, label = c["key"], c["label"]
        a, b = ratings_a.get(key), ratings_b.get(key)
        missing = [side for side, value in (("A", a), ("B", b)) if value not in RATINGS]
        if missing:
            problems.append(Violation(key, f"ra-{key}" if "A" in missing else f"rb-{key}",
                                      f"{label}: choose a rating for {' and '.join(missing)} "
                                      "(or “unable to judge”)."))
            continue
        choice = pairwise.get(key)
        relation = rules.get(choice) if choice else None
        if relation is None or a == "na" or b == "na":
            continue
        test, words = RELATIONS[relation]
        if not test(int(str(a)), int(str(b))):
            problems.append(Violation(key, f"ra-{key}",
                                      f"{label}: you chose {CHOICE_LABELS[str(choice)].replace(' is better', '')} "
                                      f"as better, so the rating of A must be {words} the rating of B "
                                      f"(got A {a}, B {b})." if choice in ("a", "b") else
                                      f"{label}: you chose “{CHOICE_LABELS[str(choice)]}”, so the rating of A "
                                      f"must be {words} the rating of B (got A {a}, B {b})."))
    return problems
