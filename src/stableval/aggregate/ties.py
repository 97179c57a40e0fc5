"""What a tie for the most votes earns: the tie rules, declared once.

Majority vote's ``ties`` (:class:`~stableval.aggregate.majority_vote.MajorityVote`, ``--ties`` of ``score`` and the
other analyses) and the rater bootstrap's ``ties`` (:func:`stableval.evaluate.rater_bootstrap.ground_truth`, ``--ties``
of ``medqa`` and ``ddx``) break the same kind of tie, so each takes a subset of this one vocabulary
(:func:`tie_rules`) and words its help from it (:func:`describe_ties`). The names are the ones both used before; no
spelling changed. NRP's ``--ties`` (how tied ranker scores are ranked) and Bradley–Terry's ties (a pairwise vote for
neither side) are other concepts and keep their own words.

>>> describe_ties(tie_rules("split", "lowest"))
'split (the tied levels share it equally), lowest (the lowest tied level: pessimistic)'
"""

from __future__ import annotations

__all__ = ["TIE_RULES", "describe_ties", "tie_rules"]

#: every tie rule → what the tied response (or item) gets under it
TIE_RULES: dict[str, str] = {
    "split": "the tied levels share it equally",
    "first": "the tied level whose first judgment comes first in the file: Python's Counter.most_common on the "
             "labels in file order, the STABLEVAL paper's majority vote",
    "lowest": "the lowest tied level: pessimistic",
    "highest": "the highest tied level: optimistic",
    "random": "a tied level drawn at random, seeded",
    "exclude": "nothing: the item is left out",
}


def tie_rules(*names: str) -> tuple[str, ...]:
    """The tie rules a consumer supports, each checked against :data:`TIE_RULES`.

    >>> tie_rules("split", "coin")
    Traceback (most recent call last):
    ...
    ValueError: unknown tie rule 'coin'; allowed: split, first, lowest, highest, random, exclude
    """
    for name in names:
        if name not in TIE_RULES:
            raise ValueError(f"unknown tie rule {name!r}; allowed: {', '.join(TIE_RULES)}")
    return names


def describe_ties(names: tuple[str, ...]) -> str:
    """The rules ``names`` in words, for a help text: ``name (what a tie gets), ...``."""
    return ", ".join(f"{name} ({TIE_RULES[name]})" for name in names)
