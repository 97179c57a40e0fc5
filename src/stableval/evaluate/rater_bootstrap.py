"""Rater bootstrap: evaluate models against many plausible ground truths instead of one frozen key.

When a benchmark's labels come from disagreeing raters, each item's key is itself uncertain. The rater
bootstrap (Saab et al. 2024, "Capabilities of Gemini Models in Medicine", arXiv:2404.18416, App. C.2; Stutz et
al. 2023, "Evaluating AI systems under uncertain ground truth: a case study in dermatology", arXiv:2307.02191)
draws, for every item, ``k`` of its ratings with replacement (default 3), aggregates each draw into a ground
truth with a rule, scores every model against it, and repeats this ``B`` times (default 1000). A model's
accuracy is reported as the mean over draws with a percentile interval.

It works from any per-item multiset of labels (:class:`LabelSets`), including label *counts* only, so no rater
ids are needed.

>>> sets = LabelSets.from_counts([[3, 0], [1, 2], [0, 1]], levels=("no", "yes"))
>>> result = rater_bootstrap(sets, {"always-yes": ["yes", "yes", "yes"]}, n_draws=2000, seed=0)
>>> result.summary[["model", "accuracy", "frozen_accuracy"]].round(2).to_dict("records")
[{'model': 'always-yes', 'accuracy': 0.58, 'frozen_accuracy': 0.67}]

(Expected (0 + 20/27 + 1) / 3 = 0.580: the second item's 3 drawn ratings have a 'yes' majority with probability
3·(2/3)²·(1/3) + (2/3)³ = 20/27; against the frozen all-ratings majority the model gets 2 of 3.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval.errors import InputError
from stableval.progress import progress_bar

RULES = ("majority", "unanimous")
TIES = ("split", "random", "lowest", "exclude")
# Elements per chunk of draws (draws × items × max(k, K)); bounds memory at a few tens of MB.
_CHUNK_ELEMENTS = 4_000_000


# ====================================================================================== data
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
    def from_table(cls, table: Any) -> LabelSets:
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
                    levels: Sequence[str] | None = None, format: str | None = None) -> LabelSets:
    """Read per-item label sets from a file (CSV, TSV, JSONL or Parquet).

    Two layouts: *long*, one row per rating with an item and a label column (``label_col``, default ``label``
    when the file has one); or *counts*, one row per item with one integer column per label (all columns other
    than the item column; the column names are the levels).
    """
    from stableval.data.read import read_table_file

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
    if label is not None:
        if label not in frame.columns:
            raise InputError("no label column", file=source, column=label, value=list(frame.columns))
        text = frame[label].astype(str).str.strip()
        empty = text == ""
        if empty.any():
            raise InputError("empty label", file=source, row=int(np.flatnonzero(empty.to_numpy())[0]) + 1,
                             column=label, allowed="a label on every row")
        code, names = pd.factorize(items_text, sort=True)
        return LabelSets._from_flat(code, text, pd.Index(names, dtype=object), levels, source)
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
    sets = LabelSets.from_counts(numbers.to_numpy(), items=items_text.tolist(),
                                 levels=[str(c) for c in value_cols], source=source)
    return sets


# ====================================================================================== drawing
def draw_ratings(offsets: np.ndarray, k: int | None, n_draws: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """Positions of ``k`` ratings per item drawn with replacement, for ``n_draws`` draws at once.

    Returns ``(positions, valid)``: positions (n_draws, N, k) index the flat rating array; with ``k=None`` each
    item gets as many draws as it has ratings, positions are (n_draws, N, max size) and ``valid`` (N, max size)
    marks the real ones (else ``valid`` is None). Draws depend only on the generator's state, so splitting a
    run into chunks of draws gives the same draws.

    >>> positions, _ = draw_ratings(np.array([0, 2, 5]), 3, 4, np.random.default_rng(0))
    >>> positions.shape, bool((positions[:, 0] < 2).all()), bool((positions[:, 1] >= 2).all())
    ((4, 2, 3), True, True)
    """
    sizes = np.diff(offsets)
    width = int(sizes.max()) if k is None else int(k)
    u = rng.random((n_draws, sizes.size, width))
    local = np.minimum(np.floor(u * sizes[None, :, None]).astype(np.int64), (sizes - 1)[None, :, None])
    positions = offsets[:-1][None, :, None] + local
    valid = np.arange(width)[None, :] < sizes[:, None] if k is None else None
    return positions, valid


def chunk_size(n_items: int, width: int, n_draws: int) -> int:
    """How many draws to process at once so that draws × items × width stays near a few million elements."""
    return int(max(1, min(n_draws, _CHUNK_ELEMENTS // max(1, n_items * width))))


def vote(flags: np.ndarray, how: str, valid: np.ndarray | None = None) -> np.ndarray:
    """Combine drawn yes/no flags (…, N, k) per item: ``unanimous`` (all yes) or ``majority`` (more than half).

    >>> vote(np.array([[True, True, True], [True, True, False]]), "unanimous").tolist()
    [True, False]
    >>> vote(np.array([[True, True, True], [True, True, False]]), "majority").tolist()
    [True, True]
    """
    if how not in ("unanimous", "majority"):
        raise ValueError(f"vote must be 'unanimous' or 'majority', got {how!r}")
    weight = np.ones(flags.shape[-2:], dtype=bool) if valid is None else valid
    yes = (flags & weight).sum(axis=-1)
    n = weight.sum(axis=-1)
    return yes == n if how == "unanimous" else 2 * yes > n


def percentile_interval(values: np.ndarray, confidence: float = 0.95, axis: int = 0) -> tuple[Any, Any]:
    """Percentile interval over draws, ignoring NaN draws (e.g. draws where every item was excluded)."""
    alpha = (1.0 - confidence) / 2.0
    finite = np.isfinite(values)
    if not finite.any():
        nan = np.full(np.delete(values.shape, axis), np.nan) if values.ndim > 1 else np.nan
        return nan, nan
    return (np.nanquantile(values, alpha, axis=axis), np.nanquantile(values, 1.0 - alpha, axis=axis))


def nanmean(values: np.ndarray, axis: int = 0) -> Any:
    """Mean over draws ignoring NaN, NaN (without a warning) where every draw is NaN."""
    finite = np.isfinite(values)
    total = np.where(finite, values, 0.0).sum(axis=axis)
    count = finite.sum(axis=axis)
    return np.divide(total, count, out=np.full(np.shape(total), np.nan), where=count > 0)


# ====================================================================================== aggregation
def ground_truth(labels: np.ndarray, n_levels: int, *, rule: str = "majority", ties: str = "split",
                 valid: np.ndarray | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """Aggregate drawn labels (…, N, k) into a ground-truth distribution (…, N, K) per item.

    Rules: ``majority`` — the most frequent label (plurality); ``unanimous`` — the label when all drawn ratings
    agree, else the item is left out of that draw (all-zero row). Majority ties: ``split`` (default) — every tied
    label gets an equal share, so a prediction earns 1/|tied| when it is one of them (the expected accuracy under a
    uniformly random tie-break); ``random`` — one tied label drawn uniformly (seeded ``rng``); ``lowest`` — the
    first tied level; ``exclude`` — the item is left out of that draw. Rows sum to 1, or to 0 for left-out items.

    >>> ground_truth(np.array([[0, 1, 1], [0, 1, 2], [2, 2, 2]]), 3).round(3).tolist()
    [[0.0, 1.0, 0.0], [0.333, 0.333, 0.333], [0.0, 0.0, 1.0]]
    >>> ground_truth(np.array([[0, 1, 1], [2, 2, 2]]), 3, rule="unanimous").tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}; got {ties!r}")
    lead = labels.shape[:-1]
    rows = int(np.prod(lead))
    weight = np.ones(labels.shape, dtype=np.float64) if valid is None else np.broadcast_to(valid, labels.shape)
    index = np.arange(rows).repeat(labels.shape[-1]) * n_levels + labels.reshape(-1)
    counts = np.bincount(index, weights=np.asarray(weight, dtype=np.float64).reshape(-1),
                         minlength=rows * n_levels).reshape(*lead, n_levels)
    top = counts == counts.max(axis=-1, keepdims=True)
    n_top = top.sum(axis=-1, keepdims=True)
    if rule == "unanimous":
        agreed = counts.max(axis=-1, keepdims=True) == weight.sum(axis=-1)[..., None]
        return (top & agreed).astype(np.float64)
    if ties == "split":
        return top / n_top
    if ties == "exclude":
        return (top & (n_top == 1)).astype(np.float64)
    if ties == "lowest":
        choice = np.argmax(top, axis=-1)
    else:
        if rng is None:
            raise ValueError("ties='random' needs a random generator")
        pick = np.floor(rng.random(lead) * n_top[..., 0]).astype(np.int64)
        choice = np.argmax(np.cumsum(top, axis=-1) > pick[..., None], axis=-1)
    out = np.zeros(counts.shape)
    np.put_along_axis(out, choice[..., None], 1.0, axis=-1)
    return out


# ====================================================================================== evaluation
@dataclass(frozen=True)
class RaterBootstrapResult:
    """Accuracy of each model over rater-bootstrap ground truths.

    Attributes:
        summary: one row per model — ``model``; ``accuracy`` (mean over draws); ``ci_low``, ``ci_high`` (percentile
            interval over draws); ``std`` (standard deviation over draws); ``frozen_accuracy`` (against the rule
            applied once to all of each item's ratings); ``items`` (items with a prediction).
        replicates: (B, models) accuracy per draw (NaN where a draw left every item out).
        excluded_share: (B,) share of items left out of each draw (unanimous rule or ``ties="exclude"``).
        settings: the parameters of the run and dataset counts.
    """

    summary: pd.DataFrame
    replicates: np.ndarray
    excluded_share: np.ndarray
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        low, high = percentile_interval(self.excluded_share, self.settings["confidence"])
        return {
            "settings": self.settings,
            "excluded_share": {"mean": float(np.mean(self.excluded_share)), "ci_low": float(low),
                               "ci_high": float(high)},
            "models": [{key: _plain(value) for key, value in record.items()}
                       for record in self.summary.to_dict("records")],
        }


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def encode_predictions(sets: LabelSets, predictions: Mapping[str, Any], *, source: str = "predictions"
                       ) -> tuple[list[str], np.ndarray, list[str]]:
    """(A, N) label codes from model name → predictions, and notes on predictions left unused.

    A prediction is a sequence aligned with ``sets.items`` (level names or integer codes) or a
    :class:`pandas.Series` indexed by item name. Every item needs a prediction; unknown labels are errors;
    predictions for items that have no ratings are left out and counted in the notes.
    """
    names = list(predictions)
    notes: list[str] = []
    codes = np.empty((len(names), sets.n_items), dtype=np.int64)
    level_index = pd.Index(sets.levels)
    for a, name in enumerate(names):
        pred = predictions[name]
        if isinstance(pred, pd.Series):
            missing = ~sets.items.isin(pred.index.astype(str))
            if missing.any():
                shown = ", ".join(map(str, sets.items[missing][:5]))
                raise InputError(f"model {name!r} has no prediction for {int(missing.sum())} item(s) "
                                 f"(first: {shown})", file=str(pred.name or source),
                                 allowed="one prediction per rated item")
            extra = int((~pred.index.astype(str).isin(sets.items)).sum())
            if extra:
                notes.append(f"model {name!r}: {extra} prediction(s) for items without ratings left out")
            values = pred.set_axis(pred.index.astype(str)).reindex(sets.items).to_numpy()
        else:
            values = np.asarray(pred, dtype=object)
            if values.shape != (sets.n_items,):
                raise InputError(f"model {name!r}: predictions must have one entry per item", file=source,
                                 value=f"{values.size} entries", allowed=f"{sets.n_items} entries")
        text = pd.Series(values, dtype=object).astype(str)
        code = level_index.get_indexer(pd.Index(text))
        is_int = np.array([isinstance(v, int | np.integer) for v in values])
        if is_int.any():
            ints = np.array([int(v) if ok else -1 for v, ok in zip(values, is_int, strict=True)])
            code = np.where(is_int & (ints >= 0) & (ints < sets.n_levels) & (code < 0), ints, code)
        if np.any(code < 0):
            bad = int(np.flatnonzero(code < 0)[0])
            if isinstance(pred, pd.Series):  # report the item: rows of a file are in its own order
                raise InputError(f"model {name!r}, item {sets.items[bad]!r}: prediction is not one of the labels",
                                 file=str(pred.name or source), column="prediction", value=values[bad],
                                 allowed="one of: " + ", ".join(sets.levels))
            raise InputError(f"model {name!r}: prediction is not one of the labels", file=source,
                             row=bad + 1, value=values[bad], allowed="one of: " + ", ".join(sets.levels))
        codes[a] = code
    return names, codes, notes


def rater_bootstrap(
    sets: LabelSets,
    predictions: Mapping[str, Any],
    *,
    k: int | None = 3,
    n_draws: int = 1000,
    rule: str = "majority",
    ties: str = "split",
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> RaterBootstrapResult:
    """Accuracy of each model averaged over rater-bootstrap ground truths.

    For each of ``n_draws`` draws: for every item, ``k`` of its ratings drawn with replacement (``k=None``: as
    many as the item has), aggregated by ``rule``/``ties`` (see :func:`ground_truth`); a model scores the
    ground-truth weight of its prediction (1 for a hit, 1/|tied| under ``split``), averaged over the items not
    left out. Vectorised over items and chunks of draws; seeded.

    Source: the bootstrap over raters of Saab et al. (2024), arXiv:2404.18416, App. C.2, and Stutz et al. (2023),
    arXiv:2307.02191 (Sec. on rater bootstrapping).

    >>> sets = LabelSets.from_lists([["a", "a", "b"], ["b"]])
    >>> r = rater_bootstrap(sets, {"m": ["a", "b"]}, n_draws=2000, seed=1)
    >>> round(float(r.summary["accuracy"][0]), 1)   # item 1: P(majority of 3 draws is 'a') = 20/27
    0.9
    """
    if n_draws < 1:
        raise ValueError("n_draws must be at least 1")
    if k is not None and k < 1:
        raise ValueError("k must be at least 1 (or None for each item's own number of ratings)")
    names, codes, prediction_notes = encode_predictions(sets, predictions)
    rng = np.random.default_rng(seed)
    tie_rng = np.random.default_rng(None if seed is None else seed + 1)
    width = int(sets.sizes.max()) if k is None else k
    step = chunk_size(sets.n_items, max(width, sets.n_levels), n_draws)
    replicates = np.empty((n_draws, len(names)))
    excluded = np.empty(n_draws)
    item_index = np.arange(sets.n_items)
    with progress_bar("rater bootstrap", total=n_draws, enabled=progress) as bar:
        for start in range(0, n_draws, step):
            stop = min(start + step, n_draws)
            positions, valid = draw_ratings(sets.offsets, k, stop - start, rng)
            truth = ground_truth(sets.labels[positions], sets.n_levels, rule=rule, ties=ties, valid=valid,
                                 rng=tie_rng)
            kept = truth.sum(axis=-1)  # (b, N): 1 kept, 0 left out
            n_kept = kept.sum(axis=-1)
            hits = truth[:, item_index[None, :], codes].sum(axis=-1)  # (b, A)
            replicates[start:stop] = np.divide(hits, n_kept[:, None], out=np.full(hits.shape, np.nan),
                                               where=n_kept[:, None] > 0)
            excluded[start:stop] = 1.0 - n_kept / sets.n_items
            bar.advance(stop - start)
    all_positions = np.arange(sets.labels.size)
    full_width = int(sets.sizes.max())
    local = np.minimum(np.arange(full_width)[None, :], (sets.sizes - 1)[:, None])
    full_valid = np.arange(full_width)[None, :] < sets.sizes[:, None]
    frozen_truth = ground_truth(sets.labels[all_positions[sets.offsets[:-1, None] + local]], sets.n_levels,
                                rule=rule, ties=ties, valid=full_valid, rng=np.random.default_rng(seed))
    frozen_kept = frozen_truth.sum()
    frozen = frozen_truth[item_index[None, :], codes].sum(axis=-1) / frozen_kept if frozen_kept else \
        np.full(len(names), np.nan)
    low, high = percentile_interval(replicates, confidence)
    finite = np.isfinite(replicates)
    std = np.array([np.std(replicates[finite[:, a], a]) if finite[:, a].any() else np.nan
                    for a in range(len(names))])
    summary = pd.DataFrame({
        "model": names, "accuracy": nanmean(replicates), "ci_low": low, "ci_high": high, "std": std,
        "frozen_accuracy": frozen, "items": sets.n_items,
    })
    settings = {"k": k, "n_draws": n_draws, "rule": rule, "ties": ties, "seed": seed, "confidence": confidence,
                "items": sets.n_items, "ratings": int(sets.labels.size), "levels": list(sets.levels),
                "source": sets.source, "draws_with_no_item": int((~np.isfinite(replicates[:, 0])).sum())
                if names else 0, "notes": [*sets.notes, *prediction_notes]}
    return RaterBootstrapResult(summary=summary, replicates=replicates, excluded_share=excluded,
                                settings=settings)


def read_predictions_file(path: str | os.PathLike[str], *, item_col: str = "item",
                          prediction_col: str | None = None, format: str | None = None) -> pd.Series:
    """Read ``item, prediction`` rows (CSV/TSV/JSONL/Parquet) into a Series indexed by item.

    The prediction column is ``prediction_col`` or the first of ``prediction``, ``label``, ``answer``.
    Duplicate items are errors.
    """
    from stableval.data.read import read_table_file

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
