"""Rater metadata: which raters are people and which are LLM judges, the judges' model families, and the agents'.

Two sources, one result (:class:`RaterInfo`, aligned with an :class:`~stableval.data.table.AnnotationTable`'s
raters):

* a **rater metadata file** (CSV, TSV, JSON Lines or Parquet; ``rater_info=``) with one row per name:
  ``name`` (aliases ``rater``, ``rater_id``, ``judge``, ``agent``, ``id``), ``kind`` (``human``, ``llm`` or
  ``agent``) and ``family`` (the model family, e.g. ``gpt-4``; empty for people). Rows of kind ``agent`` give the
  families of the *rated* agents, which self-preference needs; a name may be listed once as a rater and once as an
  agent (a model that both answers and judges);
* **columns of the ratings file**: ``rater_kind`` (aliases ``judge_kind``, ``annotator_kind``, ``worker_kind``)
  and optionally ``rater_family`` (``judge_family``, ``annotator_family``), the same on every row of a rater.

Kinds are matched case-insensitively. Every problem is an :class:`~stableval.errors.InputError` naming the file,
row, column, value and what is allowed. Every rater of the ratings must have a kind; names the metadata lists but
the ratings do not use are noted, not an error (one metadata file can serve several rating files).

>>> import pandas as pd
>>> from stableval.data.table import AnnotationTable
>>> table = AnnotationTable.from_frame(pd.DataFrame({"item": ["q1", "q1"], "agent": ["gpt-4", "gpt-4"],
...                                                  "rater": ["ann", "judge"], "label": [1, 0]}), levels=("0", "1"))
>>> meta = pd.DataFrame({"name": ["ann", "judge", "gpt-4"], "kind": ["human", "LLM", "agent"],
...                      "family": ["", "openai", "openai"]})
>>> info = rater_info_from_frames(table, meta)
>>> info.kind.tolist(), info.family.tolist(), info.agent_family
(['human', 'llm'], ['', 'openai'], {'gpt-4': 'openai'})
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from stableval.data.columns import ROLE_ALIASES, id_column, resolve_columns
from stableval.data.files import line_offset, read_table_file, row_error, rows_text
from stableval.data.loader import InputOptions, Loaded, load_with_frame
from stableval.data.pairwise import PAIRWISE_ALIASES, is_pairwise_frame
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = [
    "INFO_ALIASES",
    "JUDGMENT_ALIASES",
    "RATER_KINDS",
    "RATER_SELECTIONS",
    "RaterInfo",
    "load_with_raters",
    "rater_info_from_frames",
    "read_rater_info",
    "response_lengths",
    "select_raters",
]

#: The kinds a rater can be.
RATER_KINDS: tuple[str, ...] = ("human", "llm")
#: The values of ``--raters``: one kind, or every rater.
RATER_SELECTIONS: tuple[str, ...] = ("all", "human", "llm")
_FILE_KINDS = ("human", "llm", "agent")

#: Header names of the metadata file's columns (case-insensitive).
INFO_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name", "rater", "rater_id", "judge", "agent", "id"),
    "kind": ("kind", "rater_kind", "type"),
    "family": ("family", "model_family", "rater_family"),
}
#: Header names of the optional per-row rater metadata columns of a ratings file (case-insensitive).
JUDGMENT_ALIASES: dict[str, tuple[str, ...]] = {
    "rater_kind": ("rater_kind", "judge_kind", "annotator_kind", "worker_kind"),
    "rater_family": ("rater_family", "judge_family", "annotator_family"),
}


@dataclass(frozen=True, eq=False)
class RaterInfo:
    """The kind and family of every rater of a table, and the families of its agents.

    Attributes:
        raters: rater names, in the table's rater order.
        kind: (R,) ``"human"`` or ``"llm"`` per rater.
        family: (R,) the model family of each LLM judge (``""`` when not given, and for people).
        agent_family: agent name → model family, for the agents whose family is known.
        source: where the metadata came from (a file name, or the ratings file's columns).
        notes: what reading did (names listed but unused).
    """

    raters: pd.Index
    kind: np.ndarray
    family: np.ndarray
    agent_family: dict[str, str] = field(default_factory=dict)
    source: str = "<metadata>"
    notes: tuple[str, ...] = ()

    def judgment_mask(self, table: AnnotationTable, kind: str) -> np.ndarray:
        """(M,) whether each judgment of ``table`` is by a rater of ``kind`` (``"all"``: every judgment).

        >>> import pandas as pd
        >>> t = AnnotationTable.from_frame(pd.DataFrame({"item": [1, 1], "agent": "A", "rater": ["h", "j"],
        ...                                              "label": [0, 1]}), levels=("0", "1"))
        >>> RaterInfo(t.raters, np.array(["human", "llm"]), np.array(["", "x"])).judgment_mask(t, "llm").tolist()
        [False, True]
        """
        if kind not in RATER_SELECTIONS:
            raise ValueError(f"rater kind {kind!r}; allowed: {', '.join(RATER_SELECTIONS)}")
        if kind == "all":
            return np.ones(table.n_judgments, dtype=bool)
        position = self.raters.get_indexer(table.raters)
        if (position < 0).any():
            missing = str(table.raters[int(np.flatnonzero(position < 0)[0])])
            raise ValueError(f"rater {missing!r} of the table has no metadata")
        of_kind = np.asarray(self.kind, dtype=object)[position] == kind
        return np.asarray(of_kind[table.rater])

    def counts(self) -> dict[str, int]:
        """Raters of each kind.

        >>> RaterInfo(pd.Index(["a", "b"]), np.array(["human", "human"]), np.array(["", ""])).counts()
        {'human': 2, 'llm': 0}
        """
        return {kind: int((np.asarray(self.kind) == kind).sum()) for kind in RATER_KINDS}


# ====================================================================================== validation helpers
def _kinds(values: pd.Series, *, allowed: tuple[str, ...], frame: pd.DataFrame, column: str,
           source: str) -> np.ndarray:
    """Lower-cased, stripped kinds; the first value not in ``allowed`` raises (row, column, value)."""
    code, uniques = pd.factorize(values.astype(str), use_na_sentinel=False)  # each distinct text handled once
    distinct = pd.Series(np.asarray(uniques, dtype=object)).str.strip().str.lower().to_numpy(dtype=object)
    text = distinct[code]
    bad = (~np.isin(distinct, np.array(allowed, dtype=object)))[code]
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"unknown rater kind ({int(bad.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=line_offset(frame), column=column, value=str(values.iloc[pos]), has_value=True,
                        allowed=", ".join(allowed) + " (case-insensitive)")
    return text


def _duplicates(names: np.ndarray, frame: pd.DataFrame, rows: np.ndarray, *, column: str, source: str,
                what: str) -> None:
    """Raise when a name is listed twice among ``rows`` (positions into ``frame``)."""
    if names.size == 0:
        return
    order = np.argsort(names, kind="stable")
    same = names[order][1:] == names[order][:-1]
    if same.any():
        first = int(np.flatnonzero(same)[0])
        name = names[order][first]
        where = sorted(int(rows[p]) + 1 for p in order[names[order] == name])
        raise InputError(f"{what} {name!r} is listed twice ({rows_text(where, line_offset(frame))})",
                         file=source, column=column, value=str(name),
                         allowed=f"one row per {what} name")


def _family_text(frame: pd.DataFrame, column: str | None) -> np.ndarray:
    if column is None:
        return np.full(len(frame), "", dtype=object)
    code, uniques = pd.factorize(frame[column].astype(str), use_na_sentinel=False)
    return pd.Series(np.asarray(uniques, dtype=object)).str.strip().to_numpy(dtype=object)[code]


# ====================================================================================== reading
def _from_info_frame(info: pd.DataFrame, source: str
                     ) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Rater name → (kind, family) and agent name → family from a metadata frame."""
    found = resolve_columns(info, INFO_ALIASES, None, source=source, optional=("family",))
    name_col, kind_col = str(found["name"]), str(found["kind"])
    names = id_column(info, name_col, source=source, role="name").to_numpy(dtype=object)
    kinds = _kinds(info[kind_col], allowed=_FILE_KINDS, frame=info, column=kind_col, source=source)
    family = _family_text(info, found["family"])
    family_col = str(found["family"]) if found["family"] is not None else "family"
    offset = line_offset(info)
    human_family = (kinds == "human") & (family != "")
    if human_family.any():
        pos = int(np.flatnonzero(human_family)[0])
        raise row_error("a human rater has no model family", source=source, row=pos + 1, offset=offset,
                        column=family_col, value=str(family[pos]),
                        allowed="an empty family for kind 'human' (families are for kinds 'llm' and 'agent')")
    agent_blank = (kinds == "agent") & (family == "")
    if agent_blank.any():
        pos = int(np.flatnonzero(agent_blank)[0])
        raise row_error("an agent row needs its model family", source=source, row=pos + 1, offset=offset,
                        column=family_col, value="", has_value=True,
                        allowed="a non-empty family (agent rows exist to say which family an agent belongs to)")
    rater_rows = np.flatnonzero(kinds != "agent")
    agent_rows = np.flatnonzero(kinds == "agent")
    _duplicates(names[rater_rows], info, rater_rows, column=name_col, source=source, what="rater")
    _duplicates(names[agent_rows], info, agent_rows, column=name_col, source=source, what="agent")
    raters = {str(names[p]): (str(kinds[p]), str(family[p])) for p in rater_rows}
    agents = {str(names[p]): str(family[p]) for p in agent_rows}
    return raters, agents


def _from_judgment_columns(frame: pd.DataFrame, options: InputOptions, source: str
                           ) -> dict[str, tuple[str, str]] | None:
    """Rater name → (kind, family) from ``rater_kind``/``rater_family`` columns, or None when there are none."""
    found = resolve_columns(frame, JUDGMENT_ALIASES, None, source=source, optional=tuple(JUDGMENT_ALIASES))
    if found["rater_kind"] is None:
        if found["rater_family"] is not None:
            raise InputError("a rater family column without a rater kind column", file=source,
                             column=str(found["rater_family"]),
                             allowed="also a rater_kind column (human or llm on every row), or a metadata file "
                                     "({rater_info})", options={"rater_info": "FILE"})
        return None
    pairwise = options.pairwise if options.pairwise is not None else is_pairwise_frame(frame, options.columns)
    roles = PAIRWISE_ALIASES if pairwise else ROLE_ALIASES
    explicit = {role: name for role, name in (options.columns or {}).items() if role == "rater"}
    rater_col = str(resolve_columns(frame, {"rater": roles["rater"]}, explicit, source=source)["rater"])
    kind_col = str(found["rater_kind"])
    code, uniques = pd.factorize(id_column(frame, rater_col, source=source, role="rater"), use_na_sentinel=False)
    names = np.asarray(uniques, dtype=object)[code]
    kinds = _kinds(frame[kind_col], allowed=RATER_KINDS, frame=frame, column=kind_col, source=source)
    family = _family_text(frame, found["rater_family"])
    human_family = (kinds == "human") & (family != "")
    if human_family.any():
        pos = int(np.flatnonzero(human_family)[0])
        raise row_error("a human rater has no model family", source=source, row=pos + 1, offset=line_offset(frame),
                        column=str(found["rater_family"]), value=str(family[pos]),
                        allowed="an empty family where the rater kind is 'human'")
    first = np.unique(code, return_index=True)[1]  # the first row of each rater
    for values, column in ((kinds, kind_col), (family, str(found["rater_family"] or ""))):
        differs = values != values[first[code]]
        if differs.any():
            pos = int(np.flatnonzero(differs)[0])
            raise row_error(f"rater {names[pos]!r} has a different {column} than on "
                            f"{rows_text([int(first[code[pos]]) + 1], line_offset(frame))}",
                            source=source, row=pos + 1, offset=line_offset(frame), column=column,
                            value=str(values[pos]), has_value=True,
                            allowed=f"the same {column} on every row of a rater: {values[first[code[pos]]]!r}")
    return {str(names[p]): (str(kinds[p]), str(family[p])) for p in first}


def rater_info_from_frames(table: AnnotationTable, info: pd.DataFrame | None = None,
                           judgments: pd.DataFrame | None = None, *, options: InputOptions | None = None,
                           info_source: str = "<metadata>", source: str | None = None) -> RaterInfo:
    """Rater metadata for ``table`` from a metadata frame (``info``) and/or the ratings frame's columns.

    Rater kinds come from one place: the metadata's ``human``/``llm`` rows or the ratings' ``rater_kind``
    column (both is an error; a metadata file with only ``agent`` rows adds agent families to the columns).
    Every rater of ``table`` needs a kind.

    >>> import pandas as pd
    >>> table = AnnotationTable.from_frame(pd.DataFrame({"item": [1], "agent": "A", "rater": ["j"], "label": [1]}),
    ...                                    levels=("0", "1"))
    >>> judgments = pd.DataFrame({"item": ["1"], "agent": ["A"], "rater": ["j"], "label": ["1"],
    ...                           "rater_kind": ["llm"], "rater_family": ["claude"]})
    >>> rater_info_from_frames(table, judgments=judgments).family.tolist()
    ['claude']
    """
    options = options if options is not None else InputOptions()
    source = source if source is not None else table.source
    from_info: dict[str, tuple[str, str]] = {}
    agents: dict[str, str] = {}
    if info is not None:
        from_info, agents = _from_info_frame(info, info_source)
    from_columns = _from_judgment_columns(judgments, options, source) if judgments is not None else None
    if from_info and from_columns is not None:
        raise InputError("rater kinds are given twice: by the ratings file's rater kind column and by human/llm "
                         f"rows of {info_source}", file=source, column="rater_kind",
                         allowed="one source: drop the column, or keep only agent rows in the metadata file")
    known = from_columns if from_columns is not None else from_info
    if not known:
        raise InputError("no rater kinds: the metadata lists no human or llm rater", file=info_source,
                         column="kind", allowed="rows of kind human or llm naming the raters of "
                                                f"{source}, or a rater_kind column in it")
    where = info_source if from_columns is None else f"the rater kind column of {source}"
    names = [str(r) for r in table.raters]
    missing = [name for name in names if name not in known]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (f" and {len(missing) - 5:,} more" if len(missing) > 5
                                                           else "")
        raise InputError(f"{len(missing):,} rater(s) of {source} have no kind in {where}: {shown}",
                         file=info_source if from_columns is None else source, value=missing[0],
                         allowed="a row (name, kind human or llm, family) for every rater of the ratings")
    notes: list[str] = []
    unused = sorted(set(known) - set(names))
    if unused:
        notes.append(f"{len(unused):,} rater(s) listed in {where} do not rate in {source}: "
                     + ", ".join(unused[:5]) + (" ..." if len(unused) > 5 else ""))
    agent_names = {str(a) for a in table.agents}
    unused_agents = sorted(set(agents) - agent_names)
    if unused_agents:
        notes.append(f"{len(unused_agents):,} agent(s) listed in {info_source} are not rated in {source}: "
                     + ", ".join(unused_agents[:5]) + (" ..." if len(unused_agents) > 5 else ""))
    return RaterInfo(
        raters=pd.Index(names, dtype=object),
        kind=np.array([known[n][0] for n in names], dtype=object),
        family=np.array([known[n][1] for n in names], dtype=object),
        agent_family={a: f for a, f in agents.items() if a in agent_names},
        source=where,
        notes=tuple(notes),
    )


def read_rater_info(path: str | os.PathLike[str], table: AnnotationTable, *, format: str | None = None
                    ) -> RaterInfo:
    """Read a rater metadata file (``name, kind, family``; any format :func:`read_table_file` reads) for ``table``.

    >>> import tempfile, pathlib, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "raters.csv"
    >>> _ = path.write_text("rater,kind,family\\nh1,human,\\nj1,llm,gpt-4\\n")
    >>> table = AnnotationTable.from_frame(pd.DataFrame({"item": [1, 1], "agent": "A", "rater": ["h1", "j1"],
    ...                                                  "label": [0, 1]}), levels=("0", "1"))
    >>> read_rater_info(path, table).counts()
    {'human': 1, 'llm': 1}
    """
    return rater_info_from_frames(table, read_table_file(path, format=format), info_source=str(path))


def load_with_raters(path: str | os.PathLike[str], options: InputOptions | None = None,
                     rater_info: str | os.PathLike[str] | None = None, *, length: str | None = None
                     ) -> tuple[Loaded, RaterInfo | None, np.ndarray | None]:
    """Read a ratings file once (as :func:`~stableval.data.load` does), with its rater metadata and answer lengths.

    Returns the loaded table, the :class:`RaterInfo` (from ``rater_info`` and/or ``rater_kind`` columns; ``None``
    when neither is there) and the (N,) answer length per response when ``length`` names its column(s)
    (:func:`response_lengths`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = path.write_text("item,agent,rater,label,rater_kind,words\\nq1,A,h,1,human,10\\nq1,A,j,0,llm,10\\n")
    >>> loaded, info, lengths = load_with_raters(path, length="words")
    >>> info.kind.tolist(), lengths.tolist()
    (['human', 'llm'], [10.0])
    """
    loaded, frame, options = load_with_frame(path, options)
    info_frame = read_table_file(rater_info) if rater_info is not None else None
    found = resolve_columns(frame, JUDGMENT_ALIASES, None, source=str(path), optional=tuple(JUDGMENT_ALIASES))
    has_columns = any(column is not None for column in found.values())  # a family alone is refused, not ignored
    info = None
    if info_frame is not None or has_columns:
        info = rater_info_from_frames(loaded.table, info_frame, frame if has_columns else None, options=options,
                                      info_source=str(rater_info) if rater_info is not None else "<metadata>",
                                      source=str(path))
    lengths = response_lengths(frame, loaded.table, length, options=options, source=str(path)) \
        if length is not None else None
    return loaded, info, lengths


# ====================================================================================== answer lengths
def _numbers(frame: pd.DataFrame, column: str, source: str) -> np.ndarray:
    code, uniques = pd.factorize(frame[column].astype(str), use_na_sentinel=False)  # parse each distinct text once
    text = pd.Series(np.asarray(uniques, dtype=object)).str.strip()
    parsed = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    values = parsed[code]
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise row_error(f"answer length is not a number >= 0 ({int(bad.sum()):,} row(s) in all)", source=source,
                        row=pos + 1, offset=line_offset(frame), column=column, value=str(text.iloc[code[pos]]),
                        has_value=True, allowed="a finite number >= 0 (e.g. tokens or words) on every row")
    return values


def _codes_in(values: pd.Series, index: pd.Index) -> np.ndarray:
    """(n,) position of each value in ``index`` (-1 where absent), looking each distinct value up once."""
    code, uniques = pd.factorize(values, use_na_sentinel=False)
    return np.asarray(index.get_indexer(pd.Index(np.asarray(uniques, dtype=object))))[code]


def response_lengths(frame: pd.DataFrame, table: AnnotationTable, length: str, *,
                     options: InputOptions | None = None, source: str | None = None) -> np.ndarray:
    """(N,) answer length of each response of ``table`` from the ratings frame's column(s) ``length``.

    Annotation files: one column, the length of the rated answer. Pairwise votes: two comma-separated columns,
    the lengths of the first and the second agent's answers (``"len_a,len_b"``). A response must have the same
    length on every row that mentions it.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"item": ["q1", "q1"], "agent": ["A", "B"], "rater": ["r", "r"], "label": ["1", "0"],
    ...                       "tokens": ["120", "40"]})
    >>> table = AnnotationTable.from_frame(frame.assign(label=[1, 0]), levels=("0", "1"))
    >>> response_lengths(frame, table, "tokens").tolist()
    [120.0, 40.0]
    """
    options = options if options is not None else InputOptions()
    source = source if source is not None else table.source
    pairwise = options.pairwise if options.pairwise is not None else is_pairwise_frame(frame, options.columns)
    wanted = [part.strip() for part in length.split(",") if part.strip()]
    need = 2 if pairwise else 1
    if len(wanted) != need:
        raise InputError(f"{'pairwise votes need two' if pairwise else 'annotations need one'} answer-length "
                         f"column(s), got {len(wanted)}", file=source, value=length,
                         allowed="LEN_A,LEN_B (the first and the second answer's length) for pairwise votes"
                                 if pairwise else "one column name (e.g. tokens)")
    roles: Mapping[str, tuple[str, ...]] = (
        {"item": PAIRWISE_ALIASES["item"], "agent_a": PAIRWISE_ALIASES["agent_a"],
         "agent_b": PAIRWISE_ALIASES["agent_b"]} if pairwise
        else {"item": ROLE_ALIASES["item"], "agent": ROLE_ALIASES["agent"]})
    explicit = {role: name for role, name in (options.columns or {}).items() if role in roles}
    optional = ("agent",) if options.default_agent is not None and not pairwise else ()
    found = resolve_columns(frame, roles, explicit, source=source, optional=optional)
    present = {str(c).lower(): str(c) for c in frame.columns}
    columns = []
    for name in wanted:
        if name not in frame.columns and name.lower() not in present:
            raise InputError("the answer-length column is not in the file", file=source, column=name,
                             allowed="columns present: " + ", ".join(map(str, frame.columns)))
        columns.append(name if name in frame.columns else present[name.lower()])
    item_code = np.tile(_codes_in(id_column(frame, str(found["item"]), source=source, role="item"), table.items),
                        len(columns))
    if pairwise:
        agent_cols = [str(found["agent_a"]), str(found["agent_b"])]
        agent_code = np.concatenate([_codes_in(id_column(frame, c, source=source, role="agent"), table.agents)
                                     for c in agent_cols])
    elif found.get("agent") is None:
        agent_code = np.full(len(frame), table.agents.get_loc(str(options.default_agent).strip()), dtype=np.int64)
    else:
        agent_code = _codes_in(id_column(frame, str(found["agent"]), source=source, role="agent"), table.agents)
    row = np.concatenate([np.arange(len(frame))] * len(columns))
    values = np.concatenate([_numbers(frame, c, source) for c in columns])
    column_of = np.repeat(np.arange(len(columns)), len(frame))
    keys = table.response_item.astype(np.int64) * max(table.n_agents, 1) + table.response_agent
    wanted_keys = item_code.astype(np.int64) * max(table.n_agents, 1) + agent_code
    response = np.searchsorted(keys, wanted_keys)
    found_rows = (item_code >= 0) & (agent_code >= 0) & (response < keys.size)
    found_rows[found_rows] = keys[response[found_rows]] == wanted_keys[found_rows]
    response, values, row, column_of = (a[found_rows] for a in (response, values, row, column_of))
    out = np.full(table.n_responses, np.nan)
    seen, first = np.unique(response, return_index=True)
    out[seen] = values[first]  # the length on the first row that mentions each response
    differs = out[response] != values
    if differs.any():
        pos = int(np.flatnonzero(differs)[0])
        raise row_error("the same answer has two different lengths", source=source, row=int(row[pos]) + 1,
                        offset=line_offset(frame), column=columns[int(column_of[pos])], value=str(values[pos]),
                        has_value=True,
                        allowed=f"the length given on its first row, {out[response[pos]]:g} (one length per "
                                "(item, agent) answer)")
    return out


# ====================================================================================== selecting raters
def select_raters(table: AnnotationTable, info: RaterInfo | None, kind: str) -> AnnotationTable:
    """``table`` with only the judgments of raters of ``kind`` (``"all"``: unchanged); a note says what was kept.

    >>> import pandas as pd
    >>> t = AnnotationTable.from_frame(pd.DataFrame({"item": [1, 1], "agent": "A", "rater": ["h", "j"],
    ...                                              "label": [0, 1]}), levels=("0", "1"))
    >>> info = RaterInfo(t.raters, np.array(["human", "llm"]), np.array(["", "x"]))
    >>> kept = select_raters(t, info, "human")
    >>> kept.n_judgments, kept.notes[-1]
    (1, 'raters: human only (1 of 2 raters, 1 of 2 judgments)')
    """
    if kind not in RATER_SELECTIONS:
        raise InputError("unknown rater selection", value=kind, allowed=", ".join(RATER_SELECTIONS))
    if kind == "all":
        return table
    if info is None:
        raise InputError(f"raters of kind {kind!r} asked for, but the raters' kinds are not known", file=table.source,
                         allowed="a rater metadata file ({rater_info}; columns name, kind, family) or a "
                                 "rater_kind column in the ratings", options={"rater_info": "FILE"})
    keep = info.judgment_mask(table, kind)
    if not keep.any():
        raise InputError(f"no judgments by raters of kind {kind!r}", file=table.source, value=kind,
                         allowed=", ".join(k for k, n in info.counts().items() if n) + " (the kinds present), "
                                 "or all")
    kept = table.subset(keep)
    note = (f"raters: {kind} only ({kept.n_raters:,} of {table.n_raters:,} raters, {kept.n_judgments:,} of "
            f"{table.n_judgments:,} judgments)")
    return replace(kept, notes=(*kept.notes, note))
