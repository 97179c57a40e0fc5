"""How to read a ratings file: :class:`InputOptions`, the one record every command and the report pass around, and
the duplicate policies (:class:`DuplicatePolicy`), declared once for Python and the command line.

It sits below every reader (:mod:`~stableval.data.loader`, :mod:`~stableval.data.integer_ids`,
:mod:`~stableval.data.partitioned`), so each can take it without importing another, and it imports nothing heavy,
so the command line declares its flags from it.

>>> InputOptions(duplicates="first").duplicates, DUPLICATE_POLICIES
('first', ('error', 'first', 'last', 'keep'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["DUPLICATE_POLICIES", "DuplicatePolicy", "InputOptions", "check_policy"]


class DuplicatePolicy(StrEnum):
    """What to do when the same judgment (or vote) is on several rows: the values ``duplicates=`` and
    ``--duplicates`` take."""

    ERROR = "error"  # name the repeated rows
    FIRST = "first"  # keep the first of them
    LAST = "last"  # keep the last of them
    KEEP = "keep"  # keep every one as an independent judgment


#: What ``duplicates=`` accepts: the values of :class:`DuplicatePolicy`, in order.
DUPLICATE_POLICIES: tuple[str, ...] = tuple(policy.value for policy in DuplicatePolicy)


def check_policy(duplicates: str) -> None:
    """Raise ``ValueError`` unless ``duplicates`` is one of :data:`DUPLICATE_POLICIES`.

    >>> check_policy("mean")
    Traceback (most recent call last):
    ...
    ValueError: duplicates='mean' is not a policy; allowed: 'error', 'first', 'last', 'keep'
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates={duplicates!r} is not a policy; allowed: "
                         + ", ".join(repr(p) for p in DUPLICATE_POLICIES))


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
        merge_levels: Likert or other labels merged into ordered levels, worst first: ``"1,2=low 3=mid 4,5=high"``
            or ``{"low": ["1", "2"], ...}`` (:mod:`stableval.data.recode`); ``levels`` is then not given.
        bins: numeric labels cut into levels at increasing cut points (``"2.5,3.5"`` or ``[2.5, 3.5]``); ``levels``
            then names the bins, worst first.
        importer: the tool whose export the file is (a name of :data:`stableval.data.importers.IMPORTERS`, e.g.
            ``"label-studio"``): the file is read by that tool's importer, and the options above say how to read
            what it gives (columns name the tool's fields); ``None``: the file is a table.

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
    importer: str | None = None
    merge_levels: str | Mapping[str, Sequence[object]] | None = None
    bins: str | Sequence[float] | None = None

    def __post_init__(self) -> None:
        check_policy(self.duplicates)
