"""Normalized rank position (NRP): rank each generated answer among the judged documents of its question.

Heineking, Probst, Steinbach, Potthast & Scells (2024/ECIR 2025), "Ranking Generated Answers: On the Agreement of
Retrieval Models with Humans on Consumer Health Questions", section 2: add answer ``a`` to the documents ``D_q``
of its question, rank the list with a ranker validated on the judgments, and score

    NRP = 1 - r / N,   r = the number of documents ranked above the answer.

Two choices the formula leaves open are explicit parameters here:

* ``n="documents"``: N = |D_q| (the spec's formula); ``n="list"``: N = |D_q| + 1, the length of the list including
  the answer, which is what the authors' shipped analysis did (``weighted_position = rank / list length``;
  reproduced exactly in the tests from ``indexing/results/monoT5``).
* ``ties``: documents with exactly the answer's score count as below it (``optimistic``), half above
  (``mid``, the default) or above it (``pessimistic``).

Worked example: 4 documents scored 3, 2, 2, 1 and an answer scored 2 (one document above, two tied):

>>> import numpy as np
>>> above, tied, size = rank_counts(np.array([3., 2., 2., 1.]), np.zeros(4, int), np.array([2.]), np.zeros(1, int))
>>> int(above[0]), int(tied[0]), int(size[0])
(1, 2, 4)
>>> for ties in TIE_POLICIES:
...     print(ties, [float(normalized_rank_position(above, tied, size, n=n, ties=ties)[0]) for n in N_CHOICES])
optimistic [0.75, 0.8]
mid [0.5, 0.6]
pessimistic [0.25, 0.4]

With no ties, ``n="documents"`` gives the spec's 1 - r/|D_q| (0.75 here) and ``n="list"`` the shipped 1 - r/(|D_q|+1)
(0.8). An answer ranked first always gets 1; one ranked below all documents gets 0 (``documents``) or 1/(|D_q|+1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stableval._json import jsonable, records
from stableval.errors import InputError
from stableval.evaluate.intervals import percentile_interval
from stableval.nrp.rankers import Ranker
from stableval.nrp.testcollection import TestCollection

__all__ = [
    "N_CHOICES",
    "TIE_POLICIES",
    "NRPResult",
    "bootstrap_means",
    "normalized_rank_position",
    "rank_counts",
    "read_webis_rank_files",
    "relevant_rank_position",
    "score_answers",
    "summarize",
]

TIE_POLICIES = ("optimistic", "mid", "pessimistic")
N_CHOICES = ("documents", "list")
#: Share of the tied documents counted above the answer, per tie policy.
_TIED_ABOVE = {"optimistic": 0.0, "mid": 0.5, "pessimistic": 1.0}


def rank_counts(doc_scores: np.ndarray, doc_group: np.ndarray, answer_scores: np.ndarray,
                answer_group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per answer: documents of its group scored above it, tied with it (exactly equal), and the group's size.

    Vectorised: scores are replaced by their rank among all distinct values, keyed by group, sorted once and
    searched with ``np.searchsorted``.
    """
    doc_scores = np.asarray(doc_scores, dtype=float)
    answer_scores = np.asarray(answer_scores, dtype=float)
    doc_group = np.asarray(doc_group, dtype=np.int64)
    answer_group = np.asarray(answer_group, dtype=np.int64)
    if np.isnan(doc_scores).any() or np.isnan(answer_scores).any():
        raise InputError("a ranker returned NaN scores", allowed="finite scores")
    _, codes = np.unique(np.concatenate([doc_scores, answer_scores]), return_inverse=True)
    width = int(codes.max()) + 2 if len(codes) else 1
    doc_key = np.sort(doc_group * width + codes[:len(doc_scores)])
    answer_key = answer_group * width + codes[len(doc_scores):]
    left = np.searchsorted(doc_key, answer_key, side="left")
    right = np.searchsorted(doc_key, answer_key, side="right")
    end = np.searchsorted(doc_key, (answer_group + 1) * width, side="left")
    start = np.searchsorted(doc_key, answer_group * width, side="left")
    return end - right, right - left, end - start


def normalized_rank_position(above: np.ndarray, tied: np.ndarray, n_documents: np.ndarray, *,
                             n: str = "documents", ties: str = "mid") -> np.ndarray:
    """NRP = 1 - r/N with r from the tie policy and N from ``n`` (see the module docstring)."""
    if ties not in TIE_POLICIES:
        raise InputError("unknown tie policy", option="ties", value=ties, allowed=", ".join(TIE_POLICIES))
    if n not in N_CHOICES:
        raise InputError("unknown N", option="n", value=n, allowed=", ".join(N_CHOICES))
    r = np.asarray(above, dtype=float) + _TIED_ABOVE[ties] * np.asarray(tied, dtype=float)
    size = np.asarray(n_documents, dtype=float) + (1.0 if n == "list" else 0.0)
    return np.asarray(1.0 - np.divide(r, size, out=np.zeros_like(r), where=size > 0), dtype=float)


@dataclass(frozen=True)
class NRPResult:
    """Scores of generated answers.

    ``answers``: one row per answer: ``qid, model, prompt, answer_id, params, score`` (the ranker's), ``above``,
    ``tied`` (documents scored above / equal), ``n_documents`` (|D_q|), ``list_length`` (|D_q| + 1), ``rank``
    (1-based position under the tie policy, ``r + 1``), ``nrp``, ``first`` (r == 0).
    ``summary``: one row per model x prompt (see :func:`summarize`). ``settings``: ranker, n, ties, bootstrap.
    ``documents``: the judged documents of the answered questions, ``qid, docno, score`` (the ranker's score of
    each against its own question).
    """

    answers: pd.DataFrame
    summary: pd.DataFrame
    settings: dict[str, Any]
    notes: tuple[str, ...] = field(default=())
    documents: pd.DataFrame | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, notes and the summary rows (NaN bounds become None)."""
        return {"settings": jsonable(self.settings), "notes": list(self.notes), "summary": records(self.summary)}


def score_answers(collection: TestCollection, answers: pd.DataFrame, ranker: Ranker, *, n: str = "documents",
                  ties: str = "mid", bootstrap: int = 1000, confidence: float = 0.95, seed: int = 0,
                  progress: bool = False, relevant: float | None = None,
                  dimension: str = "relevance") -> NRPResult:
    """Rank every answer (alone) among its question's judged documents and compute its NRP.

    Documents are scored once per question; answers are scored one by one against the same documents (the
    rankers are pointwise), which gives the same ranks as inserting each answer into the list and re-ranking.

    Companion signals (absolute, not relative to the pool's quality): ``score`` is the ranker's score of the
    answer against the question alone; given ``relevant``, ``nrp_relevant`` is the NRP among the documents of
    grade >= ``relevant`` in ``dimension`` only (``n_relevant`` of them; NaN, no value, when the question has
    none: :func:`relevant_rank_position`), so a pool with many poor documents does not lift an answer. The notes
    warn of questions whose every document and answer scored alike (NRP from ties alone).

    >>> import pandas as pd
    >>> from stableval.nrp.testcollection import collection_from_frames
    >>> from stableval.nrp.rankers.bm25 import BM25Ranker
    >>> c = collection_from_frames(
    ...     pd.DataFrame({"qid": ["1"], "query": ["flu fever"]}),
    ...     pd.DataFrame({"docno": ["a", "b", "c"], "text": ["flu and fever", "flu shots", "tax forms"]}),
    ...     pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "grade": [2, 1, 0]}))
    >>> answers = pd.DataFrame({"qid": ["1", "1"], "model": ["good", "bad"],
    ...                         "text": ["flu fever fever", "I like trains"]})
    >>> result = score_answers(c, answers, BM25Ranker(stats="pool"), bootstrap=0)
    >>> result.answers[["model", "above", "tied", "nrp"]].to_string(index=False)
    'model  above  tied      nrp\\n good      0     0 1.000000\\n  bad      2     1 0.166667'
    """
    from stableval.nrp.answers import answers_from_frame

    answers = answers_from_frame(answers, collection=collection)
    pool = collection.pool()
    qids = pd.Index(pd.unique(answers["qid"]))
    pool = pool[pool["qid"].isin(qids)]
    doc_group = qids.get_indexer(pd.Index(pool["qid"]))
    answer_group = qids.get_indexer(pd.Index(answers["qid"]))
    queries = collection.queries.set_index("qid").loc[qids, "query"].tolist()
    doc_order = np.argsort(doc_group, kind="stable")
    ans_order = np.argsort(answer_group, kind="stable")
    doc_bounds = np.searchsorted(doc_group[doc_order], np.arange(len(qids) + 1))
    ans_bounds = np.searchsorted(answer_group[ans_order], np.arange(len(qids) + 1))
    doc_texts = pool["text"].to_numpy()[doc_order]
    ans_texts = answers["text"].to_numpy()[ans_order]
    doc_lists = [list(doc_texts[doc_bounds[i]:doc_bounds[i + 1]]) for i in range(len(qids))]
    ans_lists = [list(ans_texts[ans_bounds[i]:ans_bounds[i + 1]]) for i in range(len(qids))]
    ranker.prepare(collection.documents["text"].tolist())
    doc_scores, ans_scores = ranker.score(queries, doc_lists, ans_lists, progress=progress)
    answer_score = np.empty(len(answers))
    answer_score[ans_order] = np.concatenate(ans_scores) if ans_scores else []
    above, tied, size = rank_counts(np.concatenate(doc_scores), doc_group[doc_order], answer_score, answer_group)
    nrp = normalized_rank_position(above, tied, size, n=n, ties=ties)
    r = above + _TIED_ABOVE[ties] * tied
    frame = answers[["qid", "model", "prompt", "answer_id", "params"]].assign(
        score=answer_score, above=above, tied=tied, n_documents=size, list_length=size + 1, rank=r + 1, nrp=nrp,
        first=r == 0)
    if relevant is not None:
        qrels = collection.qrels(dimension)
        grade = pool[["qid", "docno"]].merge(qrels, on=["qid", "docno"], how="left")["grade"].to_numpy(dtype=float)
        keep = (grade >= relevant)[doc_order]
        rel_above, rel_tied, rel_size = rank_counts(np.concatenate(doc_scores)[keep], doc_group[doc_order][keep],
                                                    answer_score, answer_group)
        frame = frame.assign(n_relevant=rel_size, nrp_relevant=relevant_rank_position(
            rel_above, rel_tied, rel_size, n=n, ties=ties))
    settings = {"ranker": ranker.identity, "n": n, "ties": ties, "relevant": relevant, "bootstrap": bootstrap,
                "confidence": confidence, "seed": seed, "answers": len(frame), "questions": len(qids)}
    summary = summarize(frame, bootstrap=bootstrap, confidence=confidence, seed=seed)
    notes = [f"{collection.n_questions - len(qids)} question(s) of the collection have no answer"] if len(
        qids) < collection.n_questions else []
    notes += _degenerate_notes(frame, doc_scores, qids, relevant)
    documents = pd.DataFrame({"qid": pool["qid"].to_numpy()[doc_order], "docno": pool["docno"].to_numpy()[doc_order],
                              "score": np.concatenate(doc_scores) if doc_scores else np.zeros(0)})
    return NRPResult(frame, summary, settings, tuple(notes), documents)


def relevant_rank_position(above: np.ndarray, tied: np.ndarray, n_relevant: np.ndarray, *, n: str = "documents",
                           ties: str = "mid") -> np.ndarray:
    """NRP among the relevant documents only; NaN (no value) where the question has none: an answer cannot be
    placed among documents that do not exist, and giving it the top value 1 would reward every answer of such a
    question.

    >>> relevant_rank_position(np.array([1, 0]), np.array([0, 0]), np.array([2, 0])).tolist()
    [0.5, nan]
    """
    nrp = normalized_rank_position(above, tied, n_relevant, n=n, ties=ties)
    return np.where(np.asarray(n_relevant) > 0, nrp, np.nan)


def _degenerate_notes(frame: pd.DataFrame, doc_scores: list[np.ndarray], qids: pd.Index,
                      relevant: float | None) -> list[str]:
    """Warnings for questions whose NRP says nothing: the ranker scored every document and answer alike (an
    empty or unmatched query: NRP 0.5 by ties alone), and, with ``relevant``, answers whose question has no
    relevant document (no ``nrp_relevant``)."""
    notes = []
    answers = frame.groupby("qid", sort=False)["score"].agg(["min", "max"]).reindex(qids)
    flat = [q for q, scores, low, high in zip(qids, doc_scores, answers["min"].to_numpy(dtype=float),
                                              answers["max"].to_numpy(dtype=float), strict=True)
            if len(scores) and np.ptp(scores) == 0 and low == high == scores[0]]
    if flat:
        notes.append(f"warning: {len(flat)} question(s) where the ranker scored every document and answer alike "
                     f"(NRP comes from ties alone): {', '.join(map(str, flat[:10]))}{' ...' if len(flat) > 10 else ''}")
    if relevant is not None:
        missing = frame["nrp_relevant"].isna()
        if missing.any():
            notes.append(f"nrp_relevant: {int(missing.sum())} answer(s) to {frame.loc[missing, 'qid'].nunique()} "
                         f"question(s) with no document of grade >= {relevant:g} have no value (left out of "
                         "mean_nrp_relevant)")
    return notes


def bootstrap_means(values: np.ndarray, group: np.ndarray, cluster: np.ndarray, *, bootstrap: int,
                    confidence: float = 0.95, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of ``values`` per group and a percentile-bootstrap interval resampling clusters (questions).

    Each replicate draws the clusters with replacement (multinomial counts) and recomputes every group's mean
    as (sum of weighted cluster sums) / (sum of weighted cluster counts), all groups at once by matrix products.
    """
    values = np.asarray(values, dtype=float)
    n_groups = int(group.max()) + 1 if len(group) else 0
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    flat = group * n_clusters + cluster
    sums = np.bincount(flat, weights=values, minlength=n_groups * n_clusters).reshape(n_groups, n_clusters)
    counts = np.bincount(flat, minlength=n_groups * n_clusters).reshape(n_groups, n_clusters).astype(float)
    mean = sums.sum(axis=1) / counts.sum(axis=1)
    if bootstrap <= 0:
        return mean, np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=bootstrap).astype(float)
    num = weights @ sums.T
    den = weights @ counts.T
    means = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
    low, high = percentile_interval(means, confidence, axis=0)
    return mean, np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def summarize(per_answer: pd.DataFrame, *, bootstrap: int = 1000, confidence: float = 0.95,
              seed: int = 0) -> pd.DataFrame:
    """Per model x prompt: ``model, prompt, params, answers, questions, mean_nrp, ci_low, ci_high,
    share_first`` (answers with no document above them), ``mean_score`` (the ranker's score of the answers
    against the question) and, when computed, ``mean_nrp_relevant``; best mean NRP first.

    The interval is a percentile bootstrap over **questions** (answers of one question move together), so it
    reflects how much the mean depends on which questions were asked; ``bootstrap=0`` gives NaN bounds.
    """
    keys = per_answer[["model", "prompt"]].astype(str)
    group_index = pd.MultiIndex.from_frame(keys)
    groups = pd.MultiIndex.from_frame(keys.drop_duplicates())
    group = groups.get_indexer(group_index)
    cluster, _ = pd.factorize(per_answer["qid"])
    mean, low, high = bootstrap_means(per_answer["nrp"].to_numpy(), group, cluster, bootstrap=bootstrap,
                                      confidence=confidence, seed=seed)
    n = np.bincount(group, minlength=len(groups))
    first = np.bincount(group, weights=per_answer["first"].to_numpy(dtype=float), minlength=len(groups))
    questions = pd.Series(cluster).groupby(group).nunique().reindex(range(len(groups))).to_numpy()
    params = pd.Series(per_answer["params"].to_numpy(dtype=float)).groupby(group).max().reindex(
        range(len(groups))).to_numpy()
    out = pd.DataFrame({"model": groups.get_level_values(0), "prompt": groups.get_level_values(1), "params": params,
                        "answers": n, "questions": questions, "mean_nrp": mean, "ci_low": low, "ci_high": high,
                        "share_first": first / n})
    for column in ("nrp_relevant", "score"):  # the absolute companions, means (of the values) without intervals
        if column in per_answer.columns:
            values = per_answer[column].to_numpy(dtype=float)
            known = np.isfinite(values)
            total = np.bincount(group[known], weights=values[known], minlength=len(groups))
            count = np.bincount(group[known], minlength=len(groups))
            out[f"mean_{column}"] = np.divide(total, count, out=np.full(len(groups), np.nan), where=count > 0)
    return out.sort_values(["mean_nrp", "model", "prompt"], ascending=[False, True, True],
                           kind="stable").reset_index(drop=True)


def read_webis_rank_files(directory: str | Path) -> pd.DataFrame:
    """The per-answer monoT5 ranks shipped by Heineking et al. (``indexing/results/monoT5/<llm>_rankings.csv``).

    Returns ``qid, model, prompt, answer_id, above`` (their ``rank``: 0-based, documents ranked above),
    ``list_length`` and ``nrp_shipped`` = 1 - ``weighted_position``. The list length is recovered per question
    as ``rank / weighted_position`` (it must be one integer per question, else an InputError); questions where
    every answer ranked first get NaN (their NRP is 1 under any N).
    """
    directory = Path(directory)
    files = sorted(directory.glob("*_rankings.csv"))
    if not files:
        raise InputError("no *_rankings.csv files", file=str(directory),
                         allowed="the indexing/results/monoT5 folder of webis-de/ecir25-ranking-generated-answers")
    parts = []
    for path in files:
        frame = pd.read_csv(path, usecols=["qid", "prompt", "answer_number", "rank", "weighted_position"],
                            dtype={"qid": str, "prompt": str})
        parts.append(frame.assign(model=path.name.removesuffix("_rankings.csv")))
    data = pd.concat(parts, ignore_index=True)
    ranked = data[data["rank"] > 0]
    length = (ranked["rank"] / ranked["weighted_position"]).round(6)
    per_q = length.groupby(ranked["qid"]).agg(["min", "max"])
    bad = per_q[(per_q["max"] - per_q["min"] > 1e-3) | ((per_q["min"] - per_q["min"].round()).abs() > 1e-3)]
    if len(bad):
        raise InputError("rank / weighted_position is not one integer list length per question", file=str(directory),
                         column="weighted_position", value=bad.index[0], allowed="rank / list length")
    lengths = per_q["min"].round().astype(int)
    out = pd.DataFrame({
        "qid": data["qid"], "model": data["model"], "prompt": data["prompt"],
        "answer_id": data["model"] + "_" + data["qid"] + "_" + data["prompt"] + "_" + data["answer_number"].astype(str),
        "above": data["rank"].astype(int), "list_length": data["qid"].map(lengths).astype(float),
        "nrp_shipped": 1.0 - data["weighted_position"].astype(float)})
    return out

