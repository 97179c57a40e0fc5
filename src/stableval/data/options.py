"""How to read a ratings file: :class:`InputOptions`, the one record every command and the report pass around.

It sits below every reader (:mod:`~stableval.data.loader`, :mod:`~stableval.data.integer_ids`,
:mod:`~stableval.data.partitioned`), so each can take it without importing another.

>>> InputOptions(duplicates="first").duplicates
'first'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stableval.data.duplicates import check_policy

__all__ = ["InputOptions"]


@dataclass(frozen=True)
class InputOptions:
    """How to read a ratings file: the one record every command and the report pass around.

    Attributes:
        levels: ordered level names, worst first (sequence or ``"a,b,c"``); ``None``: integer labels. Not
            allowed for pairwise votes, whose levels are fixed (``loss, tie, win``).
        credit: one number per level (sequence or ``"0,0.5,1"``); ``None``: evenly spaced from 0 to 1.
        duplicates: the same judgment (or vote) on several rows: ``"error"``, ``"first"``, ``"last"``, ``"keep"``.
        columns: role → column name for the roles item, agent, rater, label, agent_a, agent_b, winner,
            criterion, weight (e.g. ``{"item": "question"}``); other columns are found by their aliases.
        default_agent: the agent of every row when an annotation file has no agent column.
        pairwise: ``True``/``False`` says whether the file holds pairwise votes; ``None`` detects it from the
            columns (:func:`~stableval.data.pairwise.is_pairwise_frame`).
        format: ``csv``, ``tsv``, ``jsonl`` or ``parquet``; ``None`` takes it from the file suffix.

    An unknown ``duplicates`` policy raises ``ValueError`` at once; everything else is checked when a file is
    read, where the message can name it.

    >>> options = InputOptions(levels="bad,good", columns={"item": "question"})
    >>> options.duplicates, options.pairwise
    ('error', None)
    >>> InputOptions(duplicates="mean")
    Traceback (most recent call last):
    ...
    ValueError: duplicates='mean' is not a policy; allowed: 'error', 'first', 'last', 'keep'
    """

    levels: Sequence[str] | str | None = None
    credit: Sequence[float] | str | None = None
    duplicates: str = "error"
    columns: Mapping[str, str] | None = None
    default_agent: str | None = None
    pairwise: bool | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        check_policy(self.duplicates)
