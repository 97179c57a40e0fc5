"""Rater bootstrap: evaluate models against many plausible ground truths instead of one frozen key.

When a benchmark's labels come from disagreeing raters, each item's key is itself uncertain. The rater
bootstrap (Saab et al. 2024, "Capabilities of Gemini Models in Medicine", arXiv:2404.18416, App. C.2; Stutz et
al. 2023, "Evaluating AI systems under uncertain ground truth: a case study in dermatology", arXiv:2307.02191)
draws, for every item, ``k`` of its ratings with replacement (default 3), aggregates each draw into a ground
truth with a rule, scores every model against it, and repeats this ``B`` times (default 1000). A model's
accuracy is reported as the mean over draws with a percentile interval.

It works from any per-item multiset of labels (:class:`~stableval.datasets.label_sets.LabelSets`, read by
:func:`~stableval.datasets.label_sets.read_label_sets`), including label *counts* only, so no rater ids are needed.
The draws, votes and ground truths here are also the core of the studies in :mod:`stableval.studies`.

>>> from stableval.datasets.label_sets import LabelSets
>>> sets = LabelSets.from_counts([[3, 0], [1, 2], [0, 1]], levels=("no", "yes"))
>>> result = rater_bootstrap(sets, {"always-yes": ["yes", "yes", "yes"]}, n_draws=2000, seed=0)
>>> result.summary[["model", "accuracy", "frozen_accuracy"]].round(2).to_dict("records")
[{'model': 'always-yes', 'accuracy': 0.58, 'frozen_accuracy': 0.67}]

(Expected (0 + 20/27 + 1) / 3 = 0.580: the second item's 3 drawn ratings have a 'yes' majority with probability
3·(2/3)²·(1/3) + (2/3)³ = 20/27; against the frozen all-ratings majority the model gets 2 of 3.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.aggregate.ties import describe_ties
from stableval.console import Displayed
from stableval.datasets.label_sets import LabelSets
from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval
from stableval.evaluate.vote_rules import RULES, TIES  # declared there, light, for the command line
from stableval.progress import progress_bar

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = [
    "RULES",
    "TIES",
    "RaterBootstrapResult",
    "chunk_size",
    "draw_ratings",
    "encode_predictions",
    "ground_truth",
    "nanmean",
    "rater_bootstrap",
    "vote",
]

# Elements per chunk of draws (draws × items × max(k, K)); bounds memory at a few tens of MB.
_CHUNK_ELEMENTS = 4_000_000


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
    return np.asarray(yes == n if how == "unanimous" else 2 * yes > n)


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
        raise ValueError(f"ties must be one of {', '.join(TIES)}; got {ties!r} (what each does: "
                         f"{describe_ties(TIES)})")
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
        return np.asarray(top & agreed, dtype=np.float64)
    if ties == "split":
        return np.asarray(top / n_top)
    if ties == "exclude":
        return np.asarray(top & (n_top == 1), dtype=np.float64)
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
def interval_text(mean: float, low: float, high: float, scale: float = 100.0, digits: int = 1) -> str:
    """``"81.2 [79.0, 83.1]"``: a mean and its interval in percent (the interval left out when it is empty).

    >>> interval_text(0.812, 0.79, 0.831), interval_text(0.5, 0.5, 0.5), interval_text(float("nan"), 0, 1)
    ('81.2 [79.0, 83.1]', '50.0', '—')
    """
    if mean != mean:
        return "—"
    text = f"{scale * mean:.{digits}f}"
    if low == low and high == high and abs(high - low) > 1e-12:
        text += f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
    return text


@dataclass(frozen=True)
class RaterBootstrapResult(Displayed):
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
        """JSON-ready: settings, the share of items left out per draw, one record per model; NaN becomes None."""
        low, high = percentile_interval(self.excluded_share, self.settings["confidence"])
        return {
            "settings": jsonable(self.settings),
            "excluded_share": jsonable({"mean": float(np.mean(self.excluded_share)), "ci_low": float(low),
                                        "ci_high": float(high)}),
            "models": records(self.summary),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per model."""
        return self.summary

    def render(self, console: Console) -> None:
        """How the draws were made, then each model's accuracy with its interval and against the frozen key."""
        from rich import box
        from rich.table import Table

        s = self.settings
        console.print(f"[bold]{s['source']}[/]: {s['items']:,} items, {s['ratings']:,} ratings, labels "
                      f"{', '.join(s['levels'])}")
        for note in s["notes"]:
            console.print(f"  note: {note}")
        share = self.to_dict()["excluded_share"]
        how = "all of its ratings" if not s["k"] else f"{s['k']} rating(s)"
        console.print(f"Per draw each item gets {how} drawn with replacement; rule {s['rule']}"
                      + (f", ties {s['ties']}" if s["rule"] == "majority" else "")
                      + f"; {s['n_draws']:,} draws (seed {s['seed']}).")
        if s["draws_with_no_item"]:
            console.print(f"{s['draws_with_no_item']:,} draw(s) left every item out; they are not averaged.")
        if share["mean"] > 0:
            console.print(f"Items left out per draw: {100 * share['mean']:.1f}% "
                          f"[{100 * share['ci_low']:.1f}, {100 * share['ci_high']:.1f}].")
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False)
        for column in ("Model", f"Accuracy % [{round(100 * s['confidence'])}% interval]", "Frozen key %"):
            table.add_column(column, justify="left" if column == "Model" else "right")
        row: Any
        for row in self.summary.itertuples(index=False):
            table.add_row(str(row.model), interval_text(row.accuracy, row.ci_low, row.ci_high),
                          interval_text(row.frozen_accuracy, float("nan"), float("nan")))
        if len(self.summary):
            console.print(table)
        else:
            console.print("No --predictions given: nothing to score.")


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
