"""Agreement of each rater's rankings with the other raters' consensus, for the task types whose answers are
rankings (``ddx``, ``rank-documents``), where STABLEVAL's categorical rater model does not apply.

* ``rank-documents``: per answer, Kendall's tau-b (Kendall 1945, *The treatment of ties in ranking problems*,
  Biometrika 33:239-251) between the rater's ranks and the **leave-one-rater-out mean ranking** of the question
  (the mean rank of each item over the other raters, ties allowed); a rater's score is the mean over their
  answers to questions that another rater also ranked. 1 = the consensus order, 0 = unrelated, -1 = reversed.
* ``ddx``: **top-1 agreement**: whether the rater's first group (most likely condition, or equally likely first
  ones) contains a condition the other raters most often put in their first group (leave-one-rater-out plurality);
  a rater's score is the share of their cases with another rater.

A rater with at least :data:`MIN_COMPARED` compared answers is flagged when the score is below
:data:`TAU_FLAG` (rank-documents) or :data:`TOP1_FLAG` (ddx): a rater who answers at random or always the same
way. These are heuristics for the admin to look at, not a model; pausing stays the admin's decision. Everything is
vectorised over answers (pairwise sign arrays padded to the question's item count).

>>> import numpy as np
>>> ranks = np.array([[1, 2, 3], [1, 3, 2], [3, 2, 1], [1, 2, 3]], dtype=float)
>>> np.round(loo_kendall_tau(ranks, np.zeros(4, dtype=np.int64)), 3).tolist()
[0.333, 0.333, -1.0, 0.333]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stableval.portal.db import Database
from stableval.portal.result_cache import ResultCache

__all__ = ["MIN_COMPARED", "TAU_FLAG", "TOP1_FLAG", "OrderAgreement", "RaterOrderAgreement", "clear_cache",
           "loo_kendall_tau", "loo_top1_agreement", "track_order_agreement"]

#: Compared answers a rater needs before the page flags them.
MIN_COMPARED = 5
#: rank-documents: a mean Kendall tau-b below this (with the others' consensus order) is flagged.
TAU_FLAG = 0.2
#: ddx: a top-1 agreement below this share is flagged.
TOP1_FLAG = 0.3
_CACHE_SIZE = 16


@dataclass(frozen=True)
class RaterOrderAgreement:
    """One rater's agreement with the others' consensus (``score``: mean tau-b, or top-1 share)."""

    rater: str
    rater_id: int
    answers: int  # confirmed answers in the track
    compared: int  # answers to questions another rater also answered
    score: float  # NaN when nothing could be compared
    flags: tuple[str, ...]


@dataclass(frozen=True)
class OrderAgreement:
    """The agreement table of a ddx or rank-documents track (``measure`` says which score), or why it is empty."""

    track: str
    task: str
    measure: str
    raters: tuple[RaterOrderAgreement, ...] = ()
    message: str = ""


def loo_kendall_tau(ranks: np.ndarray, question: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each answer's ranks (rows of ``ranks``, NaN-padded past the question's items) with the
    mean ranks of the other answers to the same question (``question``: a code per row); NaN when no other answer
    exists or either ranking is all ties."""
    ranks = np.asarray(ranks, dtype=float)
    question = np.asarray(question, dtype=np.int64)
    n_questions = int(question.max()) + 1 if len(question) else 0
    valid = ~np.isnan(ranks)
    filled = np.where(valid, ranks, 0.0)
    totals = np.zeros((n_questions, ranks.shape[1]))
    np.add.at(totals, question, filled)
    counts = np.bincount(question, minlength=n_questions)[question]
    others = (totals[question] - filled) / np.maximum(counts - 1, 1)[:, None]
    pair = valid[:, :, None] & valid[:, None, :]
    own = np.sign(filled[:, :, None] - filled[:, None, :]) * pair
    consensus = np.sign(others[:, :, None] - others[:, None, :]) * pair
    concordance = (own * consensus).sum(axis=(1, 2))
    denominator = np.sqrt(np.abs(own).sum(axis=(1, 2)) * np.abs(consensus).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = concordance / denominator
    return np.where((counts > 1) & (denominator > 0), tau, np.nan)


def loo_top1_agreement(first: np.ndarray, case: np.ndarray) -> np.ndarray:
    """Whether each answer's first group (``first``: answers × conditions, True = in the first group) shares a
    condition with the others' plurality first choice of the same case (``case``: a code per row); NaN when no
    other answer to the case has a first group."""
    first = np.asarray(first, dtype=np.int64)
    case = np.asarray(case, dtype=np.int64)
    n_cases = int(case.max()) + 1 if len(case) else 0
    totals = np.zeros((n_cases, first.shape[1]), dtype=np.int64)
    np.add.at(totals, case, first)
    others = totals[case] - first
    best = others.max(axis=1, initial=0)
    top = (others == best[:, None]) & (best[:, None] > 0)
    agree = (top & (first > 0)).any(axis=1).astype(float)
    return np.where(best > 0, agree, np.nan)


_cache: ResultCache[OrderAgreement] = ResultCache(_CACHE_SIZE)


def clear_cache() -> None:
    """Forget cached tables (tests; the cache also invalidates itself on every new submission)."""
    _cache.clear()


def track_order_agreement(db: Database, slug: str, *, cache: bool = True) -> OrderAgreement:
    """Each rater's agreement with the others' consensus in a ddx or rank-documents track (other task types: an
    empty table and a message); cached until the next submission."""
    from stableval.portal.live_diagnostics import _signature

    count, last = _signature(db, slug)
    key = (db.url, slug, count, last)
    return _cache.get(key, lambda: _compute(db, slug), enabled=cache)


def _compute(db: Database, slug: str) -> OrderAgreement:
    from stableval.portal.task_export import confirmed_answers, task_of

    task = task_of(db, slug)
    if task not in ("ddx", "rank-documents"):
        return OrderAgreement(slug, task, "", message="Agreement with the consensus order is for ddx and "
                                                      "rank-documents tracks.")
    track, frame, _, _ = confirmed_answers(db, slug)
    measure = "mean Kendall tau-b with the others' mean ranking" if task == "rank-documents" else \
        "top-1 agreement with the others' plurality first choice"
    if frame.empty:
        return OrderAgreement(slug, task, measure, message="No confirmed answers yet.")
    question = pd.factorize(frame["question_id"])[0].astype(np.int64)
    answers: list[Any] = frame["answer"].tolist()
    if task == "rank-documents":
        scores = loo_kendall_tau(_rank_matrix(frame["question"].tolist(), answers), question)
        threshold, what = TAU_FLAG, f"mean tau-b below {TAU_FLAG}"
    else:
        n_conditions = len((track.task_options or {}).get("conditions", []))
        first = np.zeros((len(frame), n_conditions), dtype=np.int64)
        rows = [(r, c) for r, a in enumerate(answers) for c in ((a or {}).get("groups") or [[]])[0]]
        if rows:
            at = np.asarray(rows, dtype=np.int64)
            first[at[:, 0], at[:, 1]] = 1
        scores = loo_top1_agreement(first, question)
        threshold, what = TOP1_FLAG, f"top-1 agreement below {TOP1_FLAG}"
    raters, codes = np.unique(frame["rater_id"].to_numpy(dtype=np.int64), return_inverse=True)
    compared = ~np.isnan(scores)
    n_compared = np.bincount(codes, weights=compared, minlength=len(raters)).astype(np.int64)
    total = np.bincount(codes, weights=np.where(compared, scores, 0.0), minlength=len(raters))
    answered = np.bincount(codes, minlength=len(raters))
    out = []
    for index, rater_id in enumerate(raters.tolist()):
        score = total[index] / n_compared[index] if n_compared[index] else float("nan")
        if n_compared[index] < MIN_COMPARED:
            flags: tuple[str, ...] = (f"too few compared answers to judge (< {MIN_COMPARED})",)
        else:
            flags = (f"low agreement with the others: {what}",) if score < threshold else ()
        out.append(RaterOrderAgreement(f"rater-{rater_id}", int(rater_id), int(answered[index]),
                                       int(n_compared[index]), float(score), flags))
    out.sort(key=lambda r: (not any(not f.startswith("too few") for f in r.flags),
                            -(r.score if np.isfinite(r.score) else -2.0), r.rater_id))
    return OrderAgreement(slug, task, measure, tuple(out))


def _rank_matrix(questions: list[Any], answers: list[Any]) -> np.ndarray:
    """Answers × item slots: the rank (1 = best) of each item of the question, in the question's item order;
    NaN past the question's items."""
    width = max((len((q or {}).get("items", [])) for q in questions), default=0)
    ranks = np.full((len(answers), width), np.nan)
    for row, (question, answer) in enumerate(zip(questions, answers, strict=True)):
        place = {item: rank for rank, item in enumerate((answer or {}).get("order") or [], start=1)}
        items = [i["id"] for i in (question or {}).get("items", [])]
        ranks[row, :len(items)] = [place.get(i, np.nan) for i in items]
    return ranks
