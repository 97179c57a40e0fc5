"""Read and validate annotation files (one row per judgment) into an :class:`AnnotationTable`.

Every column is read as text, so ids such as ``"007"`` survive; labels are parsed afterwards, either as level
names (``levels=["bad", "ok", "good"]``, worst first) or as integer codes ``0..K-1``. Every problem is an
:class:`~stableval.errors.InputError` naming the file, the 1-based data row, the column, the offending value and
what is allowed. Validation is vectorised: a million rows take about a second.

>>> import pandas as pd
>>> frame = pd.DataFrame({"task": ["q1", "q1", "q2"], "system": ["A", "A", "B"],
...                       "worker": ["w1", "w2", "w1"], "rating": ["good", "bad", "good"]})
>>> table = annotations_from_frame(frame, levels=["bad", "good"])
>>> table.n_judgments, list(table.agents), table.levels
(3, ['A', 'B'], ('bad', 'good'))
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from stableval.data.columns import (
    ROLE_ALIASES,
    id_codes,
    id_column,
    is_coded,
    item_with_parts,
    key_hint_columns,
    resolve_columns,
)
from stableval.data.duplicates import apply_duplicates, check_policy, combine_codes
from stableval.data.files import file_scale, line_offset, read_table_file
from stableval.data.labels import check_levels, encode_labels, parse_credit
from stableval.data.recode import recoding
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = ["annotations_from_frame", "read_annotations"]


def annotations_from_frame(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    credit: Sequence[float] | str | None = None,
    duplicates: str = "error",
    source: str = "<DataFrame>",
    default_agent: str | None = None,
    merge_levels: str | Mapping[str, Sequence[object]] | None = None,
    bins: str | Sequence[float] | None = None,
) -> AnnotationTable:
    """Validate a long frame (one row per judgment) and encode it as an :class:`AnnotationTable`.

    Args:
        frame: columns for item, agent, rater and label (names resolved by ``columns`` then ``ROLE_ALIASES``).
        columns: explicit role → column name, e.g. ``{"item": "patient", "rater": "observer"}``.
        levels: ordered level names, worst first; labels must equal one of them. Without it labels must be
            integers >= 0 and the levels are ``"0"..str(max)``.
        credit: one number per level (sequence or ``"0,0.5,1"``); default evenly spaced 0..1.
        duplicates: the same (item, agent, rater) on several rows: ``"error"`` (default), ``"first"``,
            ``"last"`` (keep one, note how many were dropped) or ``"keep"`` (independent repeated judgments).
        source: the name used in messages (a file name).
        default_agent: the agent of every row when the frame has no agent column (one system rated).
        merge_levels: recode the labels into ordered levels first (:func:`stableval.data.recode.recoding`:
            ``"1,2=low 3=mid 4,5=high"``); the mapping is noted and kept in the table's ``recoding``.
        bins: or cut numeric labels at these points (``"2.5,3.5"``, with ``levels`` naming the bins).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "A"], "rater": ["r1", "r1"],
    ...                       "label": ["2", "0"]})
    >>> table = annotations_from_frame(frame, duplicates="last")
    >>> table.levels, table.label.tolist(), table.notes[-1]
    (('0', '1', '2'), [0], "dropped 1 duplicate judgment(s) (policy 'last')")
    """
    check_policy(duplicates)
    if len(frame) == 0:
        raise InputError("no rows", file=source, allowed="one row per judgment")
    found = resolve_columns(frame, ROLE_ALIASES, columns, source=source,
                            optional=("agent",) if default_agent is not None else ())
    offset = line_offset(frame)
    notes: list[str] = []
    recode = recoding(merge_levels, bins, levels)
    if recode is not None:
        frame = recode.apply_to_frame(frame, str(found["label"]), source=source)
        levels = recode.levels
        notes.append(recode.describe())
    declared = file_scale(frame, str(found["label"])) if levels is None else None
    if declared is not None:  # a Parquet file written by stableval convert carries its scale
        levels = declared[0]
        credit = declared[1] if credit is None and declared[1] is not None and len(declared[1]) == len(levels) \
            else credit
        notes.append(f"levels from the file's metadata: {' < '.join(levels)}")
    level_names = check_levels(levels, source=source) if levels is not None else None
    if level_names is not None and credit is not None:
        parse_credit(credit, level_names, source=source)  # fail fast, before scanning the rows
    item_col, rater_col, label_col = (str(found[r]) for r in ("item", "rater", "label"))
    item = id_column(frame, item_col, source=source, role="item")
    item, part_notes = item_with_parts(frame, item, list(found.values()), source=source)
    notes += part_notes
    if found["agent"] is None:
        agent_name = str(default_agent).strip()
        if not agent_name:
            raise InputError("default_agent is empty", file=source, value=default_agent,
                             allowed="a non-empty agent name")
        one_agent = pd.CategoricalDtype([agent_name]) if is_coded(item) else str
        agent = pd.Series(agent_name, index=item.index, dtype=one_agent)
        notes.append(f"no agent column: every judgment is of agent {agent_name!r}")
    else:
        agent = id_column(frame, str(found["agent"]), source=source, role="agent")
    rater = id_column(frame, rater_col, source=source, role="rater")
    label, level_names, label_notes = encode_labels(frame, label_col, level_names, source=source)
    notes += label_notes
    credit_values = parse_credit(credit, level_names, source=source)

    item_code, agent_code, rater_code = id_codes(item), id_codes(agent), id_codes(rater)
    key = combine_codes(item_code, agent_code, rater_code)

    def describe(pos: int) -> str:
        return f"item {item.iloc[pos]!r}, agent {agent.iloc[pos]!r}, rater {rater.iloc[pos]!r}"

    keep, duplicate_notes = apply_duplicates(key, duplicates, source=source, offset=offset,
                                             describe=describe, what="(item, agent, rater)",
                                             hints=key_hint_columns(frame, list(found.values())))
    notes += duplicate_notes
    clean = pd.DataFrame({"item": item, "agent": agent, "rater": rater, "label": label})
    if keep is not None:
        clean = clean.loc[keep]
    table = AnnotationTable.from_frame(clean, levels=level_names, credit=credit_values, source=source, notes=notes)
    return table if recode is None else replace(table, recoding=recode.to_dict())


def read_annotations(
    path: str | os.PathLike[str],
    *,
    columns: Mapping[str, str] | None = None,
    levels: Sequence[str] | str | None = None,
    credit: Sequence[float] | str | None = None,
    duplicates: str = "error",
    format: str | None = None,
    default_agent: str | None = None,
) -> AnnotationTable:
    """Read an annotation file (:func:`read_table_file`) and validate it (:func:`annotations_from_frame`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.tsv"
    >>> _ = path.write_text("item\\tmodel\\tannotator\\trating\\nq1\\tA\\tr1\\tgood\\nq1\\tA\\tr2\\tbad\\n")
    >>> table = read_annotations(path, levels="bad,good")
    >>> table.source.endswith("ratings.tsv"), table.n_judgments, table.label.tolist()
    (True, 2, [1, 0])
    """
    check_policy(duplicates)
    frame = read_table_file(path, format=format, categorical=True)
    return annotations_from_frame(frame, columns=columns, levels=levels, credit=credit, duplicates=duplicates,
                                  source=str(path), default_agent=default_agent)
