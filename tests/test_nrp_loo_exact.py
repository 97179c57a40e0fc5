"""Leave-one-out of the lexical rankers is exact: row j of the matrix equals recomputing the collection
statistics from scratch without document j and scoring j as an answer among the rest."""

from __future__ import annotations

import numpy as np
import pytest

from stableval.nrp.rankers import Ranker
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.rankers.dph import DPHRanker
from stableval.nrp.rankers.tfidf import TfidfRanker
from test_nrp_validate import _collection

RANKERS = {"tfidf": TfidfRanker, "dph": DPHRanker, "bm25": BM25Ranker}


@pytest.mark.parametrize("name", list(RANKERS))
@pytest.mark.parametrize("partial", [False, True])
def test_leave_one_out_equals_statistics_recomputed_without_the_document(name: str, partial: bool) -> None:
    collection = _collection(11, questions=3, docs=6)
    corpus = [*collection.documents["text"], collection.documents["text"].iloc[0]]  # a text twice: one copy leaves
    if partial:  # statistics from a corpus without the documents 6-8: those are never in them, nothing to remove
        corpus = [t for t in corpus if t not in set(collection.documents["text"].iloc[6:9])]
    pool = collection.pool()
    qids = list(dict.fromkeys(pool["qid"]))
    queries = collection.queries.set_index("qid").loc[qids, "query"].tolist()
    lists = [pool.loc[pool["qid"] == qid, "text"].tolist() for qid in qids]
    ranker = RANKERS[name]()
    ranker.prepare(corpus)
    matrices = ranker.leave_one_out(queries, lists)
    kept: list[np.ndarray] = []
    for query, docs, matrix in zip(queries, lists, matrices, strict=True):
        assert matrix.shape == (len(docs), len(docs))
        for j, held_out in enumerate(docs):
            rest = corpus.copy()
            if held_out in rest:
                rest.remove(held_out)  # one occurrence
            fresh = RANKERS[name]()
            fresh.prepare(rest)
            others = docs[:j] + docs[j + 1:]
            doc_scores, (own,) = fresh.score([query], [others], [[held_out]])
            np.testing.assert_allclose(matrix[j, j], own[0], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(np.delete(matrix[j], j), doc_scores[0], rtol=1e-10, atol=1e-12)
        kept.append(matrix)
    # the held-out document matters here: keeping it in the statistics (the former behaviour) gives other numbers
    stale = Ranker.leave_one_out(ranker, queries, lists)
    assert any(not np.allclose(a, b, rtol=1e-6) for a, b in zip(kept, stale, strict=True))

