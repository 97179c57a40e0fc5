"""What an importer's answers become: the level scale of numeric ratings, and the pairwise votes of a ranking.

A rating scale is ordered by its numbers (the lowest first) and credited linearly between its ends; every integer
between the ends is a level, so a 5-star scale nobody rated 2 on still has level 2.
Rankings become pairwise votes, the one form of ranking the annotation table takes: every pair of ranked agents is
a vote the better-ranked one wins (a tie when they share a rank).

>>> number_scale([4, 2, 5], low=1)
(('1', '2', '3', '4', '5'), (0.0, 0.25, 0.5, 0.75, 1.0))
>>> ranking_votes([["B"], ["A", "C"]])
[('B', 'A', 'a'), ('B', 'C', 'a'), ('A', 'C', 'tie')]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from stableval.data.importers.records import number_text

__all__ = ["as_number", "label_scale", "number_scale", "ranking_votes"]


def as_number(text: str) -> float | None:
    """``text`` as a finite number, else ``None``.

    >>> as_number("4"), as_number(" 7.5 "), as_number("good"), as_number("nan")
    (4.0, 7.5, None, None)
    """
    try:
        number = float(text)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def number_scale(values: Iterable[float], *, low: float | None = None, high: float | None = None
                 ) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The levels (lowest first, as :func:`~stableval.data.importers.records.number_text` writes them) and their
    credit (0 at the low end, 1 at the high end, linear between) of numeric ratings.

    The ends are ``low``/``high`` (a scale's declared ends), widened to the values seen. Every integer between the
    ends is a level, and so is every other value seen.

    >>> number_scale([0.5, 1.0, 0.0])
    (('0', '0.5', '1'), (0.0, 0.5, 1.0))
    >>> number_scale([7.5], low=1, high=3)[0]
    ('1', '2', '3', '4', '5', '6', '7', '7.5')
    """
    seen = {float(v) for v in values}
    ends = {float(v) for v in (low, high) if v is not None}
    bottom = min(seen | ends)
    top = max(seen | ends)
    points = sorted(seen | ends | {float(v) for v in range(math.ceil(bottom), math.floor(top) + 1)})
    span = top - bottom
    credit = tuple((v - bottom) / span if span else 0.0 for v in points)
    return tuple(number_text(v) for v in points), credit


def label_scale(labels: Iterable[str], *, low: float | None = None, high: float | None = None
                ) -> tuple[tuple[str, ...], tuple[float, ...]] | None:
    """:func:`number_scale` of ``labels`` when every one is a number (written as :func:`number_text` writes it);
    ``None`` when some label is a word (such labels have no order the export states: the user names it).

    >>> label_scale(["3", "1"], low=1)
    (('1', '2', '3'), (0.0, 0.5, 1.0))
    >>> label_scale(["good", "bad"]) is None
    True
    """
    numbers = []
    for label in labels:
        number = as_number(label)
        if number is None or number_text(number) != label:
            return None
        numbers.append(number)
    return number_scale(numbers, low=low, high=high) if numbers else None


def ranking_votes(groups: Sequence[Sequence[str]]) -> list[tuple[str, str, str]]:
    """The pairwise votes of a ranking given as groups, best first (agents in one group share a rank): ``(agent_a,
    agent_b, winner)`` with ``winner`` ``a`` (the first is ranked better) or ``tie``, every pair once, in ranking
    order.

    >>> ranking_votes([["x"], ["y"], ["z"]])
    [('x', 'y', 'a'), ('x', 'z', 'a'), ('y', 'z', 'a')]
    """
    flat = [(rank, agent) for rank, group in enumerate(groups) for agent in group]
    return [(first, second, "tie" if rank_a == rank_b else "a")
            for i, (rank_a, first) in enumerate(flat) for rank_b, second in flat[i + 1:]]
