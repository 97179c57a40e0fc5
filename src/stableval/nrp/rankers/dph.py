"""DPH: a parameter-free divergence-from-randomness ranker (Amati 2006; Terrier's ``DPH``).

Amati, "Frequentist and Bayesian approach to information retrieval", ECIR 2006 (the DPH model of the divergence-
from-randomness framework, Amati & van Rijsbergen 2002; the hypergeometric DPH of Amati, Ambrosi, Bianchi, Gaibisso
& Gambosi, "FUB, IASI-CNR and University of Tor Vergata at TREC 2007 Blog Track", TREC 2007), as implemented in
Terrier (``org.terrier.matching.models.DPH``) and PISA. For a query term with frequency ``tf`` in a text of length
``dl``, ``f = tf / dl``, collection frequency ``F`` (all occurrences in the collection), ``N`` documents and mean
length ``avgdl``::

    w(t, d) = qtf * (1 - f)^2 / (tf + 1) * ( tf * log2(tf * avgdl / dl * N / F) + 0.5 * log2(2 pi tf (1 - f)) )

summed over query terms with ``tf > 0`` (``qtf``: occurrences in the query; a text made of the term only, f = 1,
gets 0). N, F and avgdl come from the collection's judged documents (:meth:`DPHRanker.prepare`), never from the
answers; tokens from ``bm25s.tokenize`` as for BM25. Leave-one-out (:meth:`DPHRanker.leave_one_out`) is exact:
the held-out document leaves N, F and the total length (its own term counts and length subtracted).

>>> ranker = DPHRanker()
>>> ranker.prepare(["flu fever cough", "tax forms", "fever rest"])
>>> docs, _ = ranker.score(["flu"], [["flu fever cough", "tax forms"]])
>>> [round(float(s), 4) for s in docs[0]]
[0.5013, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stableval.nrp.rankers.base import CollectionStatsRanker
from stableval.nrp.rankers.bm25 import _tokenize

__all__ = ["DPHRanker", "dph_weights"]


def dph_weights(tf: np.ndarray, dl: np.ndarray, collection_freq: np.ndarray, n_docs: float,
                avgdl: float) -> np.ndarray:
    """DPH weight of each (text, term): ``tf`` (texts x terms), ``dl`` (texts,), ``collection_freq`` (terms,).

    Hand-worked: tf = 1, dl = 3, F = 1, N = 3, avgdl = 7/3: f = 1/3, norm = (2/3)^2 / 2 = 2/9,
    tf * log2(1 * (7/3) / 3 * 3 / 1) = log2(7/3) = 1.222392, 0.5 * log2(2 pi * 2/3) = 1.033267; 2/9 * 2.255659:

    >>> round(float(dph_weights(np.array([[1.0]]), np.array([3.0]), np.array([1.0]), 3, 7 / 3)[0, 0]), 6)
    0.501258
    """
    return _dph(np.asarray(tf, dtype=float), np.asarray(dl, dtype=float)[:, None],
                np.asarray(collection_freq, dtype=float)[None, :], np.asarray(n_docs, dtype=float),
                np.asarray(avgdl, dtype=float))


def _dph(tf: np.ndarray, dl: np.ndarray, collection_freq: np.ndarray, n_docs: np.ndarray,
         avgdl: np.ndarray) -> np.ndarray:
    """The DPH weight elementwise; every argument broadcast against ``tf`` (so N, F and avgdl may vary per row)."""
    f = np.divide(tf, dl, out=np.zeros(np.broadcast_shapes(tf.shape, dl.shape)), where=dl > 0)
    ok = (tf > 0) & (f < 1) & (collection_freq > 0)
    safe_tf = np.where(ok, tf, 1.0)
    safe_dl = np.where(dl > 0, dl, 1.0)
    freq = np.where(collection_freq > 0, collection_freq, 1.0)
    norm = (1 - f) ** 2 / (tf + 1)
    safe_f = np.where(ok, f, 0.0)
    ratio = np.where(ok, safe_tf * avgdl / safe_dl * n_docs / freq, 1.0)
    gain = safe_tf * np.log2(ratio) + 0.5 * np.log2(2 * np.pi * safe_tf * (1 - safe_f))
    return np.asarray(np.where(ok, norm * gain, 0.0), dtype=float)


class DPHRanker(CollectionStatsRanker):
    """DPH (parameter-free) with collection statistics; pointwise."""

    name = "dph"

    @property
    def identity(self) -> str:
        return "dph(collection-stats)"

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        answers = answers if answers is not None else [[] for _ in queries]
        corpus = self.statistics_corpus(documents)
        texts: list[str] = [*corpus, *queries]
        starts = []
        for docs, ans in zip(documents, answers, strict=True):
            starts.append(len(texts))
            texts.extend(docs)
            texts.extend(ans)
        counts = _tokenize(texts)[0]
        lengths = np.asarray(counts.sum(axis=1)).ravel().astype(float)
        n_bg = len(corpus)
        collection_freq = np.asarray(counts[:n_bg].sum(axis=0)).ravel()
        avgdl = float(lengths[:n_bg].mean()) if n_bg else 1.0
        columns = counts.tocsc()
        doc_scores, answer_scores = [], []
        for i, (docs, ans) in enumerate(zip(documents, answers, strict=True)):
            row = n_bg + i
            terms = counts.indices[counts.indptr[row]:counts.indptr[row + 1]]
            qtf = counts.data[counts.indptr[row]:counts.indptr[row + 1]]
            block = slice(starts[i], starts[i] + len(docs) + len(ans))
            tf = columns[:, terms].tocsr()[block].toarray()
            scores = dph_weights(tf, lengths[block], collection_freq[terms], float(n_bg), avgdl) @ qtf
            doc_scores.append(scores[:len(docs)])
            answer_scores.append(scores[len(docs):])
        return doc_scores, answer_scores

    def leave_one_out(self, queries: Sequence[str], documents: Sequence[Sequence[str]], *,
                      progress: bool = False) -> list[np.ndarray]:
        """Per question an (n x n) matrix: row j = DPH of every document with document j held out of N, the
        collection frequencies F and the total length (when it is in the statistics corpus), so ``[j, j]`` scores
        j as a new answer; vectorised over (j, i, query term).

        >>> loo = DPHRanker().leave_one_out(["flu"], [["flu fever cough", "tax forms", "flu rest"]])[0]
        >>> ranker = DPHRanker()
        >>> ranker.prepare(["tax forms", "flu rest"])  # the statistics without document 0
        >>> docs, (own,) = ranker.score(["flu"], [["tax forms", "flu rest"]], [["flu fever cough"]])
        >>> bool(np.allclose(loo[0], [own[0], *docs[0]]))
        True
        """
        corpus = self.statistics_corpus(documents)
        in_corpus = set(corpus)
        texts = [*corpus, *queries, *(t for docs in documents for t in docs)]
        counts = _tokenize(texts)[0]
        lengths = np.asarray(counts.sum(axis=1)).ravel().astype(float)
        n_bg = len(corpus)
        collection_freq = np.asarray(counts[:n_bg].sum(axis=0)).ravel()
        total = float(lengths[:n_bg].sum())
        columns = counts.tocsc()
        out = []
        start = n_bg + len(queries)
        for i, docs in enumerate(documents):
            row = n_bg + i
            terms = counts.indices[counts.indptr[row]:counts.indptr[row + 1]]
            qtf = counts.data[counts.indptr[row]:counts.indptr[row + 1]]
            block = slice(start, start + len(docs))
            tf = columns[:, terms].tocsr()[block].toarray()                           # (n, t)
            dl = lengths[block]                                                        # (n,)
            drop = np.fromiter((t in in_corpus for t in docs), dtype=float, count=len(docs))
            n_j = n_bg - drop                                                          # (n_j,)
            freq_j = collection_freq[terms][None, :] - drop[:, None] * tf              # (n_j, t)
            avgdl_j = np.divide(total - drop * dl, n_j, out=np.ones(len(docs)), where=n_j > 0)
            weights = _dph(tf[None, :, :], dl[None, :, None], freq_j[:, None, :], n_j[:, None, None],
                           avgdl_j[:, None, None])                                     # (n_j, n_i, t)
            out.append(weights @ qtf)
            start += len(docs)
        return out
