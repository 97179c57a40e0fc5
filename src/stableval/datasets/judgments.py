"""Judgment tables with flags and skips: the input of reliability against quality control (QC).

A judgment table has one row per judgment: the roles of an annotation file (``item``, optional ``agent``,
``rater``, ``label``; the aliases of :data:`stableval.data.ROLE_ALIASES`, plus ``best`` for the label) and two
optional yes/no columns: ``flag`` (the rater marked the item not ratable, e.g. NSFW) and ``skip``. A label may
be empty only on a flagged or skipped row; an optional ``flag_reason`` column says why a row is flagged (``PII``,
``medical advice``, ``NSFW``, ...; a flagged row without one is ``unspecified``). :func:`read_judgments` reads
CSV, TSV, JSONL or Parquet, and a ``.json`` file in NVIDIA's notebook format
(:mod:`stableval.datasets.nvidia_reliability`), into the columns :data:`JUDGMENT_COLUMNS` that
:func:`stableval.evaluate.reliability.reliability_vs_qc` takes (plus ``flag_reason`` when the file has reasons).

>>> import pandas as pd
>>> raw = pd.DataFrame({"item": ["q1", "q1"], "worker": ["qc", "ann"], "label": ["A", ""], "flag": ["no", "Yes"]})
>>> judgments_from_frame(raw)[["item", "rater", "label", "flag", "skip"]].values.tolist()
[['q1', 'qc', 'A', False, False], ['q1', 'ann', '', True, False]]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from stableval.data.columns import ROLE_ALIASES, id_column, resolve_columns
from stableval.data.files import line_offset, read_table_file, row_error
from stableval.data.pairwise import is_pairwise_frame, pairwise_from_frame
from stableval.data.recode import recoding
from stableval.datasets._common import FLAG_ALLOWED, FLAG_FALSE, FLAG_TRUE, UNSPECIFIED, flag_reasons, parse_flags
from stableval.errors import InputError

__all__ = [
    "FLAG_ALLOWED",
    "FLAG_FALSE",
    "FLAG_TRUE",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_ROLES",
    "UNSPECIFIED",
    "flag_reasons",
    "judgments_from_frame",
    "judgments_from_votes",
    "parse_flags",
    "read_judgments",
]

#: Roles of a judgment table: the annotation roles plus optional ``flag`` and ``skip``.
JUDGMENT_ROLES: dict[str, tuple[str, ...]] = {
    **ROLE_ALIASES,
    "label": (*ROLE_ALIASES["label"], "best"),
    "flag": ("flag", "item_flag", "flagged", "nsfw", "unratable"),
    "skip": ("skip", "skipped"),
    "flag_reason": ("flag_reason", "reason", "flag_type"),
}

#: The columns of a validated judgment frame (``qc`` marks QC judgments; ``row`` is the 1-based data row).
JUDGMENT_COLUMNS: tuple[str, ...] = ("item", "agent", "rater", "label", "flag", "skip", "qc", "row")


def _labels(frame: pd.DataFrame, column: str, *, flag: np.ndarray, skip: np.ndarray,
            levels: Sequence[str] | str | None, source: str) -> pd.Series:
    """Stripped label text; empty only where flagged or skipped, and one of ``levels`` when given."""
    offset = line_offset(frame)
    label = frame[column].astype(str).str.strip().reset_index(drop=True)
    missing = (label == "").to_numpy() & ~flag & ~skip
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise row_error(f"empty label on a row that is neither flagged nor skipped ({int(missing.sum()):,} "
                        "row(s) in all)", source=source, row=pos + 1, offset=offset, column=column,
                        value="", allowed="a label, or flag/skip set on that row")
    if levels is not None:
        names = [part.strip() for part in levels.split(",")] if isinstance(levels, str) else [str(v) for v in levels]
        bad = ~label.isin(names).to_numpy() & (label != "").to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise row_error(f"label is not one of the levels ({int(bad.sum()):,} row(s) in all)", source=source,
                            row=pos + 1, offset=offset, column=column, value=label.iloc[pos],
                            allowed="one of: " + ", ".join(names))
    return label


def judgments_from_frame(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    source: str = "<DataFrame>",
    default_agent: str | None = None,
    require_rater: bool = True,
    roles: Mapping[str, tuple[str, ...]] | None = None,
    merge_levels: str | Mapping[str, Sequence[object]] | None = None,
    bins: str | Sequence[float] | None = None,
) -> pd.DataFrame:
    """Validate a raw judgment frame into the columns :data:`JUDGMENT_COLUMNS`.

    ``flag`` / ``skip`` columns are optional (yes/no, true/false, 1/0, empty = no). A label may be empty only
    where the row is flagged or skipped. ``levels`` (optional) restricts the non-empty labels. ``agent`` is
    optional (``default_agent``, else empty when absent: the unit is then the item). ``require_rater=False``
    reads a QC (gold) table, whose ``rater`` is left empty. With a ``flag_reason`` column the frame has one too
    (:func:`flag_reasons`). ``roles`` replaces :data:`JUDGMENT_ROLES` (the
    column aliases of each role). ``row`` is the 1-based data row, for messages. ``merge_levels`` / ``bins``
    recode the labels first (:func:`stableval.data.recode.recoding`; the frame's ``attrs["recoding"]`` keeps it).

    >>> import pandas as pd
    >>> judgments_from_frame(pd.DataFrame({"item": ["1"], "worker": ["w"], "best": ["tie"], "item_flag": ["No"]}))
      item agent rater label   flag   skip     qc  row
    0    1           w   tie  False  False  False    1
    """
    if len(frame) == 0:
        raise InputError("no rows", file=source, allowed="one row per judgment")
    aliases = dict(JUDGMENT_ROLES if roles is None else roles)
    if not require_rater:
        aliases.pop("rater", None)
    found = resolve_columns(frame, aliases, columns, source=source,
                            optional=("agent", "flag", "skip", "flag_reason"))
    recode = recoding(merge_levels, bins, levels)
    if recode is not None:
        frame = recode.apply_to_frame(frame, str(found["label"]), source=source)
        levels = recode.levels
    item = id_column(frame, str(found["item"]), source=source, role="item")
    if found.get("agent") is not None:
        agent = id_column(frame, str(found["agent"]), source=source, role="agent")
    else:
        agent = pd.Series("" if default_agent is None else str(default_agent), index=item.index, dtype=object)
    rater = (id_column(frame, str(found["rater"]), source=source, role="rater") if require_rater
             else pd.Series("", index=item.index, dtype=object))
    no = np.zeros(len(frame), dtype=bool)
    flag = parse_flags(frame, str(found["flag"]), source=source) if found.get("flag") is not None else no
    skip = parse_flags(frame, str(found["skip"]), source=source) if found.get("skip") is not None else no
    label = _labels(frame, str(found["label"]), flag=flag, skip=skip, levels=levels, source=source)
    out = pd.DataFrame({"item": item.to_numpy(dtype=object), "agent": agent.to_numpy(dtype=object),
                         "rater": rater.to_numpy(dtype=object), "label": label.to_numpy(dtype=object),
                         "flag": flag, "skip": skip, "qc": np.zeros(len(frame), dtype=bool),
                         "row": np.arange(1, len(frame) + 1)})
    if found.get("flag_reason") is not None:
        out["flag_reason"] = flag_reasons(frame[str(found["flag_reason"])], flag, source=source,
                                          column=str(found["flag_reason"]), offset=line_offset(frame))
    if recode is not None:
        out.attrs["recoding"] = {"note": recode.describe(), **recode.to_dict()}
    return out


def judgments_from_votes(frame: pd.DataFrame, *, columns: Mapping[str, str] | None = None,
                         source: str = "<DataFrame>") -> pd.DataFrame:
    """Pairwise votes as judgments (:data:`JUDGMENT_COLUMNS`): each comparison, the item and its two agents in name
    order (``"q1: A vs B"``), is one unit, and a rater's label is the agent it preferred, or ``tie``; so a vote
    agrees with QC when both preferred the same answer, whichever side each saw it on.

    >>> import pandas as pd
    >>> votes = pd.DataFrame({"item": ["q1", "q1"], "agent_a": ["A", "B"], "agent_b": ["B", "A"],
    ...                       "rater": ["r1", "r2"], "winner": ["a", "tie"]})
    >>> judgments_from_votes(votes)[["item", "rater", "label"]].values.tolist()
    [['q1: A vs B', 'r1', 'A'], ['q1: A vs B', 'r2', 'tie']]
    """
    votes = pairwise_from_frame(frame, columns=columns, duplicates="keep", source=source).frame
    first = votes[["agent_a", "agent_b"]].min(axis=1).astype(str)
    second = votes[["agent_a", "agent_b"]].max(axis=1).astype(str)
    winner = votes["winner"].to_numpy(dtype=object)
    label = np.where(winner == "a", votes["agent_a"], np.where(winner == "b", votes["agent_b"], "tie"))
    no = np.zeros(len(votes), dtype=bool)
    return pd.DataFrame({"item": (votes["item"].astype(str) + ": " + first + " vs " + second).to_numpy(dtype=object),
                         "agent": np.full(len(votes), "", dtype=object),
                         "rater": votes["rater"].to_numpy(dtype=object), "label": label.astype(object),
                         "flag": no, "skip": no.copy(), "qc": no.copy(), "row": np.arange(1, len(votes) + 1)})


def read_judgments(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    format: str | None = None,
    default_agent: str | None = None,
    merge_levels: str | Mapping[str, Sequence[object]] | None = None,
    bins: str | Sequence[float] | None = None,
) -> pd.DataFrame:
    """Read judgments for :func:`~stableval.evaluate.reliability.reliability_vs_qc`: a ``.json`` file in NVIDIA's
    notebook format (:func:`~stableval.datasets.nvidia_reliability.read_toy_json`, QC embedded), else
    CSV/TSV/JSONL/Parquet with optional ``flag``/``skip`` columns (:func:`judgments_from_frame`), or pairwise votes
    (``item, agent_a, agent_b, rater, winner``, detected from the columns as every reading command does:
    :func:`judgments_from_votes`).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judgments.csv"
    >>> _ = path.write_text("item,rater,label,skip\\nq1,r1,A,no\\nq1,r2,,yes\\n")
    >>> read_judgments(path)["skip"].tolist()
    [False, True]
    """
    path = Path(path)
    if format is None and path.suffix.lower() == ".json":
        from stableval.datasets.nvidia_reliability import read_toy_json

        return read_toy_json(path)
    frame = read_table_file(path, format=format)
    if is_pairwise_frame(frame, columns):
        return judgments_from_votes(frame, columns=columns, source=str(path))
    return judgments_from_frame(frame, columns=columns, levels=levels, source=str(path),
                                default_agent=default_agent, merge_levels=merge_levels, bins=bins)
