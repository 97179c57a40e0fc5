"""Relabeled MedQA: which questions to exclude, and model accuracy after excluding them (rater bootstrap).

The ratings and the three flags of each rating (missing information, label error, multiple correct answers) are
read by :func:`stableval.datasets.medqa.load_medqa` (see :mod:`stableval.datasets.medqa` for their definitions;
Saab et al. 2024, "Capabilities of Gemini Models in Medicine", arXiv:2404.18416, App. C.2).

Per draw of ``k`` ratings (default 3) per question with replacement, a question is excluded for a reason when
every drawn rating carries its flag (unanimous vote; ``vote="majority"``: more than half). Exclusion shares and
accuracies (against the original key, on the questions left) are averaged over ``B`` draws (default 1000).

Differences from the authors' notebook (``medqa_analysis.ipynb``): the notebook votes on ``info_missing`` whereas
the paper and this module's default use ``important_info_missing`` (``load_medqa(missing="info_missing")``
votes as the notebook); it draws the raters separately for each reason, whereas
here one draw of raters decides all reasons; and for the 33 ratings with ``seen_change`` TRUE and
``seen_answerable`` FALSE it falls back to the blind answers, whereas here they reject the key.

>>> import io
>>> from stableval.datasets.medqa import load_medqa
>>> csv = io.StringIO("qid,worker_id,answer_idx,blind_answers,important_info_missing,seen_change,"
...                   "seen_answerable,seen_answers\\n1,a,A,['A'],FALSE,FALSE,,\\n2,a,B,['A'],FALSE,FALSE,,\\n")
>>> result = evaluate_medqa(load_medqa(csv), {"always-A": ["A", "A"]}, n_draws=10)
>>> result.exclusions.set_index("filter").loc[["none", "label_error"], "share"].tolist()
[0.0, 0.5]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.console import Displayed
from stableval.datasets.medqa import LETTERS, REASONS, MedQARatings, answer_text
from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval
from stableval.evaluate.rater_bootstrap import chunk_size, draw_ratings, interval_text, nanmean, vote
from stableval.progress import progress_bar

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

__all__ = ["FILTERS", "FILTER_LABELS", "LETTERS", "PER_QUESTION_COLUMNS", "REASONS", "MedQAResult", "evaluate_medqa"]

#: Filters reported: none, each reason alone, the cumulative steps of the paper's Figure 3, and all combined.
FILTERS = ("none", "missing_info", "label_error", "multiple_answers", "missing_info+label_error", "combined")
FILTER_LABELS = {
    "none": "original key", "missing_info": "w/o missing info", "label_error": "w/o label errors",
    "multiple_answers": "w/o multiple answers", "missing_info+label_error": "w/o missing info & label errors",
    "combined": "w/o all three",
}
#: The columns of :attr:`MedQAResult.per_question`, in order.
PER_QUESTION_COLUMNS = ("qid", "key", "raters", *(f"{r}_{what}" for r in REASONS for what in ("share", "p")),
                        "excluded_p", "blind_answers", "blind_key_share")
# which reasons each filter excludes (rows of FILTERS × REASONS)
_FILTER_REASONS = np.array([
    [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1],
], dtype=bool)


def _correct(ratings: MedQARatings, predictions: Mapping[str, Any]) -> tuple[list[str], np.ndarray, list[str]]:
    """(A, N) bool: model answered the original key."""
    names = list(predictions)
    correct = np.zeros((len(names), ratings.n_questions), dtype=bool)
    notes = []
    for a, name in enumerate(names):
        pred = predictions[name]
        source = str(getattr(pred, "name", None) or name)
        if isinstance(pred, pd.Series):
            index = pred.index.astype(str)
            missing = ~ratings.qids.isin(index)
            if missing.any():
                shown = ", ".join(map(str, ratings.qids[missing][:5]))
                raise InputError(f"no answer for {int(missing.sum())} of {ratings.n_questions} questions "
                                 f"(first qids: {shown})", file=source, column="qid",
                                 allowed="one answer per question of the ratings file")
            extra = int((~index.isin(ratings.qids)).sum())
            if extra:
                notes.append(f"{name}: {extra} answer(s) for qids not in the ratings were left out")
            values = pred.set_axis(index).reindex(ratings.qids).astype(str).str.strip().str.upper()
        else:
            values = pd.Series(np.asarray(pred, dtype=object)).astype(str).str.strip().str.upper()
            if len(values) != ratings.n_questions:
                raise InputError(f"model {name!r}: need one answer per question", file=source,
                                 value=f"{len(values)} answers", allowed=f"{ratings.n_questions} answers")
        code = pd.Index(LETTERS).get_indexer(pd.Index(values))
        if np.any(code < 0):
            row = int(np.flatnonzero(code < 0)[0])
            where = f"qid {ratings.qids[row]}" if isinstance(pred, pd.Series) else f"answer {row + 1}"
            raise InputError(f"model {name!r}, {where}: answer is not an option letter", file=source,
                             column="answer", value=values.iloc[row], allowed="A, B, C or D")
        correct[a] = code == ratings.key
    return names, correct, notes


@dataclass(frozen=True)
class MedQAResult(Displayed):
    """Exclusion shares and accuracies over rater-bootstrap draws.

    Attributes:
        exclusions: one row per filter (see ``FILTERS``): ``filter``, ``label``, ``share`` (mean share of questions
            excluded over draws), ``ci_low``, ``ci_high`` (percentile interval), ``questions`` (mean number kept),
            ``share_all_raters`` (share excluded when the vote runs once over all of each question's ratings).
        accuracy: one row per (model, filter): ``model``, ``filter``, ``label``, ``accuracy`` (mean over draws of
            the accuracy against the original key on the questions kept), ``ci_low``, ``ci_high``.
        share_replicates: (B, filters). accuracy_replicates: (B, models, filters).
        settings: parameters and dataset counts.
        per_question: one row per question (:data:`PER_QUESTION_COLUMNS`): ``qid, key, raters``; per reason the
            share of the question's ratings that carry its flag (``*_share``) and the probability over draws that
            the vote excludes the question for it (``*_p``); ``excluded_p``, the probability that any reason
            excludes it (the ``combined`` filter); ``blind_answers``, each rater's answers before seeing the key
            (``"A; B; A,C"``; ``-`` for none); ``blind_key_share``, the share of those that include the key.
    """

    exclusions: pd.DataFrame
    accuracy: pd.DataFrame
    share_replicates: np.ndarray
    accuracy_replicates: np.ndarray
    settings: dict[str, Any]
    per_question: pd.DataFrame | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the settings, one record per filter and one per (model, filter); NaN becomes None."""
        return {"settings": jsonable(self.settings), "exclusions": records(self.exclusions),
                "accuracy": records(self.accuracy)}

    def to_frame(self) -> pd.DataFrame:
        """One long table: ``metric`` (``excluded_share`` per filter, ``accuracy`` per model and filter),
        ``model, filter, mean, ci_low, ci_high``."""
        ex = self.exclusions.assign(metric="excluded_share", model="").rename(columns={"share": "mean"})
        acc = self.accuracy.assign(metric="accuracy").rename(columns={"accuracy": "mean"})
        columns = ["metric", "model", "filter", "mean", "ci_low", "ci_high"]
        return pd.concat([ex[columns], acc[columns]], ignore_index=True)

    def render(self, console: Console) -> None:
        """The exclusion shares, then each model's accuracy after each exclusion step."""
        from rich import box
        from rich.table import Table

        s = self.settings
        console.print(f"[bold]{s['source']}[/]: {s['questions']:,} questions, {s['ratings']:,} ratings by "
                      f"{s['raters']} raters; per draw {s['k']} ratings per question with replacement, {s['vote']} "
                      f"vote; {s['n_draws']:,} draws (seed {s['seed']}); missing info: {s.get('reason', '')}.")
        for note in s["notes"]:
            console.print(f"  note: {note}")
        pct = round(100 * s["confidence"])
        table = Table(box=box.SIMPLE_HEAVY, show_edge=False, title="Questions excluded", title_justify="left")
        table.add_column("Exclusion")
        table.add_column(f"% excluded [{pct}% interval]", justify="right")
        table.add_column("mean questions kept", justify="right")
        table.add_column("% excluded, vote of all raters", justify="right")
        row: Any
        for row in self.exclusions.itertuples(index=False):
            if row.filter == "none":
                continue
            table.add_row(row.label, interval_text(row.share, row.ci_low, row.ci_high), f"{row.questions:,.1f}",
                          f"{100 * row.share_all_raters:.1f}")
        console.print(table)
        if not s["models"]:
            console.print("No --predictions given: exclusion shares only.")
            return
        acc = Table(box=box.SIMPLE_HEAVY, show_edge=False, title=f"Accuracy % on the original key [{pct}% interval]",
                    title_justify="left")
        acc.add_column("Model")
        for label in dict.fromkeys(self.accuracy["label"]):
            acc.add_column(str(label), justify="right")
        for model in s["models"]:
            rows = self.accuracy[self.accuracy["model"] == model]
            acc.add_row(model, *(interval_text(r.accuracy, r.ci_low, r.ci_high) for r in rows.itertuples(index=False)))
        console.print(acc)


def evaluate_medqa(
    ratings: MedQARatings,
    predictions: Mapping[str, Any] | None = None,
    *,
    k: int = 3,
    n_draws: int = 1000,
    how: str = "unanimous",
    seed: int | None = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> MedQAResult:
    """Exclusion shares per reason and combined, and each model's accuracy after each exclusion.

    ``predictions`` maps a model name to a Series of answers (A–D) indexed by qid (see
    :func:`~stableval.datasets.medqa.read_medqa_predictions`) or to a sequence aligned with ``ratings.qids``.
    Source: Saab et al. (2024), arXiv:2404.18416, App. C.2 (rater bootstrap with unanimous voting, 3 raters, 1000
    draws).

    >>> import io
    >>> from stableval.datasets.medqa import load_medqa
    >>> csv = io.StringIO("qid,worker_id,answer_idx,blind_answers,important_info_missing,seen_change,"
    ...                   "seen_answerable,seen_answers\\n1,a,A,['A'],FALSE,FALSE,,\\n2,a,B,['C'],TRUE,FALSE,,\\n")
    >>> result = evaluate_medqa(load_medqa(csv), {"always-A": ["A", "A"]}, n_draws=10)
    >>> result.accuracy.set_index("filter").loc[["none", "combined"], "accuracy"].tolist()
    [0.5, 1.0]
    """
    if how not in ("unanimous", "majority"):
        raise ValueError(f"vote must be 'unanimous' or 'majority', got {how!r}")
    if k < 1 or n_draws < 1:
        raise ValueError("k and n_draws must be at least 1")
    names, correct, notes = _correct(ratings, predictions or {})
    n = ratings.n_questions
    n_filters = len(FILTERS)
    rng = np.random.default_rng(seed)
    share = np.empty((n_draws, n_filters))
    accuracy = np.empty((n_draws, len(names), n_filters))
    step = chunk_size(n, k * len(REASONS) * 2, n_draws)
    correct_f = correct.astype(np.float64)
    times_excluded = np.zeros((n, len(REASONS) + 1))                              # per reason, then any reason
    with progress_bar("MedQA rater bootstrap", total=n_draws, enabled=progress) as bar:
        for start in range(0, n_draws, step):
            stop = min(start + step, n_draws)
            positions, _ = draw_ratings(ratings.offsets, k, stop - start, rng)
            drawn = ratings.flags[positions]                                      # (b, N, k, 3)
            excluded = vote(np.moveaxis(drawn, -1, -2), how)                      # (b, N, 3)
            by_filter = (excluded[:, :, None, :] & _FILTER_REASONS[None, None]).any(axis=-1)  # (b, N, F)
            times_excluded[:, :-1] += excluded.sum(axis=0)
            times_excluded[:, -1] += by_filter[:, :, -1].sum(axis=0)
            kept = (~by_filter).astype(np.float64)
            n_kept = kept.sum(axis=1)                                             # (b, F)
            share[start:stop] = 1.0 - n_kept / n
            hits = np.einsum("an,bnf->baf", correct_f, kept)
            accuracy[start:stop] = np.divide(hits, n_kept[:, None, :], out=np.full(hits.shape, np.nan),
                                             where=n_kept[:, None, :] > 0)
            bar.advance(stop - start)
    low, high = percentile_interval(share, confidence)
    exclusions = pd.DataFrame({
        "filter": FILTERS, "label": [FILTER_LABELS[f] for f in FILTERS], "share": share.mean(axis=0),
        "ci_low": low, "ci_high": high, "questions": n * (1.0 - share.mean(axis=0)),
        "share_all_raters": _excluded_by_all_raters(ratings, how).mean(axis=0),
    })
    settings = {"source": ratings.source, "questions": n, "ratings": ratings.n_ratings,
                "raters": int(pd.unique(ratings.worker).size), "k": k, "n_draws": n_draws, "vote": how,
                "reason": ratings.missing,
                "seed": seed, "confidence": confidence, "models": names, "notes": [*ratings.notes, *notes]}
    return MedQAResult(exclusions=exclusions, accuracy=_accuracy_frame(names, accuracy, confidence),
                       share_replicates=share, accuracy_replicates=accuracy, settings=settings,
                       per_question=_per_question(ratings, times_excluded / n_draws))


def _per_question(ratings: MedQARatings, p_excluded: np.ndarray) -> pd.DataFrame:
    """The per-question table (:data:`PER_QUESTION_COLUMNS`) from the (N, reasons + 1) exclusion probabilities."""
    counts = ratings.flag_counts()
    frame = counts[["qid", "key", "ratings"]].rename(columns={"ratings": "raters"})
    for r, reason in enumerate(REASONS):
        frame[f"{reason}_share"] = counts[reason] / counts["ratings"]
        frame[f"{reason}_p"] = p_excluded[:, r]
    frame["excluded_p"] = p_excluded[:, -1]
    question = ratings.question
    if ratings.blind_answers is not None:
        text = pd.Series(answer_text(ratings.blind_answers)).replace("", "-")
        frame["blind_answers"] = text.groupby(question).agg("; ".join).to_numpy()
        has_key = ratings.blind_answers[np.arange(ratings.n_ratings), ratings.key[question]]
        frame["blind_key_share"] = np.bincount(question, weights=has_key, minlength=ratings.n_questions) / \
            counts["ratings"].to_numpy()
    else:
        frame["blind_answers"], frame["blind_key_share"] = "", np.nan
    return frame[list(PER_QUESTION_COLUMNS)]


def _excluded_by_all_raters(ratings: MedQARatings, how: str) -> np.ndarray:
    """(N, filters) bool: the vote run once over all of each question's ratings."""
    sizes = np.diff(ratings.offsets)
    width = int(sizes.max())
    local = np.minimum(np.arange(width)[None, :], (sizes - 1)[:, None])
    valid = np.arange(width)[None, :] < sizes[:, None]
    all_flags = ratings.flags[ratings.offsets[:-1, None] + local]                 # (N, width, 3)
    all_excluded = np.stack([vote(all_flags[..., r], how, valid) for r in range(len(REASONS))], axis=-1)
    return np.asarray((all_excluded[:, None, :] & _FILTER_REASONS[None]).any(axis=-1))


def _accuracy_frame(names: list[str], accuracy: np.ndarray, confidence: float) -> pd.DataFrame:
    """One row per (model, filter): mean accuracy over draws and its percentile interval."""
    rows = []
    for a, name in enumerate(names):
        mean = nanmean(accuracy[:, a, :])
        a_low, a_high = percentile_interval(accuracy[:, a, :], confidence)
        for f, filt in enumerate(FILTERS):
            rows.append({"model": name, "filter": filt, "label": FILTER_LABELS[filt], "accuracy": float(mean[f]),
                         "ci_low": float(a_low[f]), "ci_high": float(a_high[f])})
    return pd.DataFrame(rows, columns=["model", "filter", "label", "accuracy", "ci_low", "ci_high"])
