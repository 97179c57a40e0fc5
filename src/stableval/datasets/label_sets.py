"""Per-item label sets (the ratings of each item, no rater ids needed) and the model predictions scored on them.

The input of the rater bootstrap (:func:`stableval.evaluate.rater_bootstrap.rater_bootstrap`). A file of label
sets has one of two layouts: *long*, one row per rating with an item and a label column; or *counts*, one row per
item with one integer column per label (CIFAR-10H style). A predictions file has one ``item, prediction`` row per
item.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "counts.csv").write_text("item,no,yes\\ni1,3,0\\ni2,1,2\\n")
>>> sets = read_label_sets(folder / "counts.csv")
>>> sets.levels, sets.counts().tolist()
(('no', 'yes'), [[3, 0], [1, 2]])
>>> _ = (folder / "preds.csv").write_text("item,prediction\\ni1,no\\ni2,yes\\n")
>>> read_predictions_file(folder / "preds.csv").to_dict()
{'i1': 'no', 'i2': 'yes'}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.data.files import read_table_file
from stableval.data.recode import recoding
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

__all__ = ["LabelSets", "read_label_sets", "read_predictions_file"]


@dataclass(frozen=True, eq=False)
class LabelSets:
    """Per-item multisets of labels in compressed form (no rater ids needed).

    Attributes:
        offsets: (N+1,) int64; the labels of item ``i`` are ``labels[offsets[i]:offsets[i+1]]``.
        labels: (M,) int32 label codes 0..K-1.
        items: the N item names.
        levels: the K label names.
        source: where the sets came from.
        notes: what reading did to the input, for the user to see.

    >>> LabelSets.from_lists([["cat", "dog", "cat"], ["dog"]]).counts()
    array([[2, 1],
           [0, 1]])
    """

    offsets: np.ndarray
    labels: np.ndarray
    items: pd.Index
    levels: tuple[str, ...]
    source: str = "<memory>"
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        sizes = np.diff(self.offsets)
        if self.offsets.ndim != 1 or self.offsets.size != len(self.items) + 1 or self.offsets[0] != 0:
            raise InputError("offsets must have one more entry than there are items and start at 0",
                             file=self.source)
        if np.any(sizes < 1):
            empty = int(np.flatnonzero(sizes < 1)[0])
            raise InputError("item has no ratings", file=self.source, value=str(self.items[empty]),
                             allowed="at least one rating per item")
        if self.labels.size != self.offsets[-1]:
            raise InputError("labels do not match the offsets", file=self.source)
        if self.labels.size and (self.labels.min() < 0 or self.labels.max() >= len(self.levels)):
            raise InputError("label code out of range", file=self.source,
                             allowed=f"integers 0..{len(self.levels) - 1}")

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_counts(cls, counts: Any, *, items: Sequence[str] | None = None,
                    levels: Sequence[str] | None = None, source: str = "<memory>") -> LabelSets:
        """From an (N, K) matrix of non-negative integer label counts per item (e.g. CIFAR-10H style)."""
        matrix = np.asarray(counts)
        if matrix.ndim != 2:
            raise InputError("label counts must be a 2-D matrix (items × labels)", file=source,
                             value=f"shape {matrix.shape}")
        if not np.issubdtype(matrix.dtype, np.number) or not np.all(np.isfinite(matrix)):
            raise InputError("label counts must be finite numbers", file=source)
        if np.any(matrix < 0) or np.any(matrix != np.round(matrix)):
            bad = np.argwhere((matrix < 0) | (matrix != np.round(matrix)))[0]
            raise InputError("label count must be a non-negative integer", file=source, row=int(bad[0]) + 1,
                             column=None if levels is None else str(levels[bad[1]]),
                             value=float(matrix[bad[0], bad[1]]), allowed="0, 1, 2, ...")
        n, k = matrix.shape
        counts_int = matrix.astype(np.int64)
        flat = counts_int.ravel()
        labels = np.repeat(np.tile(np.arange(k, dtype=np.int32), n), flat)
        offsets = np.concatenate([[0], np.cumsum(counts_int.sum(axis=1))]).astype(np.int64)
        names = pd.Index([str(i) for i in range(n)] if items is None else [str(i) for i in items], dtype=object)
        level_names = tuple(str(i) for i in range(k)) if levels is None else tuple(str(v) for v in levels)
        if len(level_names) != k or len(names) != n:
            raise InputError("items/levels do not match the count matrix", file=source,
                             value=f"{len(names)} items × {len(level_names)} levels for shape {matrix.shape}")
        return cls(offsets=offsets, labels=labels, items=names, levels=level_names, source=source)

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[Any]], *, items: Sequence[str] | None = None,
                   levels: Sequence[str] | None = None, source: str = "<memory>") -> LabelSets:
        """From one list of label names per item; levels default to the sorted distinct labels."""
        flat = [str(label) for labels in lists for label in labels]
        sizes = np.array([len(labels) for labels in lists], dtype=np.int64)
        names = [str(i) for i in range(len(lists))] if items is None else [str(i) for i in items]
        return cls._from_flat(np.repeat(np.arange(len(lists)), sizes), pd.Series(flat, dtype=object),
                              pd.Index(names, dtype=object), levels, source)

    @classmethod
    def from_table(cls, table: AnnotationTable) -> LabelSets:
        """From an :class:`~stableval.data.AnnotationTable`: one set per response (item, or item/agent)."""
        order = np.argsort(table.response, kind="stable")
        sizes = np.bincount(table.response, minlength=table.n_responses)
        names = table.items.to_numpy()[table.response_item].astype(str)
        if table.n_agents > 1:
            names = np.char.add(np.char.add(names, "/"), table.agents.to_numpy()[table.response_agent].astype(str))
        return cls(offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   labels=table.label[order].astype(np.int32), items=pd.Index(names, dtype=object),
                   levels=tuple(table.levels), source=table.source, notes=tuple(table.notes))

    @classmethod
    def _from_flat(cls, item_code: np.ndarray, label_text: pd.Series, items: pd.Index,
                   levels: Sequence[str] | None, source: str, notes: Sequence[str] = ()) -> LabelSets:
        if levels is None:
            level_names = tuple(sorted(pd.unique(label_text).tolist(), key=_natural_key))
        else:
            level_names = tuple(str(v) for v in levels)
        code = pd.Index(level_names).get_indexer(label_text)
        if np.any(code < 0):
            bad = int(np.flatnonzero(code < 0)[0])
            raise InputError("label is not one of the levels", file=source, row=bad + 1, column="label",
                             value=label_text.iloc[bad], allowed="one of: " + ", ".join(level_names))
        order = np.argsort(item_code, kind="stable")
        sizes = np.bincount(item_code, minlength=len(items))
        return cls(offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   labels=code[order].astype(np.int32), items=items, levels=level_names, source=source,
                   notes=tuple(notes))

    # ---------------------------------------------------------------- views
    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def sizes(self) -> np.ndarray:
        """(N,) number of ratings per item."""
        return np.diff(self.offsets)

    def counts(self) -> np.ndarray:
        """(N, K) number of ratings of each label per item."""
        item = np.repeat(np.arange(self.n_items), self.sizes)
        flat = np.bincount(item * self.n_levels + self.labels, minlength=self.n_items * self.n_levels)
        return flat.reshape(self.n_items, self.n_levels)


def _natural_key(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def read_label_sets(path: str | os.PathLike[str], *, item_col: str = "item", label_col: str | None = None,
                    levels: Sequence[str] | None = None, format: str | None = None,
                    merge_levels: str | Mapping[str, Sequence[object]] | None = None,
                    bins: str | Sequence[float] | None = None) -> LabelSets:
    """Read per-item label sets from a file (CSV, TSV, JSONL or Parquet).

    Two layouts: *long*, one row per rating with an item and a label column (``label_col``, default ``label``
    when the file has one); or *counts*, one row per item with one integer column per label (all columns other
    than the item column; the column names are the levels). ``merge_levels`` / ``bins`` recode the labels of the
    long layout first (:func:`stableval.data.recode.recoding`; the mapping leads the notes).
    """
    source = str(path)
    frame = read_table_file(path, format=format)
    if item_col not in frame.columns:
        raise InputError("no item column", file=source, column=item_col, value=list(frame.columns),
                         allowed="a column naming the item (--item-col)")
    label = label_col or ("label" if "label" in frame.columns else None)
    items_text = frame[item_col].astype(str).str.strip()
    blank = items_text == ""
    if blank.any():
        raise InputError("empty item id", file=source, row=int(np.flatnonzero(blank.to_numpy())[0]) + 1,
                         column=item_col, allowed="a non-empty id")
    if label is None and (merge_levels is not None or bins is not None):
        raise InputError("merge_levels and bins recode the labels of one row per rating, not a counts file",
                         file=source, option="merge_levels", allowed="a file with a label column (--label-col)")
    if label is not None:
        if label not in frame.columns:
            raise InputError("no label column", file=source, column=label, value=list(frame.columns))
        text = frame[label].astype(str).str.strip()
        recode = recoding(merge_levels, bins, levels)
        if recode is not None:
            text, levels = recode.apply(frame[label], source=source, column=label), list(recode.levels)
        empty = text == ""
        if empty.any():
            raise InputError("empty label", file=source, row=int(np.flatnonzero(empty.to_numpy())[0]) + 1,
                             column=label, allowed="a label on every row")
        code, names = pd.factorize(items_text, sort=True)
        sets = LabelSets._from_flat(code, text, pd.Index(names, dtype=object), levels, source)
        return sets if recode is None else replace(sets, notes=(recode.describe(), *sets.notes))
    value_cols = [c for c in frame.columns if c != item_col]
    if not value_cols:
        raise InputError("no label columns", file=source, value=list(frame.columns),
                         allowed="a 'label' column (long layout) or one count column per label")
    if items_text.duplicated().any():
        dup = int(np.flatnonzero(items_text.duplicated().to_numpy())[0])
        raise InputError("item appears twice in a counts file", file=source, row=dup + 1, column=item_col,
                         value=items_text.iloc[dup], allowed="one row per item")
    numbers = frame[value_cols].apply(pd.to_numeric, errors="coerce")
    bad = numbers.isna().to_numpy()
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise InputError("label count is not a number", file=source, row=int(row) + 1,
                         column=str(value_cols[col]), value=frame.iloc[row][value_cols[col]],
                         allowed="non-negative integers (or give --label-col for one row per rating)")
    return LabelSets.from_counts(numbers.to_numpy(), items=items_text.tolist(),
                                 levels=[str(c) for c in value_cols], source=source)


def read_predictions_file(path: str | os.PathLike[str], *, item_col: str = "item",
                          prediction_col: str | None = None, format: str | None = None) -> pd.Series:
    """Read ``item, prediction`` rows (CSV/TSV/JSONL/Parquet) into a Series indexed by item.

    The prediction column is ``prediction_col`` or the first of ``prediction``, ``label``, ``answer``.
    Duplicate items are errors.
    """
    source = str(path)
    frame = read_table_file(Path(path), format=format)
    column = prediction_col or next((c for c in ("prediction", "label", "answer") if c in frame.columns), None)
    for role, name in (("item", item_col), ("prediction", column)):
        if name is None or name not in frame.columns:
            raise InputError(f"no {role} column", file=source, column=name, value=list(frame.columns),
                             allowed=f"a {role} column" + (" (prediction, label or answer)"
                                                           if role == "prediction" else ""))
    items = frame[item_col].astype(str).str.strip()
    dup = items.duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError("item predicted twice", file=source, row=row + 1, column=item_col, value=items.iloc[row],
                         allowed="one prediction per item")
    return pd.Series(frame[column].astype(str).str.strip().to_numpy(), index=items.to_numpy(), name=source)
