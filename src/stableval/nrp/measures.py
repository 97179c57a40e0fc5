"""Ranking effectiveness of a ranker on the judged pools: nDCG@k, nDCG, AP, P@k, RR (trec_eval definitions).

Used by ``stableval nrp evaluate-rankers`` to choose the ranker on evidence (Heineking et al. 2024, section 2,
step 2). Definitions follow trec_eval (Buckley; as exposed by ir-measures, MacAvaney et al. ECIR 2022), which the
tests use as the oracle:

* documents sorted by score, descending; ties broken by docno, descending (trec_eval's order);
* nDCG@k (Järvelin & Kekäläinen 2002): gain = grade, discount 1/log2(rank + 1), ideal from all judged grades;
  0 when no document has a positive grade;
* AP, P@k, RR count a document as relevant when grade >= ``min_relevant`` (ir-measures ``rel=``); P@k divides
  by k even when fewer than k documents exist.

>>> import pandas as pd
>>> qrels = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"], "grade": [2.0, 0.0, 1.0]})
>>> run = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
>>> round(float(evaluate_run(qrels, run)["ndcg@10"].iloc[0]), 4)  # (2 + 1/log2 4) / (2 + 1/log2 3)
0.9502
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from stableval.nrp.rankers import Ranker
from stableval.nrp.testcollection import TestCollection

__all__ = ["MEASURES", "evaluate_rankers", "evaluate_run", "select_ranker"]

#: Columns of :func:`evaluate_run` (``@10`` measures use k = 10).
MEASURES = ("ndcg@10", "ndcg", "ap", "p@10", "rr")


def evaluate_run(qrels: pd.DataFrame, run: pd.DataFrame, *, k: int = 10,
                 min_relevant: float = 1.0) -> pd.DataFrame:
    """Per question of ``qrels`` (``qid, docno, grade``) that the run ranks: the measures of ``run``
    (``qid, docno, score``). Unjudged documents in the run have grade 0. Vectorised over all questions."""
    run = run[["qid", "docno", "score"]].merge(qrels[["qid", "docno", "grade"]], on=["qid", "docno"], how="left")
    run["grade"] = run["grade"].fillna(0.0)
    # trec_eval order: score descending, then docno descending
    run = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
    qid_codes, qids = pd.factorize(run["qid"], sort=True)
    n_q = len(qids)
    starts = np.searchsorted(qid_codes, np.arange(n_q))
    rank = np.arange(len(run)) - starts[qid_codes] + 1
    grade = run["grade"].to_numpy(dtype=float)
    discount = 1.0 / np.log2(rank + 1.0)
    dcg_k = np.bincount(qid_codes, weights=grade * discount * (rank <= k), minlength=n_q)
    dcg = np.bincount(qid_codes, weights=grade * discount, minlength=n_q)
    # ideal: every judged grade of the question, sorted descending
    judged = qrels[qrels["qid"].isin(set(qids))].copy()
    judged_codes = pd.Index(qids).get_indexer(pd.Index(judged["qid"]))
    order = np.lexsort((-judged["grade"].to_numpy(dtype=float), judged_codes))
    jc = judged_codes[order]
    jg = judged["grade"].to_numpy(dtype=float)[order]
    jrank = np.arange(len(jc)) - np.searchsorted(jc, np.arange(n_q))[jc] + 1
    jdisc = 1.0 / np.log2(jrank + 1.0)
    idcg_k = np.bincount(jc, weights=jg * jdisc * (jrank <= k), minlength=n_q)
    idcg = np.bincount(jc, weights=jg * jdisc, minlength=n_q)
    relevant = grade >= min_relevant
    n_relevant = np.bincount(jc, weights=(jg >= min_relevant).astype(float), minlength=n_q)
    hits = np.cumsum(relevant) - np.concatenate([[0], np.cumsum(relevant)])[starts][qid_codes]
    ap_sum = np.bincount(qid_codes, weights=relevant * hits / rank, minlength=n_q)
    p_k = np.bincount(qid_codes, weights=relevant * (rank <= k), minlength=n_q) / k
    first = np.full(n_q, np.inf)
    np.minimum.at(first, qid_codes[relevant], rank[relevant])

    def ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.divide(a, b, out=np.zeros_like(a), where=b > 0)

    return pd.DataFrame({"qid": qids, "ndcg@10" if k == 10 else f"ndcg@{k}": ratio(dcg_k, idcg_k),
                         "ndcg": ratio(dcg, idcg), "ap": ratio(ap_sum, n_relevant),
                         "p@10" if k == 10 else f"p@{k}": p_k,
                         "rr": np.where(np.isfinite(first), 1.0 / np.where(np.isfinite(first), first, 1.0), 0.0),
                         "documents": np.bincount(qid_codes, minlength=n_q), "relevant": n_relevant})


def evaluate_rankers(collection: TestCollection, rankers: Mapping[str, Ranker], *, k: int = 10,
                     min_relevant: float = 1.0, progress: bool = False,
                     runs: list[pd.DataFrame] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score every judged pool with each ranker once and evaluate it on every quality dimension.

    Returns (summary, per_question): summary has ``ranker, dimension, questions`` and the mean of each measure;
    per_question has ``ranker, dimension, qid`` and the measures. Given a list ``runs``, each ranker's run
    (``ranker, qid, docno, score, rank``; rank 1 = best, ties in trec_eval's docno order) is appended to it.
    """
    pool = collection.pool()
    qids = pd.Index(pd.unique(pool["qid"]))
    group = qids.get_indexer(pd.Index(pool["qid"]))
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(len(qids) + 1))
    texts = pool["text"].to_numpy()[order]
    queries = pool.drop_duplicates("qid").set_index("qid").loc[qids, "query"].tolist()
    lists = [list(texts[bounds[i]:bounds[i + 1]]) for i in range(len(qids))]
    per_question = []
    for name, ranker in rankers.items():
        ranker.prepare(collection.documents["text"].tolist())
        doc_scores, _ = ranker.score(queries, lists, None, progress=progress)
        scores = np.empty(len(pool))
        scores[order] = np.concatenate(doc_scores)
        run = pool[["qid", "docno"]].assign(score=scores)
        if runs is not None:
            ordered = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
            runs.append(ordered.assign(rank=ordered.groupby("qid").cumcount() + 1).sort_index().assign(
                ranker=name)[["ranker", "qid", "docno", "score", "rank"]])
        for dimension in collection.dimensions:
            table = evaluate_run(collection.qrels(dimension), run, k=k, min_relevant=min_relevant)
            per_question.append(table.assign(ranker=name, dimension=dimension))
    detail = pd.concat(per_question, ignore_index=True)
    measures = [c for c in detail.columns if c not in ("qid", "ranker", "dimension", "documents", "relevant")]
    summary = detail.groupby(["ranker", "dimension"], sort=False)[measures].mean().reset_index()
    summary.insert(2, "questions", detail.groupby(["ranker", "dimension"], sort=False).size().to_numpy())
    return summary, detail[["ranker", "dimension", "qid", *measures, "documents", "relevant"]]


def select_ranker(collection: TestCollection, rankers: Mapping[str, Ranker], *, measure: str = "ndcg@10",
                  dimension: str | None = None, min_relevant: float = 1.0,
                  progress: bool = False) -> tuple[str, pd.DataFrame]:
    """The ranker with the highest mean ``measure`` on the judged pools, averaged over every quality dimension of
    the collection (``dimension``: that one only), and the evidence: ``ranker``, the measure per dimension and
    their ``mean``, one row per ranker in the order given; ties go to the first given."""
    summary, _ = evaluate_rankers(collection, rankers, min_relevant=min_relevant, progress=progress)
    dimensions = [dimension] if dimension is not None else list(collection.dimensions)
    if dimension is not None and dimension not in collection.dimensions:
        from stableval.errors import InputError

        raise InputError("unknown quality dimension", value=dimension, allowed=", ".join(collection.dimensions))
    table = summary.pivot(index="ranker", columns="dimension", values=measure).reindex(
        index=list(rankers), columns=dimensions)
    evidence = table.rename(columns=lambda d: f"{measure} {d}").reset_index()
    evidence["mean"] = table.mean(axis=1).to_numpy()
    best = evidence["ranker"].iloc[int(np.argmax(evidence["mean"].to_numpy()))]
    return str(best), evidence
