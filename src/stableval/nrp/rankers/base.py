"""What every ranker shares: the :class:`Ranker` interface, collection-statistics and pointwise rankers (with
their score cache and half-precision refinement), and the checks of a local model directory and the ``neural`` extra.

>>> from stableval.nrp.rankers import make_ranker
>>> ranker = make_ranker("bm25")
>>> isinstance(ranker, CollectionStatsRanker)
True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stableval.errors import InputError
from stableval.nrp.rankers.cache import ScoreCache

__all__ = ["CollectionStatsRanker", "PointwiseRanker", "Ranker", "check_model_path", "require_neural"]


class Ranker(ABC):
    """Scores documents and answers per question; higher is better."""

    name: str = "ranker"

    @property
    def identity(self) -> str:
        """A string naming the model and its parameters (the cache key prefix)."""
        return self.name

    @abstractmethod
    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per question ``i``: scores of ``documents[i]`` and of ``answers[i]`` (empty arrays when no answers)."""

    def prepare(self, corpus: Sequence[str]) -> None:  # noqa: B027 - an optional hook
        """Receive every judged document of the collection before scoring (corpus statistics); most rankers
        ignore it, BM25 with collection statistics takes N, df and avgdl from it."""

    def leave_one_out(self, queries: Sequence[str], documents: Sequence[Sequence[str]], *,
                      progress: bool = False) -> list[np.ndarray]:
        """Per question an (n x n) matrix whose row j scores every document with document j treated as a new
        answer (held out of any statistics); ``[j, j]`` is j's score as an answer. A ranker whose scores do not
        depend on the other documents returns its document scores on every row."""
        doc_scores, _ = self.score(queries, documents, None, progress=progress)
        return [np.tile(s, (len(s), 1)) for s in doc_scores]


class CollectionStatsRanker(Ranker):
    """A lexical ranker whose term statistics (N, document frequencies, lengths) come from a corpus: every judged
    document of the collection when :meth:`prepare` received them, else the documents being ranked."""

    def __init__(self) -> None:
        self._prepared: list[str] | None = None

    def prepare(self, corpus: Sequence[str]) -> None:
        """Take the term statistics from ``corpus`` (every judged document of the collection)."""
        self._prepared = list(corpus)

    def statistics_corpus(self, documents: Sequence[Sequence[str]]) -> list[str]:
        """The texts the statistics come from: the prepared corpus, else the distinct documents of every pool."""
        if self._prepared is not None:
            return self._prepared
        return list(dict.fromkeys(t for docs in documents for t in docs))


class PointwiseRanker(Ranker):
    """A ranker whose score of (query, text) does not depend on the other texts; scores are cached.

    A neural subclass running in half precision (``dtype`` set; :mod:`stableval.nrp.rankers.inference`) keeps
    fp32's order: within each question, texts whose half-precision scores lie within a margin of each other are
    re-scored in fp32 (:meth:`refine`). The margin is :data:`REFINE_FACTOR` times the largest difference between
    half-precision and fp32 scores on a sample of :data:`REFINE_SAMPLE` pairs, measured once per ranker; every
    other pair of texts is then further apart than twice the half-precision error, so their order is fp32's too.
    """

    #: The autocast dtype of a neural subclass (``None``: fp32, nothing to refine).
    dtype: Any = None
    #: Near-ties are texts closer than this many times the largest measured half-precision error.
    REFINE_FACTOR = 4.0
    #: Pairs scored in both precisions to measure that error.
    REFINE_SAMPLE = 64

    def __init__(self, *, cache: ScoreCache | None = None, batch_size: int = 32) -> None:
        self.cache = cache if cache is not None else ScoreCache()
        self.batch_size = batch_size

    @abstractmethod
    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Scores of ``len(texts)`` (query, text) pairs, without the cache."""

    def _fp32_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """:meth:`score_pairs` with half precision switched off."""
        dtype, self.dtype = self.dtype, None
        try:
            return np.asarray(self.score_pairs(queries, texts), dtype=float)
        finally:
            self.dtype = dtype

    def refine_margin(self, queries: Sequence[str], texts: Sequence[str]) -> float:
        """How close two half-precision scores must be to be re-scored in fp32 (measured once, on up to
        :data:`REFINE_SAMPLE` of these pairs spread over them)."""
        margin: float | None = getattr(self, "_refine_margin", None)
        if margin is None:
            pick = np.unique(np.linspace(0, len(texts) - 1, min(len(texts), self.REFINE_SAMPLE)).round().astype(int))
            sample = ([queries[i] for i in pick], [texts[i] for i in pick])
            error = np.abs(np.asarray(self.score_pairs(*sample), dtype=float) - self._fp32_pairs(*sample))
            margin = self.REFINE_FACTOR * float(error.max()) if len(error) else 0.0
            self._refine_margin = margin
        return margin

    def refine(self, queries: Sequence[str], texts: Sequence[str], scores: np.ndarray,
               blocks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``scores`` (half precision; one ``block`` of consecutive pairs per question) with every near-tie
        within a block re-scored in fp32: the indices of the re-scored pairs and their fp32 scores."""
        margin = self.refine_margin(queries, texts)
        near = np.zeros(len(scores), dtype=bool)
        at = 0
        for size in blocks:
            block = scores[at:at + size]
            order = np.argsort(block, kind="stable")
            close = np.flatnonzero(np.diff(block[order]) <= margin)
            near[at + order[close]] = True
            near[at + order[close + 1]] = True
            at += size
        rows = np.flatnonzero(near)
        picked = rows.tolist()
        return rows, self._fp32_pairs([queries[i] for i in picked], [texts[i] for i in picked]) if picked else \
            np.zeros(0)

    def score(self, queries: Sequence[str], documents: Sequence[Sequence[str]],
              answers: Sequence[Sequence[str]] | None = None, *, progress: bool = False,
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        from stableval.progress import progress_bar

        answers = answers if answers is not None else [[] for _ in queries]
        pair_query: list[str] = []
        pair_text: list[str] = []
        sizes = []
        for query, docs, ans in zip(queries, documents, answers, strict=True):
            pair_query.extend([query] * (len(docs) + len(ans)))
            pair_text.extend(docs)
            pair_text.extend(ans)
            sizes.append((len(docs), len(ans)))
        identity = self.identity
        keys = [self.cache.key(identity, q, t) for q, t in zip(pair_query, pair_text, strict=True)]
        values, found = self.cache.get(keys)
        scores = np.full(len(keys), np.nan)
        if found.any():
            scores[found] = np.concatenate([v for v in values if v is not None])
        todo = np.flatnonzero(~found)
        # score each distinct missing pair once
        unique: dict[str, int] = {}
        for index in todo:
            unique.setdefault(keys[index], int(index))
        first = np.fromiter(unique.values(), dtype=np.int64, count=len(unique))
        computed: dict[str, float] = {}
        step = self.batch_size * 32  # one call of score_pairs: its inputs are length-bucketed together
        with progress_bar(f"{self.name}: scoring", total=len(first), enabled=progress) as bar:
            for start in range(0, len(first), step):
                chunk = first[start:start + step]
                new = np.asarray(self.score_pairs([pair_query[i] for i in chunk], [pair_text[i] for i in chunk]),
                                 dtype=float)
                chunk_keys = [keys[i] for i in chunk]
                self.cache.put(chunk_keys, list(new[:, None]))
                computed.update(zip(chunk_keys, new.tolist(), strict=True))
                bar.advance(len(chunk))
        if len(todo):
            scores[todo] = [computed[keys[i]] for i in todo]
        if self.dtype is not None and len(scores):  # half precision: near-ties re-scored in fp32
            rows, exact = self.refine(pair_query, pair_text, scores, [d + a for d, a in sizes])
            scores[rows] = exact
            self.cache.put([keys[i] for i in rows], list(exact[:, None]))
        return _split(scores, sizes)


def _split(scores: np.ndarray, sizes: Sequence[tuple[int, int]]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    doc_scores, answer_scores = [], []
    at = 0
    for n_docs, n_answers in sizes:
        doc_scores.append(scores[at:at + n_docs])
        answer_scores.append(scores[at + n_docs:at + n_docs + n_answers])
        at += n_docs + n_answers
    return doc_scores, answer_scores


def check_model_path(model_path: str | Path | None, ranker: str, *, files: Sequence[str] = ("config.json",)) -> Path:
    """The local model directory, or an InputError saying exactly what to pass (never a hub download)."""
    if model_path is None:
        raise InputError(f"the {ranker} ranker needs a local model directory", options={"model_path": "DIR"},
                         allowed=f"{{model_path}}, a directory saved with save_pretrained() holding "
                                 f"{', '.join(files)}, the weights and the tokenizer (no download is attempted)")
    path = Path(model_path)
    missing = [name for name in files if not (path / name).is_file()]
    if not path.is_dir() or missing:
        raise InputError(f"{ranker} model directory is missing {', '.join(missing) or 'entirely'}", file=str(path),
                         option="model_path",
                         allowed="a local directory saved with save_pretrained() (config.json, weights, tokenizer)")
    return path


def require_neural(what: str, *modules: str) -> None:
    """Raise a clear error when the ``neural`` extra (torch, transformers and ``modules``) is not installed."""
    import importlib.util

    for module in ("torch", "transformers", *modules):
        if importlib.util.find_spec(module) is None:
            raise InputError(f"the {what} ranker needs the optional 'neural' extra ({module} is not installed)",
                             allowed="pip install 'stableval[neural]'")
