"""TF-IDF cosine ranker: the cheap lexical question-answer similarity (Salton & Buckley 1988).

Salton & Buckley, "Term-weighting approaches in automatic text retrieval", Information Processing & Management
24(5), 1988: each text is a vector of term frequency x inverse document frequency, and the score of a text for a
query is the cosine of their vectors. Here tf = raw count, idf(t) = ln((1 + N) / (1 + df(t))) + 1 (the smoothed
idf of scikit-learn's ``TfidfVectorizer``, the oracle of the tests), N and df from every judged document of the
collection (:meth:`TfidfRanker.prepare`; without it, the distinct documents being scored), tokens from
``bm25s.tokenize`` as for BM25. Pointwise: answers never enter the statistics. Leave-one-out
(:meth:`TfidfRanker.leave_one_out`) is exact: the held-out document leaves N and df (its own term counts
subtracted), as if the statistics had been recomputed without it.

>>> docs, answers = TfidfRanker().score(["flu fever"], [["flu and fever", "tax forms"]], [["fever fever"]])
>>> [round(float(s), 4) for s in docs[0]], round(float(answers[0][0]), 4)
([1.0, 0.0], 0.7071)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from stableval.nrp.rankers.base import CollectionStatsRanker
from stableval.nrp.rankers.bm25 import _tokenize

__all__ = ["TfidfRanker"]


def _idf_squared(n: float | np.ndarray, df: np.ndarray) -> np.ndarray:
    """The smoothed idf, squared: (ln((1 + N) / (1 + df)) + 1)^2."""
    return np.asarray((np.log((1.0 + n) / (1.0 + df)) + 1.0) ** 2, dtype=float)


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

    def leave_one_out(self, queries: Sequence[str], documents: Sequence[Sequence[str]], *,
                      progress: bool = False) -> list[np.ndarray]:
        """Per question an (n x n) matrix: row j = cosines of every document with document j held out of N and df
        (when it is in the statistics corpus), so ``[j, j]`` scores j as a new answer.

        With j held out, idf_j(t) = ln((1 + N - 1) / (1 + df(t) - [t in j])) + 1 changes the weight of every term,
        so the documents' norms change too: cos_j(i) = sum_t q_t c_it idf_j(t)^2 / (|c_i idf_j| |q idf_j|). Every
        sum splits into the part shared by all j (idf with N - 1 and the full df: one sparse product per question)
        and a sparse correction on the terms of j only (df - 1 there), so nothing dense of size (n x vocabulary)
        is formed.

        >>> loo = TfidfRanker().leave_one_out(["flu"], [["flu fever", "tax", "flu"]])[0]
        >>> ranker = TfidfRanker()
        >>> ranker.prepare(["tax", "flu"])  # the statistics without document 0
        >>> docs, (own,) = ranker.score(["flu"], [["tax", "flu"]], [["flu fever"]])
        >>> bool(np.allclose(loo[0], [own[0], *docs[0]]))
        True
        """
        corpus = self.statistics_corpus(documents)
        in_corpus = set(corpus)
        texts = [*corpus, *queries, *(t for docs in documents for t in docs)]
        counts, _ = _tokenize(texts)
        n_bg = len(corpus)
        df = np.asarray((counts[:n_bg] > 0).sum(axis=0)).ravel()
        out = []
        start = n_bg + len(queries)
        for i, docs in enumerate(documents):
            block = counts[start:start + len(docs)]
            query = counts[n_bg + i]
            terms = np.union1d(block.indices, query.indices)
            tf = sp.csr_matrix(block[:, terms])                                       # (n, t) counts c_it
            q = query[:, terms].toarray().ravel()                                      # (t,)
            df_q = df[terms]
            drop = np.fromiter((t in in_corpus for t in docs), dtype=float, count=len(docs))
            n_j = n_bg - drop                                                          # N without j
            squares = sp.csr_matrix(tf.multiply(tf))
            with_query = sp.csr_matrix(tf.multiply(q[None, :]))
            norm2, dot, query2 = np.empty((len(docs), len(docs))), np.empty((len(docs), len(docs))), np.empty(
                len(docs))
            for value in np.unique(n_j):  # the shared part: idf with N_j and the full df
                rows = n_j == value
                weight = _idf_squared(value, df_q)
                norm2[rows] = squares @ weight
                dot[rows] = with_query @ weight
                query2[rows] = q ** 2 @ weight
            pattern = tf.tocoo()  # the correction: df - 1 on the terms of j, when j left the statistics
            keep = drop[pattern.row] > 0
            r, c = pattern.row[keep], pattern.col[keep]
            delta = sp.csr_matrix((_idf_squared(n_j[r], df_q[c] - 1.0) - _idf_squared(n_j[r], df_q[c]), (r, c)),
                                  shape=tf.shape)
            norm2 += (delta @ squares.T).toarray()
            dot += (delta @ with_query.T).toarray()
            query2 += delta @ q ** 2
            norms = np.sqrt(np.clip(norm2, 0.0, None) * np.clip(query2, 0.0, None)[:, None])
            out.append(np.divide(dot, norms, out=np.zeros_like(dot), where=norms > 0))
            start += len(docs)
        return out
