"""Pairwise judgments (``item, agent_a, agent_b, rater, winner``) and their conversion to an annotation table.

A vote says which of two agents' responses to the same item a rater preferred, or that they tie. For the
per-response models (majority vote, Dawid-Skene, STABLEVAL) each vote becomes two judgments: the winner's
response gets level 2 (``"win"``), the loser's 0 (``"loss"``), a tie gives 1 (``"tie"``) to both.

>>> import pandas as pd
>>> votes = pd.DataFrame({"question_id": ["q1", "q1"], "model_a": ["A", "B"], "model_b": ["B", "C"],
...                       "judge": ["r1", "r1"], "winner": ["model_a", "tie"]})
>>> table = pairwise_to_annotations(pairwise_from_frame(votes))
>>> table.to_frame().sort_values(["agent", "label"]).values.tolist()
[['q1', 'A', 'r1', 'win'], ['q1', 'B', 'r1', 'loss'], ['q1', 'B', 'r1', 'tie'], ['q1', 'C', 'r1', 'tie']]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stableval.data.columns import ROLE_ALIASES, id_column, item_with_parts, key_hint_columns, resolve_columns
from stableval.data.duplicates import apply_duplicates, check_policy, combine_codes
from stableval.data.files import line_offset, read_table_file, row_error
from stableval.data.labels import parse_credit
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = [
    "PAIRWISE_ALIASES",
    "PAIRWISE_LEVELS",
    "WINNER_VALUES",
    "PairwiseTable",
    "is_pairwise_frame",
    "pairwise_from_frame",
    "pairwise_to_annotations",
    "read_pairwise",
]

#: Header names accepted for each role of a pairwise file, in order of preference (case-insensitive).
PAIRWISE_ALIASES: dict[str, tuple[str, ...]] = {
    "item": ROLE_ALIASES["item"],
    "agent_a": ("agent_a", "model_a", "system_a"),
    "agent_b": ("agent_b", "model_b", "system_b"),
    "rater": ROLE_ALIASES["rater"],
    "winner": ("winner", "preference", "choice"),
    "criterion": ("criterion",),
    "weight": ("weight", "vote_weight"),
}

#: Accepted winner values (case-insensitive) → normalised value. The winning agent's own name is accepted too.
WINNER_VALUES: dict[str, str] = {
    "a": "a", "model_a": "a", "agent_a": "a", "system_a": "a",
    "b": "b", "model_b": "b", "agent_b": "b", "system_b": "b",
    "tie": "tie", "draw": "tie", "tie (bothbad)": "tie", "tie (inconsistent)": "tie",
}

#: The levels and credit of judgments converted from votes.
PAIRWISE_LEVELS: tuple[str, ...] = ("loss", "tie", "win")
PAIRWISE_CREDIT: tuple[float, ...] = (0.0, 0.5, 1.0)

_WINNER_ALLOWED = ("a, model_a, agent_a (first agent won); b, model_b, agent_b (second agent won); "
                   "tie, draw, 'tie (bothbad)' (tie); or the winning agent's name")


@dataclass(frozen=True, eq=False)
class PairwiseTable:
    """Validated pairwise votes.

    Attributes:
        frame: one row per vote, columns ``item, agent_a, agent_b, rater, winner`` (``winner`` in
            ``{"a", "b", "tie"}``), plus ``criterion`` and ``weight`` (float >= 0) when the input has them.
            Ids are stripped text. ``agent_a`` is taken to be the answer shown first (left).
        source: where the votes came from (a file name, or ``"<DataFrame>"``).
        notes: what reading did to the input (rows dropped and why).
    """

    frame: pd.DataFrame
    source: str = "<DataFrame>"
    notes: tuple[str, ...] = field(default=())

    @property
    def n_votes(self) -> int:
        return len(self.frame)


def _role_columns(frame: pd.DataFrame, roles: Mapping[str, tuple[str, ...]]) -> set[str]:
    """Roles whose column the frame has under one of the aliases (case-insensitive)."""
    present = {str(c).strip().lower() for c in frame.columns}
    return {role for role, aliases in roles.items() if any(alias in present for alias in aliases)}


def is_pairwise_frame(frame: pd.DataFrame, columns: Mapping[str, str] | None = None) -> bool:
    """True when the frame has winner, agent_a and agent_b columns (or aliases) and no label column.

    An explicit ``columns`` mapping that names ``winner``/``agent_a``/``agent_b`` (or ``label``) decides.

    >>> import pandas as pd
    >>> is_pairwise_frame(pd.DataFrame(columns=["question_id", "model_a", "model_b", "judge", "winner"]))
    True
    >>> is_pairwise_frame(pd.DataFrame(columns=["item", "agent", "rater", "label"]))
    False
    """
    explicit = {role for role, name in (columns or {}).items() if name is not None}
    if "label" in explicit:
        return False
    if explicit & {"winner", "agent_a", "agent_b"}:
        return True
    pairwise = _role_columns(frame, PAIRWISE_ALIASES)
    single = _role_columns(frame, {"label": ROLE_ALIASES["label"]})
    return {"winner", "agent_a", "agent_b"} <= pairwise and "label" not in single


def pairwise_from_frame(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    duplicates: str = "error",
    source: str = "<DataFrame>",
) -> PairwiseTable:
    """Validate pairwise votes: non-empty ids, two different agents, a known winner, duplicate policy.

    Duplicate votes are the same (item, unordered agent pair, rater[, criterion]) on several rows;
    ``duplicates`` is ``"error"`` (default), ``"first"``, ``"last"`` or ``"keep"``, as in
    :func:`annotations_from_frame`.

    >>> import pandas as pd
    >>> votes = pd.DataFrame({"item": ["q1"], "agent_a": ["A"], "agent_b": ["B"], "rater": ["r1"],
    ...                       "winner": ["B"]})
    >>> pairwise_from_frame(votes).frame["winner"].tolist()
    ['b']
    """
    check_policy(duplicates)
    if len(frame) == 0:
        raise InputError("no rows", file=source, allowed="one row per vote")
    found = resolve_columns(frame, PAIRWISE_ALIASES, columns, source=source, optional=("criterion", "weight"))
    offset = line_offset(frame)
    item = id_column(frame, str(found["item"]), source=source, role="item")
    item, part_notes = item_with_parts(frame, item, list(found.values()), source=source)
    agent_a = id_column(frame, str(found["agent_a"]), source=source, role="agent_a")
    agent_b = id_column(frame, str(found["agent_b"]), source=source, role="agent_b")
    rater = id_column(frame, str(found["rater"]), source=source, role="rater")
    criterion = (id_column(frame, str(found["criterion"]), source=source, role="criterion")
                 if found["criterion"] is not None else None)

    same = (agent_a == agent_b).to_numpy()
    if same.any():
        pos = int(np.flatnonzero(same)[0])
        raise row_error(f"a vote compares an agent with itself ({int(same.sum()):,} row(s) in all)",
                         source=source, row=pos + 1, offset=offset, column=str(found["agent_b"]),
                         value=agent_b.iloc[pos], allowed="two different agents in agent_a and agent_b")

    winner = _winners(frame, str(found["winner"]), agent_a, agent_b, source=source, offset=offset)
    weight = (_weights(frame, str(found["weight"]), source=source, offset=offset)
              if found["weight"] is not None else None)

    both = pd.factorize(pd.concat([agent_a, agent_b], ignore_index=True))[0]
    code_a, code_b = both[: len(agent_a)], both[len(agent_a):]
    low, high = np.minimum(code_a, code_b), np.maximum(code_a, code_b)
    parts = [pd.factorize(item)[0], low, high, pd.factorize(rater)[0]]
    if criterion is not None:
        parts.append(pd.factorize(criterion)[0])
    key = combine_codes(*parts)

    def describe(pos: int) -> str:
        text = (f"item {item.iloc[pos]!r}, agents {agent_a.iloc[pos]!r} and {agent_b.iloc[pos]!r}, "
                f"rater {rater.iloc[pos]!r}")
        return text + (f", criterion {criterion.iloc[pos]!r}" if criterion is not None else "")

    what = "(item, agent pair, rater" + (", criterion)" if criterion is not None else ")")
    keep, notes = apply_duplicates(key, duplicates, source=source, offset=offset, describe=describe,
                                   what=what, hints=key_hint_columns(frame, list(found.values())))
    notes = part_notes + [note.replace("judgment", "vote") for note in notes]
    clean = pd.DataFrame({"item": item, "agent_a": agent_a, "agent_b": agent_b, "rater": rater,
                          "winner": winner})
    if criterion is not None:
        clean["criterion"] = criterion
    if weight is not None:
        clean["weight"] = weight
    if keep is not None:
        clean = clean.loc[keep].reset_index(drop=True)
    return PairwiseTable(frame=clean, source=source, notes=tuple(notes))


def _winners(frame: pd.DataFrame, column: str, agent_a: pd.Series, agent_b: pd.Series, *, source: str,
             offset: int | None) -> np.ndarray:
    """Each vote's winner as ``a``, ``b`` or ``tie`` (from :data:`WINNER_VALUES` or the winning agent's name)."""
    raw = frame[column].astype(str).str.strip()
    text = raw.fillna("").to_numpy(dtype=object)
    codes, uniques = pd.factorize(raw.str.lower().fillna(""))
    mapped = np.array([WINNER_VALUES.get(str(u), "") for u in np.asarray(uniques, dtype=object)],
                      dtype=object)
    winner = mapped[codes] if len(mapped) else np.full(len(frame), "", dtype=object)
    names_a, names_b = agent_a.to_numpy(dtype=object), agent_b.to_numpy(dtype=object)
    # an agent literally named like a winner value ('a', 'b', 'tie', 'model_a', ...): read as a position the
    # winner says one thing, read as the agent's name another
    clash = ((text == names_a) & (winner != "a")) | ((text == names_b) & (winner != "b"))
    clash &= winner != ""
    if clash.any():
        pos = int(np.flatnonzero(clash)[0])
        raise row_error(f"winner {text[pos]!r} is ambiguous: it is a winner value ({winner[pos]}) and also the name of "
                        f"an agent in this vote ({int(clash.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=offset, column=column, value=str(text[pos]), has_value=True,
                        allowed="agent names that are not winner values (a, b, tie, model_a, ...): rename the agent, "
                                "e.g. 'agent-a'")
    open_ = winner == ""
    if open_.any():
        by_name_a = open_ & (text == agent_a.to_numpy(dtype=object))
        by_name_b = open_ & (text == agent_b.to_numpy(dtype=object))
        winner[by_name_a] = "a"
        winner[by_name_b] = "b"
        open_ &= ~(by_name_a | by_name_b)
    if open_.any():
        pos = int(np.flatnonzero(open_)[0])
        value = frame[column].iloc[pos]
        raise row_error(f"unknown winner ({int(open_.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=offset, column=column, value=None if pd.isna(value) else str(value),
                        has_value=True, allowed=_WINNER_ALLOWED)
    return winner


def _weights(frame: pd.DataFrame, column: str, *, source: str, offset: int | None) -> np.ndarray:
    """Each vote's weight: a finite number >= 0."""
    weight = pd.to_numeric(frame[column].astype(str).str.strip(), errors="coerce").to_numpy(float)
    bad = ~np.isfinite(weight) | (weight < 0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"vote weight is not a number >= 0 ({int(bad.sum()):,} row(s) in all)", source=source,
                        row=pos + 1, offset=offset, column=column, value=str(frame[column].iloc[pos]),
                        allowed="a finite number >= 0")
    return np.asarray(weight)


def read_pairwise(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    duplicates: str = "error",
    format: str | None = None,
) -> PairwiseTable:
    """Read and validate a pairwise file (see :func:`read_table_file` and :func:`pairwise_from_frame`).

    >>> from stableval.data import example_path
    >>> read_pairwise(example_path("mt_bench"), duplicates="keep").n_votes
    1689
    """
    check_policy(duplicates)
    frame = read_table_file(path, format=format)
    return pairwise_from_frame(frame, columns=columns, duplicates=duplicates, source=str(path))


def pairwise_to_annotations(
    table: PairwiseTable, *, credit: Sequence[float] | str | None = None
) -> AnnotationTable:
    """Each vote → two judgments of responses (item, agent): winner ``win`` (2), loser ``loss`` (0), tie 1.

    The judgments keep the votes' order (vote 1's two judgments first), so a response's judgments are in file
    order (what majority vote's ``ties="first"`` reads).

    A rater who judged the same response in several votes (against different opponents) gives several
    judgments of it; that is how the votes were made, not a duplicate. Levels are ``loss, tie, win`` with
    credit ``0, 0.5, 1`` unless ``credit`` gives three other numbers.

    >>> import pandas as pd
    >>> votes = PairwiseTable(pd.DataFrame({"item": ["q1"], "agent_a": ["A"], "agent_b": ["B"],
    ...                                     "rater": ["r1"], "winner": ["a"]}))
    >>> pairwise_to_annotations(votes).to_frame().values.tolist()
    [['q1', 'A', 'r1', 'win'], ['q1', 'B', 'r1', 'loss']]
    """
    frame = table.frame
    credit_values = parse_credit(credit if credit is not None else PAIRWISE_CREDIT, PAIRWISE_LEVELS,
                                 source=table.source)
    winner = frame["winner"].to_numpy(dtype=object)
    bad = ~np.isin(winner, np.array(["a", "b", "tie"], dtype=object))
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError("winner must be normalised to a, b or tie (build tables with pairwise_from_frame)",
                         file=table.source, row=pos + 1, column="winner", value=winner[pos],
                         allowed="a, b, tie")
    label_a = np.where(winner == "a", 2, np.where(winner == "tie", 1, 0)).astype(np.int64)
    label_b = 2 - label_a

    judgments = pd.DataFrame({  # vote 1's two judgments (agent_a's, agent_b's), then vote 2's, ...
        "item": np.repeat(frame["item"].to_numpy(dtype=object), 2),
        "agent": np.column_stack([frame["agent_a"].to_numpy(dtype=object),
                                  frame["agent_b"].to_numpy(dtype=object)]).ravel(),
        "rater": np.repeat(frame["rater"].to_numpy(dtype=object), 2),
        "label": np.column_stack([label_a, label_b]).ravel(),
    })
    notes = [*table.notes, f"{table.n_votes:,} pairwise votes converted to {2 * table.n_votes:,} judgments: "
                           "win=2, tie=1, loss=0"]
    if "weight" in frame.columns:
        notes.append("vote weights are not used by the conversion to levels (stableval pairwise uses them)")
    if "criterion" in frame.columns:
        n_criteria = frame["criterion"].nunique()
        if n_criteria > 1:
            notes.append(f"votes on {n_criteria} criteria pooled into one table")
    return AnnotationTable.from_frame(judgments, levels=PAIRWISE_LEVELS, credit=credit_values,
                                      source=table.source, notes=notes)
