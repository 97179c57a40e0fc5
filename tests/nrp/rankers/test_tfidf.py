"""TF-IDF cosine against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from nrp_data import random_texts


def test_tfidf_cosine_equals_scikit_learn() -> None:
    pytest.importorskip("bm25s")
    text = pytest.importorskip("sklearn.feature_extraction.text")
    from stableval.nrp.rankers.bm25 import _tokenize
    from stableval.nrp.rankers.tfidf import TfidfRanker

    docs, answers = random_texts(5, 20), random_texts(6, 4)
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
