"""Rankings as the answers of a task type (``ordering`` types): what the rater-aware ranking model reads, and two
leave-one-rater-out agreement measures kept as simple baselines beside it.

* :data:`RankingRecords`: what :meth:`~stableval.portal.tasks.base.TaskType.rankings` returns for the model of
  :mod:`stableval.portal.work.ranking_model` (Rater-PL: a reliability per rater, a plausibility per question).
* :func:`loo_kendall_tau`: per answer, Kendall's tau-b (Kendall 1945, *The treatment of ties in ranking problems*,
  Biometrika 33:239-251) between the rater's ranks and the **leave-one-rater-out mean ranking** of the question
  (the mean rank of each item over the other raters, ties allowed). 1 = the consensus order, 0 = unrelated, -1 =
  reversed.
* :func:`loo_top1_agreement`: per answer, whether the rater's first group (most likely condition, or equally likely
  first ones) contains a condition the other raters most often put in their first group (leave-one-rater-out
  plurality).

The two measures are heuristics, not a model (the portal's rater diagnostics were built on them before the
rater-aware model); everything is vectorised over answers (pairwise sign arrays padded to the question's item count).

>>> import numpy as np
>>> ranks = np.array([[1, 2, 3], [1, 3, 2], [3, 2, 1], [1, 2, 3]], dtype=float)
>>> np.round(loo_kendall_tau(ranks, np.zeros(4, dtype=np.int64)), 3).tolist()
[0.333, 0.333, -1.0, 0.333]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["TAU_FLAG", "TOP1_FLAG", "RankingRecords", "loo_kendall_tau", "loo_top1_agreement"]

#: ``(records, options)``: one ``(rater, question id, groups best first)`` record per answer (a group: a list of
#: tied option names), and every option there is (None: the options named).
RankingRecords = tuple[list[tuple[str, int, list[list[str]]]], Sequence[str] | None]

#: A mean Kendall tau-b below this (with the others' consensus order) is low agreement.
TAU_FLAG = 0.2
#: A top-1 agreement below this share is low agreement.
TOP1_FLAG = 0.3


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
    return np.asarray(np.where((counts > 1) & (denominator > 0), tau, np.nan))


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
    return np.asarray(np.where(best > 0, agree, np.nan))
