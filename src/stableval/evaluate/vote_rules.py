"""How the ratings drawn for an item decide its ground truth in the rater bootstrap, declared once and without
numerical imports, so the command line words ``--rule`` and ``--ties`` from them cheaply.

:data:`RULES`: a majority (plurality) of the drawn ratings, or only a unanimous draw. :data:`TIES`: what a tie for
the majority earns, a subset of the tie vocabulary majority vote shares (:mod:`stableval.aggregate.ties`).

>>> RULES, TIES
(('majority', 'unanimous'), ('split', 'random', 'lowest', 'exclude'))
"""

from __future__ import annotations

from stableval.aggregate.ties import tie_rules

__all__ = ["RULES", "TIES"]

#: how the ratings drawn for an item decide: by majority (plurality), or only when unanimous
RULES = ("majority", "unanimous")
#: the rater bootstrap's tie rules for a majority (:mod:`stableval.aggregate.ties`: the vocabulary majority vote
#: shares; ``first`` has no file order among drawn ratings, ``exclude`` leaves the item out of that draw)
TIES = tie_rules("split", "random", "lowest", "exclude")
