"""Column roles: which column of a table holds the item, agent, rater and label, and the ids in those columns.

A role's column is named explicitly (``columns={"item": "question"}``) or found under one of its aliases
(:data:`ROLE_ALIASES`, case-insensitive). A missing role's message names the option that sets it,
``columns.ROLE`` (:class:`~stableval.errors.InputError` ``option``), which the command line spells as its flag.

>>> import pandas as pd
>>> frame = pd.DataFrame({"Task": ["q1"], "system": ["A"], "worker": ["w1"], "rating": ["2"]})
>>> resolve_columns(frame, ROLE_ALIASES, None, source="ratings.csv")
{'item': 'Task', 'agent': 'system', 'rater': 'worker', 'label': 'rating'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from stableval.data.files import line_offset, row_error
from stableval.data.flags import CLI_FLAGS  # re-exported: its earlier home
from stableval.errors import COLUMN_OPTION, InputError

__all__ = ["CLI_FLAGS", "ITEM_PARTS", "KEY_HINTS", "ROLE_ALIASES", "category_codes", "coded", "id_codes", "id_column",
           "is_coded", "item_with_parts", "key_hint_columns", "resolve_columns"]

#: Header names accepted for each role, in order of preference (matched case-insensitively). An explicit
#: ``columns={"item": "question"}`` mapping always wins. ``response`` is deliberately *not* a label alias: in
#: stableval a response is an agent's answer, and a ``response`` column usually holds its text.
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "item": ("item", "item_id", "task", "task_id", "question_id", "question", "prompt_id"),
    "agent": ("agent", "agent_id", "system", "system_id", "model", "model_id"),
    "rater": ("rater", "rater_id", "worker", "worker_id", "annotator", "annotator_id", "judge", "judge_id"),
    "label": ("label", "rating", "score", "grade", "judgment", "judgement"),
}

# the roles whose options a missing-column message lists ("role options: ...")
_LISTED_ROLES = ("item", "agent", "rater", "label", "agent_a", "agent_b", "winner", "criterion")


def resolve_columns(
    frame: pd.DataFrame,
    roles: Mapping[str, tuple[str, ...]],
    columns: Mapping[str, str] | None,
    *,
    source: str,
    optional: Sequence[str] = (),
) -> dict[str, str | None]:
    """Role → column: an explicit mapping first, then the aliases (case-insensitive, exact case preferred).

    Required roles that are not found raise an InputError naming the columns present and the option
    (``columns.ROLE``) that names the column.

    >>> import pandas as pd
    >>> resolve_columns(pd.DataFrame(columns=["Q", "label"]), {"item": ("item",), "label": ("label",)},
    ...                 {"item": "q"}, source="x.csv")
    {'item': 'Q', 'label': 'label'}
    """
    present = [str(c) for c in frame.columns]
    lowered: dict[str, list[str]] = {}
    for name in present:
        lowered.setdefault(name.strip().lower(), []).append(name)
    explicit = dict(columns or {})
    unknown = sorted(set(explicit) - set(roles))
    if unknown:
        raise InputError("unknown role in the column mapping", file=source, value=unknown[0],
                         allowed="roles: " + ", ".join(roles))
    found: dict[str, str | None] = {}
    for role, aliases in roles.items():
        if explicit.get(role) is not None:
            wanted = str(explicit[role])
            if wanted in present:
                found[role] = wanted
            elif len(lowered.get(wanted.strip().lower(), [])) == 1:
                found[role] = lowered[wanted.strip().lower()][0]
            else:
                raise InputError(f"the {role} column named in the mapping is not in the file", file=source,
                                 column=wanted, allowed="columns present: " + ", ".join(present))
            continue
        found[role] = None
        for alias in aliases:
            if alias in present:
                found[role] = alias
                break
            if lowered.get(alias):
                found[role] = lowered[alias][0]
                break
        if found[role] is None and role not in optional:
            option = COLUMN_OPTION + role
            options: dict[str, str | None] = {option: "NAME"}
            allowed = f"name it with {{{option}}}"
            if role == "agent":
                options["default_agent"] = "NAME"
                allowed += "; or, if one system was rated, {default_agent} gives every row that agent"
            listed = [COLUMN_OPTION + r for r in roles if r in _LISTED_ROLES and r != role]
            options.update(dict.fromkeys(listed))
            raise InputError(
                f"no {role} column (looked for: {', '.join(aliases)}); columns present: {', '.join(present)}",
                file=source, column=role, option=option, options=options,
                allowed=allowed + "; other role options: " + ", ".join("{" + name + "}" for name in listed))
    used: dict[str, str] = {}
    for role, column in found.items():
        if column is None:
            continue
        if column in used:
            raise InputError(f"one column is used for two roles ({used[column]} and {role})", file=source,
                             column=column, allowed="a different column for each role")
        used[column] = role
    return found


def id_column(frame: pd.DataFrame, name: str, *, source: str, role: str) -> pd.Series:
    """The stripped text of an id column (str Series, index 0..n-1); empty ids raise (row, column, value).

    A categorical column (:func:`~stableval.data.files.read_table_file` with ``categorical=True``) gives a
    categorical of the stripped texts: the same values, each distinct text stripped once.

    >>> import pandas as pd
    >>> id_column(pd.DataFrame({"who": [" r1 ", "r2"]}), "who", source="x.csv", role="rater").tolist()
    ['r1', 'r2']
    >>> id_column(pd.DataFrame({"who": pd.Categorical([" r1 ", "r1"])}), "who", source="x.csv", role="rater")
    0    r1
    1    r1
    Name: who, dtype: category
    Categories (1, str): ['r1']
    """
    column = frame[name]
    if is_coded(column):
        return _coded_ids(frame, name, source=source, role=role)
    text = column.astype(str).str.strip().reset_index(drop=True)
    empty = text.isna().to_numpy() | (text == "").to_numpy(dtype=bool, na_value=True)
    if empty.any():
        pos = int(np.flatnonzero(empty)[0])
        raw = column.iloc[pos]
        raise row_error(f"empty {role} id ({int(empty.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=line_offset(frame), column=name,
                        value=None if pd.isna(raw) else str(raw), has_value=True,
                        allowed=f"a non-empty {role} id on every row")
    return text


def _coded_ids(frame: pd.DataFrame, name: str, *, source: str, role: str) -> pd.Series:
    """:func:`id_column` of a categorical column: each distinct text stripped and checked once."""
    column = frame[name]
    if _plain_categories(column, strip=True):  # every category used, distinct after stripping: as it is
        text = column.cat.categories.to_numpy(dtype=object)
        if (text == "").any():
            codes = column.cat.codes.to_numpy()
        else:
            return column.reset_index(drop=True)
    else:
        codes, text = category_codes(column, strip=True)
    empty = text == ""
    if empty.any():
        rows = empty[codes]
        pos = int(np.flatnonzero(rows)[0])
        raise row_error(f"empty {role} id ({int(rows.sum()):,} row(s) in all)", source=source, row=pos + 1,
                        offset=line_offset(frame), column=name, value=str(column.iloc[pos]), has_value=True,
                        allowed=f"a non-empty {role} id on every row")
    return pd.Series(coded(codes, text), name=column.name)


def is_coded(column: pd.Series) -> bool:
    """True for a categorical column with no missing values: its rows are codes into distinct texts.

    >>> is_coded(pd.Series(pd.Categorical(["a", "b"]))), is_coded(pd.Series(["a", "b"]))
    (True, False)
    """
    return isinstance(column.dtype, pd.CategoricalDtype) and not bool((column.cat.codes.to_numpy() < 0).any())


def category_codes(column: pd.Series, *, strip: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct texts) of a categorical column: only the texts rows use, equal texts merged (after
    stripping them with ``strip``), each exactly what ``column.astype(str)`` (``.str.strip()``) gives for its rows.

    >>> codes, text = category_codes(pd.Series(pd.Categorical([" a", "b", "a"], categories=["x", " a", "a", "b"])),
    ...                              strip=True)
    >>> codes.tolist(), text.tolist()
    ([0, 1, 0], ['a', 'b'])
    """
    codes = column.cat.codes.to_numpy()
    if _plain_categories(column, strip=strip):  # distinct categories: nothing to merge
        return codes.astype(np.int32, copy=False), column.cat.categories.to_numpy(dtype=object)
    categories = column.cat.categories
    text = pd.Series(categories.to_numpy(dtype=object), dtype=object).astype(str)
    if strip:
        text = text.str.strip()
    used = np.bincount(codes, minlength=len(text)) > 0
    merged, distinct = pd.factorize(text.where(used, text.iloc[int(np.argmax(used))] if used.any() else ""))
    return merged.astype(np.int32)[codes], np.asarray(distinct, dtype=object)


def id_codes(ids: pd.Series) -> np.ndarray:
    """Integer codes of an id column, equal where the ids are equal: a categorical's own codes (its categories are
    distinct), else ``pd.factorize``.

    >>> id_codes(pd.Series(["b", "a", "b"])).tolist(), id_codes(pd.Series(pd.Categorical(["b", "a", "b"]))).tolist()
    ([0, 1, 0], [1, 0, 1])
    """
    if is_coded(ids):
        return np.asarray(ids.cat.codes.to_numpy(), dtype=np.int64)
    return np.asarray(pd.factorize(ids)[0], dtype=np.int64)


def _plain_categories(column: pd.Series, *, strip: bool) -> bool:
    """True when a categorical's categories are text (the dtype ``astype(str)`` gives), each used by some row, and
    (with ``strip``) unchanged by stripping: its codes and categories are then the distinct texts as they are."""
    categories = column.cat.categories
    if categories.dtype != pd.Series([""]).astype(str).dtype:
        return False
    if strip and not bool(pd.Series(categories).str.strip().equals(pd.Series(categories))):
        return False
    return bool((np.bincount(column.cat.codes.to_numpy(), minlength=len(categories)) > 0).all())


def coded(codes: np.ndarray, text: np.ndarray) -> pd.Categorical:
    """The categorical of rows ``codes`` into the distinct texts ``text`` (the inverse of :func:`category_codes`).

    >>> coded(np.array([1, 0, 1]), np.array(["a", "b"], dtype=object)).tolist()
    ['b', 'a', 'b']
    """
    return pd.Categorical.from_codes(codes, categories=pd.Index(text, dtype=str), validate=False)


#: Columns that, when present and not used for a role, are part of what was judged: each (item, turn) is its own
#: item, ``q81`` turn 1 becoming ``q81-turn1`` (as ``stableval convert mt-bench`` names them).
ITEM_PARTS: tuple[str, ...] = ("turn",)
#: Unused columns that may tell apart rows that look like repeated judgments (named in the duplicate messages).
KEY_HINTS: tuple[str, ...] = ("turn", "criterion", "category", "aspect", "dimension", "round", "subset")


def _unused(frame: pd.DataFrame, names: Sequence[str], used: Sequence[str | None]) -> list[str]:
    taken = {str(c) for c in used if c is not None}
    wanted = set(names)
    return [str(c) for c in frame.columns if str(c).strip().lower() in wanted and str(c) not in taken]


def item_with_parts(frame: pd.DataFrame, item: pd.Series, used: Sequence[str | None], *, source: str
                    ) -> tuple[pd.Series, list[str]]:
    """The item ids joined with the unused :data:`ITEM_PARTS` columns (``q81`` + turn ``1`` → ``q81-turn1``), and
    a note saying so; the ids unchanged when the frame has no such column.

    >>> frame = pd.DataFrame({"question_id": ["81", "81"], "turn": ["1", "2"]})
    >>> ids, notes = item_with_parts(frame, frame["question_id"], ["question_id"], source="x.jsonl")
    >>> ids.tolist(), notes
    (['81-turn1', '81-turn2'], ["column 'turn': each (item, turn) is its own item, e.g. '81-turn1' (as stableval \
convert mt-bench names them)"])
    """
    notes = []
    for name in _unused(frame, ITEM_PARTS, used):
        part = id_column(frame, name, source=source, role=name.strip().lower())
        if part.nunique() < 2:
            continue
        if is_coded(item) and is_coded(part):
            item_codes, item_text = category_codes(item)
            part_codes, part_text = category_codes(part)
            pair, pairs = pd.factorize(item_codes.astype(np.int64) * len(part_text) + part_codes)
            pairs = np.asarray(pairs, dtype=np.int64)
            joined = pd.Series(item_text[pairs // len(part_text)], dtype=str) + f"-{name.strip().lower()}" + \
                pd.Series(part_text[pairs % len(part_text)], dtype=str)
            codes, text = category_codes(pd.Series(coded(pair.astype(np.int32), joined.to_numpy(dtype=object))))
            item = pd.Series(coded(codes, text), name=item.name)
        else:
            item = item + f"-{name.strip().lower()}" + part
        notes.append(f"column {name!r}: each (item, {name}) is its own item, e.g. {item.iloc[0]!r} (as stableval "
                     "convert mt-bench names them)")
    return item, notes


def key_hint_columns(frame: pd.DataFrame, used: Sequence[str | None]) -> dict[str, pd.Series]:
    """The unused :data:`KEY_HINTS` columns (as text), which may tell apart rows that look repeated.

    >>> list(key_hint_columns(pd.DataFrame(columns=["item", "Category", "label"]), ["item", "label"]))
    ['Category']
    """
    return {name: (frame[name] if is_coded(frame[name]) else frame[name].astype(str)).reset_index(drop=True)
            for name in _unused(frame, KEY_HINTS, used)}
