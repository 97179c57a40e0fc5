"""BM25 with collection-wide or per-pool document statistics: the embedded NRP ranker (no model needed).

Score of text ``d`` for query ``q`` (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
Beyond"; the Lucene IDF variant compared by Kamphuis, de Vries, Boytsov & Lin, ECIR 2020, as in ``bm25s``)::

    BM25(q, d) = sum over query tokens t (each occurrence) of  idf(t) * tf(t,d) / (tf(t,d) + k1 * B(d))
    B(d)       = 1 - b + b * |d| / avgdl
    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

**Repeated query terms count once per occurrence** (a term written twice in the query weighs twice), as in
``bm25s`` (``get_scores`` sums over the query's tokens) and in a Lucene boolean query of the tokens. Tokens come
from ``bm25s.tokenize`` (lower-cased words of 2+ characters, English stop words removed, no stemming); like
Lucene 8+ and bm25s the constant factor (k1 + 1) of the original is left out.

Where N, df and avgdl come from (``stats``), never from the answers, so a document's score does not change when
an answer is added to the list and every answer is scored alone against the same statistics (pointwise NRP):

* ``"collection"`` (the default, ``--ranker bm25``): every judged document of the test collection (given by
  :meth:`BM25Ranker.prepare`, as ``score_answers`` and ``evaluate_rankers`` do), or an explicit ``background``
  corpus; without either, the distinct documents of the questions being scored. Chosen on the LiveQA pools
  (docs/nrp.md: higher nDCG@10 on every pool).
* ``"pool"`` (``--ranker bm25-pool``): the judged documents of the question only (its pool ``D_q``); on the pool
  documents the scores equal those of a ``bm25s.BM25(method="lucene")`` index of the pool (tested).

All texts are tokenised in one call and counted in one sparse matrix; per question only the query-term columns are
touched, so 16,000 answers take a few seconds.

>>> ranker = BM25Ranker(stats="pool")
>>> docs, answers = ranker.score(["flu fever"], [["flu gives fever", "tax forms", "fever"]], [["flu"]])
>>> [round(float(s), 4) for s in docs[0]], round(float(answers[0][0]), 4)
([0.4737, 0.0, 0.2426], 0.5062)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from stableval.errors import InputError
from stableval.nrp.rankers.base import CollectionStatsRanker

__all__ = ["BM25_STATS", "BM25Ranker", "bm25_scores"]

#: Where BM25 takes N, df and avgdl from.
BM25_STATS = ("collection", "pool")


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


def lucene_idf(n: float | np.ndarray, df: np.ndarray) -> np.ndarray:
    """Lucene's BM25 idf, ln(1 + (N - df + 0.5) / (df + 0.5)); ``n`` may vary per row (broadcast)."""
    return np.asarray(np.log1p((n - df + 0.5) / (df + 0.5)), dtype=float)


def bm25_scores(query_tf: np.ndarray, pool_tf: np.ndarray, pool_len: np.ndarray, text_tf: np.ndarray,
                text_len: np.ndarray, *, k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """BM25 of texts (rows of ``text_tf``, counts of the query terms) with N, df and avgdl of ``pool_tf``.

    ``query_tf``: how often each term occurs in the query (each occurrence counts). Hand-worked: a pool of two
    2-token documents, one holding the term (N = 2, df = 1: idf = ln(1 + 1.5/1.5) = ln 2); a 4-token text with
    tf = 2: norm = 1.5 (1 - 0.75 + 0.75 * 4/2) = 2.625, score = ln 2 * 2 / 4.625 = 0.29974; the query term twice
    doubles it:

    >>> bm25_scores(np.array([1]), np.array([[1], [0]]), np.array([2, 2]), np.array([[2]]), np.array([4]))
    array([0.29973932])
    >>> bm25_scores(np.array([2]), np.array([[1], [0]]), np.array([2, 2]), np.array([[2]]), np.array([4]))
    array([0.59947864])
    """
    n = pool_tf.shape[0]
    df = (np.asarray(pool_tf) > 0).sum(axis=0)
    idf = lucene_idf(n, df) * np.asarray(query_tf, dtype=float)
    avgdl = float(np.mean(pool_len)) if n else 1.0
    return _weighted(idf, avgdl, text_tf, text_len, k1=k1, b=b)


def _weighted(idf: np.ndarray, avgdl: float, text_tf: np.ndarray, text_len: np.ndarray, *, k1: float,
              b: float) -> np.ndarray:
    avgdl = avgdl if avgdl > 0 else 1.0
    norm = k1 * (1 - b + b * np.asarray(text_len, dtype=float) / avgdl)
    tf = np.asarray(text_tf, dtype=float)
    return np.asarray((tf / (tf + norm[:, None])) @ idf, dtype=float)


class BM25Ranker(CollectionStatsRanker):
    """BM25 (Lucene variant); ``k1`` and ``b`` as in bm25s (1.5, 0.75); ``stats``: ``collection`` or ``pool``;
    ``background``: texts giving the collection statistics (default: the collection, see :meth:`prepare`)."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, stats: str = "collection",
                 background: Sequence[str] | None = None) -> None:
        if stats not in BM25_STATS:
            raise InputError("unknown BM25 statistics", column="stats", value=stats, allowed=", ".join(BM25_STATS))
        self.k1 = k1
        self.b = b
        self.stats = stats
        self.background = list(background) if background is not None else None
        super().__init__()

    @property
    def identity(self) -> str:
        source = "pool-stats" if self.stats == "pool" else (
            "background-stats" if self.background is not None else "collection-stats")
        return f"bm25(k1={self.k1:g},b={self.b:g},{source})"

    def _corpus(self, documents: Sequence[Sequence[str]]) -> tuple[list[str], bool]:
        """The statistics corpus for ``stats="collection"`` (a ``background`` wins over the prepared collection;
        ``stats="pool"`` ignores both) and whether it holds the judged documents."""
        if self.background is not None:
            return self.background, False
        return self.statistics_corpus(documents), True

    def _matrices(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
                  answers: Sequence[Sequence[str]]) -> tuple[sp.csr_matrix, np.ndarray, list[int], list[int], int]:
        """Token counts of background + queries + documents + answers; row offsets of each block."""
        corpus = self._corpus(documents)[0] if self.stats == "collection" else []
        texts: list[str] = [*corpus, *queries]
        doc_start, ans_start = [], []
        for docs, ans in zip(documents, answers, strict=True):
            doc_start.append(len(texts))
            texts.extend(docs)
            ans_start.append(len(texts))
            texts.extend(ans)
        counts, _ = _tokenize(texts)
        return counts, np.asarray(counts.sum(axis=1)).ravel(), doc_start, ans_start, len(corpus)

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        from stableval.progress import progress_bar

        answers = answers if answers is not None else [[] for _ in queries]
        counts_rows, lengths, doc_start, ans_start, n_bg = self._matrices(queries, documents, answers)
        counts = counts_rows.tocsc()
        if self.stats == "collection":
            bg_df = np.asarray((counts_rows[:n_bg] > 0).sum(axis=0)).ravel()
            bg_avgdl = float(lengths[:n_bg].mean()) if n_bg else 1.0
        doc_scores, answer_scores = [], []
        with progress_bar("bm25: scoring", total=len(queries), enabled=progress) as bar:
            for i, (docs, ans) in enumerate(zip(documents, answers, strict=True)):
                row = n_bg + i
                terms = counts_rows.indices[counts_rows.indptr[row]:counts_rows.indptr[row + 1]]
                query_tf = counts_rows.data[counts_rows.indptr[row]:counts_rows.indptr[row + 1]]
                columns = counts[:, terms].tocsr()
                d0, a0 = doc_start[i], ans_start[i]
                pool_tf = columns[d0:d0 + len(docs)].toarray()
                pool_len = lengths[d0:d0 + len(docs)]
                ans_tf = columns[a0:a0 + len(ans)].toarray()
                ans_len = lengths[a0:a0 + len(ans)]
                if self.stats == "pool":
                    doc_scores.append(bm25_scores(query_tf, pool_tf, pool_len, pool_tf, pool_len, k1=self.k1,
                                                  b=self.b))
                    answer_scores.append(bm25_scores(query_tf, pool_tf, pool_len, ans_tf, ans_len, k1=self.k1,
                                                     b=self.b))
                else:
                    idf = lucene_idf(n_bg, bg_df[terms]) * query_tf
                    doc_scores.append(_weighted(idf, bg_avgdl, pool_tf, pool_len, k1=self.k1, b=self.b))
                    answer_scores.append(_weighted(idf, bg_avgdl, ans_tf, ans_len, k1=self.k1, b=self.b))
                bar.advance()
        return doc_scores, answer_scores

    def leave_one_out(self, queries: Sequence[str], documents: Sequence[Sequence[str]], *,
                      progress: bool = False) -> list[np.ndarray]:
        """Per question an (n x n) matrix: row j = scores of every document with document j held out of the
        statistics (N - 1, df and the total length without it), so ``[j, j]`` scores j as a new answer.

        With collection statistics from the collection itself the held-out document is removed from them too
        (when its text is in the prepared corpus); with an explicit ``background`` it is not (it was never part of
        it).
        """
        counts_rows, lengths, doc_start, _, n_bg = self._matrices(queries, documents, [[] for _ in queries])
        counts = counts_rows.tocsc()
        corpus, own = self._corpus(documents)
        in_corpus = set(corpus) if self.stats == "collection" and own else set()
        if self.stats == "collection":
            bg_df = np.asarray((counts_rows[:n_bg] > 0).sum(axis=0)).ravel()
            bg_total = float(lengths[:n_bg].sum())
        out = []
        for i, docs in enumerate(documents):
            row = n_bg + i
            terms = counts_rows.indices[counts_rows.indptr[row]:counts_rows.indptr[row + 1]]
            query_tf = counts_rows.data[counts_rows.indptr[row]:counts_rows.indptr[row + 1]]
            tf = counts[:, terms].tocsr()[doc_start[i]:doc_start[i] + len(docs)].toarray()  # (n, t)
            length = lengths[doc_start[i]:doc_start[i] + len(docs)].astype(float)
            if self.stats == "pool":
                n_stats, df, total = float(len(docs)), (tf > 0).sum(axis=0), float(length.sum())
            else:
                n_stats, df, total = float(n_bg), bg_df[terms], bg_total
            drop = np.ones(len(docs)) if self.stats == "pool" else np.fromiter(
                (t in in_corpus for t in docs), dtype=float, count=len(docs))      # j in the statistics?
            n_j = n_stats - drop                                                     # (n_j,)
            df_j = df[None, :] - drop[:, None] * (tf > 0)                            # (n_j, t)
            avgdl_j = (total - drop * length) / np.maximum(n_j, 1.0)                 # (n_j,)
            avgdl_j = np.where(avgdl_j > 0, avgdl_j, 1.0)
            idf_j = lucene_idf(n_j[:, None], df_j) * query_tf                        # (n_j, t)
            norm = self.k1 * (1 - self.b + self.b * length[None, :] / avgdl_j[:, None])  # (n_j, n_i)
            frac = tf[None, :, :] / (tf[None, :, :] + norm[:, :, None])               # (n_j, n_i, t)
            out.append(np.einsum("jit,jt->ji", frac, idf_j))
        return out
