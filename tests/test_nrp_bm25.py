"""BM25 for NRP: repeated query terms, collection-wide statistics, leave-one-out statistics (vs bm25s and by hand)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from stableval.nrp import collection_from_frames, score_answers
from stableval.nrp.rankers.bm25 import BM25Ranker

WORDS = np.array("flu fever cough heart pain drug dose sleep diet skin blood sugar insulin tax car tree".split())


def _docs(seed: int, n: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, rng.integers(2, 20))) for _ in range(n)]


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
    docs = _docs(1, 30)
    ours, _ = BM25Ranker(stats="pool").score(["flu flu fever insulin insulin insulin"], [docs])
    index = bm25s.BM25(method="lucene")
    index.index(bm25s.tokenize(docs, show_progress=False, return_ids=False), show_progress=False)
    reference = index.get_scores(["flu", "flu", "fever", "insulin", "insulin", "insulin"])
    np.testing.assert_allclose(ours[0], reference, rtol=1e-5, atol=1e-6)


def test_collection_statistics_equal_a_bm25s_index_of_the_collection() -> None:
    bm25s = pytest.importorskip("bm25s")
    docs = _docs(2, 45)
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
    docs = _docs(3, 12)
    other = _docs(4, 10)
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


def test_tfidf_cosine_equals_scikit_learn() -> None:
    pytest.importorskip("bm25s")
    text = pytest.importorskip("sklearn.feature_extraction.text")
    from stableval.nrp.rankers.bm25 import _tokenize
    from stableval.nrp.rankers.tfidf import TfidfRanker

    docs, answers = _docs(5, 20), _docs(6, 4)
    query = "flu fever fever sugar"
    ranker = TfidfRanker()
    ranker.prepare(docs)
    ours, ans = ranker.score([query], [docs], [answers])
    counts, vocab = _tokenize([*docs, query, *answers])
    words = {i: w for w, i in vocab.items()}

    def tokens(doc: str) -> list[str]:  # the same bm25s tokens, given to scikit-learn as its analyzer
        row = counts[[*docs, query, *answers].index(doc)]
        return [words[i] for i, c in zip(row.indices, row.data, strict=True) for _ in range(int(c))]

    vectorizer = text.TfidfVectorizer(analyzer=tokens).fit(docs)
    reference = (vectorizer.transform([*docs, *answers]) @ vectorizer.transform([query]).T).toarray().ravel()
    np.testing.assert_allclose(np.concatenate([ours[0], ans[0]]), reference, rtol=1e-10, atol=1e-12)


def test_dph_by_hand_and_pointwise() -> None:
    from stableval.nrp.rankers.dph import DPHRanker

    # collection: "flu fever cough" (3 tokens), "tax forms" (2), "fever rest fever" (3): N = 3, avgdl = 8/3
    corpus = ["flu fever cough", "tax forms", "fever rest fever"]
    ranker = DPHRanker()
    ranker.prepare(corpus)
    docs, answers = ranker.score(["fever flu"], [corpus], [["fever fever fever"]])

    def weight(tf: float, dl: float, big_f: float) -> float:
        f = tf / dl
        return (1 - f) ** 2 / (tf + 1) * (tf * math.log2(tf * (8 / 3) / dl * 3 / big_f)
                                          + 0.5 * math.log2(2 * math.pi * tf * (1 - f)))

    by_hand = [weight(1, 3, 1) + weight(1, 3, 3), 0.0, weight(2, 3, 3)]  # F(flu) = 1, F(fever) = 3
    np.testing.assert_allclose(docs[0], by_hand, rtol=1e-12)
    assert answers[0][0] == 0.0  # a text made of the term only: f = 1, weight 0
