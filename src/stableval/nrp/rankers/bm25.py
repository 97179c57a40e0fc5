"""BM25 with document statistics from the judged pool: the default, embedded NRP ranker (no model needed).

Score of text ``d`` for query ``q`` (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
Beyond"; the Lucene IDF variant compared by Kamphuis, de Vries, Boytsov & Lin, ECIR 2020, as in ``bm25s``)::

    BM25(q, d) = sum over distinct query terms t of  idf(t) * tf(t,d) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

Tokens come from ``bm25s.tokenize`` (lower-cased words of 2+ characters, English stop words removed, no
stemming); like Lucene 8+ and bm25s the constant factor (k1 + 1) of the original is left out.
**N, df and avgdl are computed from the judged documents of the question only** (its pool ``D_q``),
never from the answers, so a document's score does not change when an answer is added to the list and every
answer is scored alone against the same statistics (pointwise NRP). On the pool documents the scores equal those
of a ``bm25s.BM25(method="lucene")`` index of the pool (tested).

All answers and documents are tokenised in one call and counted in one sparse matrix; per question only the
query-term columns are touched, so 16,000 answers take a few seconds.

>>> docs, answers = BM25Ranker().score(["flu fever"], [["flu gives fever", "tax forms", "fever"]], [["flu"]])
>>> [round(float(s), 4) for s in docs[0]], round(float(answers[0][0]), 4)
([0.4737, 0.0, 0.2426], 0.5062)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from stableval.nrp.rankers import Ranker

__all__ = ["BM25Ranker", "bm25_scores"]


def _tokenize(texts: Sequence[str]) -> tuple[sp.csr_matrix, dict[str, int]]:
    """One bm25s tokenisation of every text: a (texts x vocabulary) count matrix and the vocabulary."""
    import bm25s  # type: ignore[import-untyped]

    tokenized = bm25s.tokenize(list(texts), show_progress=False, allow_empty=True)
    lengths = np.fromiter((len(ids) for ids in tokenized.ids), dtype=np.int64, count=len(tokenized.ids))
    columns = np.fromiter((i for ids in tokenized.ids for i in ids), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(lengths)), lengths)
    vocab = dict(tokenized.vocab)
    width = max(vocab.values(), default=-1) + 1
    counts = sp.csr_matrix((np.ones(len(columns)), (rows, columns)), shape=(len(lengths), width))
    counts.sum_duplicates()
    return counts, vocab


def bm25_scores(query_tf: np.ndarray, pool_tf: np.ndarray, pool_len: np.ndarray, text_tf: np.ndarray,
                text_len: np.ndarray, *, k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """BM25 of texts (rows of ``text_tf``, counts of the query terms) with the pool's N, df and avgdl.

    ``query_tf`` marks the query's distinct terms (counts > 0; repeated query terms count once, as in bm25s).

    >>> bm25_scores(np.array([1]), np.array([[1], [0]]), np.array([2, 2]), np.array([[2]]), np.array([4]))
    array([0.29973932])
    """
    n = pool_tf.shape[0]
    df = (pool_tf > 0).sum(axis=0)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)) * (np.asarray(query_tf) > 0)
    avgdl = float(np.mean(pool_len)) if n else 1.0
    avgdl = avgdl if avgdl > 0 else 1.0
    norm = k1 * (1 - b + b * np.asarray(text_len, dtype=float) / avgdl)
    tf = np.asarray(text_tf, dtype=float)
    return np.asarray((tf / (tf + norm[:, None])) @ idf, dtype=float)


class BM25Ranker(Ranker):
    """BM25 (Lucene variant) with pool statistics; ``k1`` and ``b`` as in bm25s (1.5, 0.75)."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    @property
    def identity(self) -> str:
        return f"bm25(k1={self.k1:g},b={self.b:g},pool-stats)"

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        from stableval.progress import progress_bar

        answers = answers if answers is not None else [[] for _ in queries]
        texts: list[str] = list(queries)
        doc_start, ans_start = [], []
        for docs, ans in zip(documents, answers, strict=True):
            doc_start.append(len(texts))
            texts.extend(docs)
            ans_start.append(len(texts))
            texts.extend(ans)
        counts_rows, _ = _tokenize(texts)
        lengths = np.asarray(counts_rows.sum(axis=1)).ravel()
        counts = counts_rows.tocsc()
        doc_scores, answer_scores = [], []
        with progress_bar("bm25: scoring", total=len(queries), enabled=progress) as bar:
            for i, (docs, ans) in enumerate(zip(documents, answers, strict=True)):
                terms = counts_rows.indices[counts_rows.indptr[i]:counts_rows.indptr[i + 1]]
                columns = counts[:, terms].tocsr()
                d0, a0 = doc_start[i], ans_start[i]
                pool_tf = columns[d0:d0 + len(docs)].toarray()
                pool_len = lengths[d0:d0 + len(docs)]
                query_tf = np.ones(len(terms))
                doc_scores.append(bm25_scores(query_tf, pool_tf, pool_len, pool_tf, pool_len, k1=self.k1, b=self.b))
                answer_scores.append(bm25_scores(query_tf, pool_tf, pool_len,
                                                 columns[a0:a0 + len(ans)].toarray(), lengths[a0:a0 + len(ans)],
                                                 k1=self.k1, b=self.b))
                bar.advance()
        return doc_scores, answer_scores
