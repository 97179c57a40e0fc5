"""BM25 for NRP: repeated query terms, collection-wide statistics, leave-one-out statistics (vs bm25s and by hand)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from stableval.nrp import collection_from_frames, score_answers
from stableval.nrp.rankers.bm25 import BM25Ranker

from nrp_data import WORDS, random_collection, random_texts


# ----------------------------------------------------------------------------------- BM25
def test_bm25_pool_scores_equal_bm25s_index() -> None:
    bm25s = pytest.importorskip("bm25s")
    rng = np.random.default_rng(1)
    docs = [" ".join(rng.choice(WORDS, rng.integers(2, 20))) for _ in range(40)]
    query = "flu fever insulin"
    ours, answers = BM25Ranker(stats="pool").score([query], [docs], [docs[:5]])
    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize(docs, show_progress=False, return_ids=False), show_progress=False)
    reference = index.get_scores(["flu", "fever", "insulin"])
    np.testing.assert_allclose(ours[0], reference, rtol=1e-5, atol=1e-6)
    # an answer identical to a document gets the document's score (same pool statistics)
    np.testing.assert_allclose(answers[0], ours[0][:5], rtol=1e-12)


def test_pointwise_equals_inserting_and_reranking() -> None:
    collection = random_collection(2)
    rng = np.random.default_rng(5)
    answers = pd.DataFrame({"qid": rng.choice(collection.queries["qid"], 30), "model": rng.choice(["a", "b"], 30),
                            "text": [" ".join(rng.choice(WORDS, 6)) for _ in range(30)]})
    result = score_answers(collection, answers, BM25Ranker(stats="pool"), ties="optimistic", bootstrap=0)
    pool = collection.pool()
    for row, text in zip(result.answers.itertuples(), answers["text"], strict=True):
        docs = pool.loc[pool["qid"] == row.qid, "text"].tolist()
        query = collection.queries.set_index("qid").loc[row.qid, "query"]
        doc_scores, _ = BM25Ranker(stats="pool").score([query], [docs])
        _, (answer_score,) = BM25Ranker(stats="pool").score([query], [docs], [[text]])
        assert row.above == int(np.sum(doc_scores[0] > answer_score[0]))
        assert row.n_documents == len(docs) and row.list_length == len(docs) + 1


def test_repeated_query_terms_count_each_occurrence_by_hand() -> None:
    # pool: "flu fever" (2 tokens), "tax car" (2 tokens): N = 2, df(flu) = 1, avgdl = 2
    docs = ["flu fever", "tax car"]
    once, _ = BM25Ranker(stats="pool").score(["flu"], [docs])
    twice, _ = BM25Ranker(stats="pool").score(["flu flu"], [docs])
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))  # ln 2
    by_hand = idf * 1 / (1 + 1.5 * (1 - 0.75 + 0.75 * 2 / 2))  # tf = 1, |d| = avgdl
    assert once[0][0] == pytest.approx(by_hand, rel=1e-12)
    assert twice[0][0] == pytest.approx(2 * by_hand, rel=1e-12)
    assert once[0][1] == twice[0][1] == 0.0


def test_repeated_query_terms_equal_bm25s() -> None:
    bm25s = pytest.importorskip("bm25s")
    docs = random_texts(1, 30)
    ours, _ = BM25Ranker(stats="pool").score(["flu flu fever insulin insulin insulin"], [docs])
    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize(docs, show_progress=False, return_ids=False), show_progress=False)
    reference = index.get_scores(["flu", "flu", "fever", "insulin", "insulin", "insulin"])
    np.testing.assert_allclose(ours[0], reference, rtol=1e-5, atol=1e-6)


def test_collection_statistics_equal_a_bm25s_index_of_the_collection() -> None:
    bm25s = pytest.importorskip("bm25s")
    docs = random_texts(2, 45)
    queries = pd.DataFrame({"qid": ["a", "b", "c"], "query": ["flu fever", "heart pain drug", "tax sugar"]})
    judgments = pd.DataFrame({"qid": np.repeat(["a", "b", "c"], 15), "docno": [f"d{i:02d}" for i in range(45)],
                              "grade": 1})
    collection = collection_from_frames(queries, pd.DataFrame({"docno": judgments["docno"], "text": docs}),
                                        judgments)
    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize(docs, show_progress=False, return_ids=False), show_progress=False)
    ranker = BM25Ranker()
    ranker.prepare(collection.documents["text"].tolist())
    pools = [docs[0:15], docs[15:30], docs[30:45]]
    ours, answers = ranker.score(queries["query"].tolist(), pools, [[docs[20]], [], []])
    for i, query in enumerate(queries["query"]):
        reference = index.get_scores(query.split())[15 * i:15 * (i + 1)]
        np.testing.assert_allclose(ours[i], reference, rtol=1e-5, atol=1e-6)
    # an answer is scored with the same (collection) statistics: a copy of doc 20 scored for question a
    assert answers[0][0] == pytest.approx(index.get_scores(["flu", "fever"])[20], rel=1e-5)
    # without prepare() the statistics come from the documents given, here the same collection
    unprepared, _ = BM25Ranker().score(queries["query"].tolist(), pools)
    np.testing.assert_allclose(np.concatenate(unprepared), np.concatenate(ours), rtol=1e-12)
    # score_answers prepares the ranker with the whole collection even when one question has answers
    answer = pd.DataFrame({"qid": ["a"], "model": ["m"], "text": [docs[20]]})
    result = score_answers(collection, answer, BM25Ranker(), bootstrap=0)
    assert result.answers["score"].iloc[0] == pytest.approx(answers[0][0], rel=1e-12)
    assert "collection-stats" in result.settings["ranker"]


@pytest.mark.parametrize("stats", ["pool", "collection"])
def test_leave_one_out_equals_rescoring_without_the_document(stats: str) -> None:
    docs = random_texts(3, 12)
    other = random_texts(4, 10)
    query = "flu fever flu sugar"
    ranker = BM25Ranker(stats=stats)
    ranker.prepare([*docs, *other])
    (matrix,) = ranker.leave_one_out([query], [docs])
    for j in range(len(docs)):
        rest = docs[:j] + docs[j + 1:]
        brute = BM25Ranker(stats=stats)
        brute.prepare(rest + other)  # the held-out document leaves the statistics too
        rest_scores, (answer,) = brute.score([query], [rest], [[docs[j]]])
        np.testing.assert_allclose(np.delete(matrix[j], j), rest_scores[0], rtol=1e-12)
        assert matrix[j, j] == pytest.approx(answer[0], rel=1e-12)


def test_unknown_statistics_are_refused() -> None:
    from stableval.errors import InputError

    with pytest.raises(InputError, match=r"stats.*'global'.*collection, pool"):
        BM25Ranker(stats="global")
