"""TF-IDF cosine ranker: the cheap lexical question-answer similarity (Salton & Buckley 1988).

Salton & Buckley, "Term-weighting approaches in automatic text retrieval", Information Processing & Management
24(5), 1988: each text is a vector of term frequency x inverse document frequency, and the score of a text for a
query is the cosine of their vectors. Here tf = raw count, idf(t) = ln((1 + N) / (1 + df(t))) + 1 (the smoothed
idf of scikit-learn's ``TfidfVectorizer``, the oracle of the tests), N and df from every judged document of the
collection (:meth:`TfidfRanker.prepare`; without it, the distinct documents being scored), tokens from
``bm25s.tokenize`` as for BM25. Pointwise: answers never enter the statistics.

>>> docs, answers = TfidfRanker().score(["flu fever"], [["flu and fever", "tax forms"]], [["fever fever"]])
>>> [round(float(s), 4) for s in docs[0]], round(float(answers[0][0]), 4)
([1.0, 0.0], 0.7071)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from stableval.nrp.rankers import CollectionStatsRanker
from stableval.nrp.rankers.bm25 import _tokenize

__all__ = ["TfidfRanker"]


class TfidfRanker(CollectionStatsRanker):
    """Cosine of TF-IDF vectors of the query and each text, idf from the collection's judged documents."""

    name = "tfidf"

    @property
    def identity(self) -> str:
        return "tfidf(cosine,collection-idf)"

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        answers = answers if answers is not None else [[] for _ in queries]
        corpus = self.statistics_corpus(documents)
        texts = [*corpus, *queries]
        owner, part = [], []
        for i, (docs, ans) in enumerate(zip(documents, answers, strict=True)):
            texts.extend(docs)
            texts.extend(ans)
            owner.extend([i] * (len(docs) + len(ans)))
            part.extend([0] * len(docs) + [1] * len(ans))
        counts, _ = _tokenize(texts)
        n_bg = len(corpus)
        df = np.asarray((counts[:n_bg] > 0).sum(axis=0)).ravel()
        idf = np.log((1.0 + n_bg) / (1.0 + df)) + 1.0
        weighted = sp.csr_matrix(counts @ sp.diags(idf))
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        unit = sp.csr_matrix(sp.diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ weighted)
        query_rows = unit[n_bg:n_bg + len(queries)]
        text_rows = unit[n_bg + len(queries):]
        owners = np.asarray(owner, dtype=np.int64)
        # cosine of each text with its own question: row-wise dot product of the text and the owner's query
        cosine = np.asarray(text_rows.multiply(query_rows[owners]).sum(axis=1)).ravel() if len(owners) else (
            np.zeros(0))
        parts = np.asarray(part)
        doc_scores, answer_scores = [], []
        bounds = np.searchsorted(owners, np.arange(len(queries) + 1))
        for i in range(len(queries)):
            block, kind = cosine[bounds[i]:bounds[i + 1]], parts[bounds[i]:bounds[i + 1]]
            doc_scores.append(block[kind == 0])
            answer_scores.append(block[kind == 1])
        return doc_scores, answer_scores
