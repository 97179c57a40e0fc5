"""Rankers that score texts against a question: one module per ranker, one shared interface.

Every ranker scores, per question, the judged documents and (optionally) the generated answers. Pointwise
rankers (all of these) score each text on its own, so the documents are scored **once per question** and each
answer alone; inserting the answer into the document list and re-ranking gives the same ranks for far less work.
BM25 keeps its document statistics (IDF, average length) from the collection's judged documents (or the
question's pool), never from the answers, so it is pointwise too.

===============  ==========================================================  =====================
name             model                                                       needs
===============  ==========================================================  =====================
``bm25``         BM25 (Lucene variant), collection-wide statistics            nothing (default)
``bm25-pool``    BM25 with statistics from the question's judged pool only     nothing
``tfidf``        TF-IDF cosine, collection idf (Salton & Buckley 1988)        nothing
``dph``          DPH divergence from randomness (Amati 2006), parameter-free  nothing
``biencoder``    all-MiniLM-L6-v2 bi-encoder, cosine similarity              extra ``neural``
``cross-encoder`` a local cross-encoder directory (``model_path``)            extra ``neural``
``monot5``       a local monoT5 directory (``model_path``)                   extra ``neural``
``duot5``        duoT5 pairwise re-ranking of a first stage's top k           extra ``neural``
===============  ==========================================================  =====================

To add a ranker: write its module here (a :class:`Ranker` or :class:`PointwiseRanker` subclass) and add one
:class:`RankerSpec` to :data:`REGISTRY`; ``--ranker``, :data:`RANKERS` and :func:`make_ranker` follow.

>>> [(spec.name, spec.extra) for spec in REGISTRY.values()]  # doctest: +NORMALIZE_WHITESPACE
[('bm25', None), ('bm25-pool', None), ('tfidf', None), ('dph', None), ('biencoder', 'neural'),
 ('cross-encoder', 'neural'), ('monot5', 'neural'), ('duot5', 'neural')]
>>> ranker = make_ranker("bm25")
>>> docs, answers = ranker.score(["flu fever"], [["flu gives fever", "tax forms"]], [["fever"]])
>>> bool(docs[0][0] > docs[0][1] == 0.0), bool(answers[0][0] > 0)
(True, True)
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stableval.errors import InputError
from stableval.nrp.rankers.cache import ScoreCache

__all__ = ["RANKERS", "REGISTRY", "CollectionStatsRanker", "PointwiseRanker", "Ranker", "RankerSpec", "ScoreCache",
           "make_ranker"]


@dataclass(frozen=True)
class RankerSpec:
    """One ranker: its ``--ranker`` name, the class as ``"module:Class"`` (imported only when built), and the
    optional extra it needs (``neural``: it takes the model settings ``model_path, device, batch_size,
    max_length, cache``; ``None``: it takes the ranker's own keyword options instead); ``preset``: keyword
    options fixed by this name (e.g. ``bm25-pool`` is BM25 with ``stats="pool"``)."""

    name: str
    factory: str
    extra: str | None = None
    preset: tuple[tuple[str, Any], ...] = ()

    def build(self, **settings: Any) -> Ranker:
        """Import the class and construct it with ``preset`` and ``settings`` (``settings`` win)."""
        module, _, name = self.factory.partition(":")
        ranker: Ranker = getattr(importlib.import_module(module), name)(**{**dict(self.preset), **settings})
        ranker.name = self.name
        return ranker


#: Every ranker, by name, in ``--help`` order (the first is the default).
REGISTRY: dict[str, RankerSpec] = {spec.name: spec for spec in (
    RankerSpec("bm25", "stableval.nrp.rankers.bm25:BM25Ranker", preset=(("stats", "collection"),)),
    RankerSpec("bm25-pool", "stableval.nrp.rankers.bm25:BM25Ranker", preset=(("stats", "pool"),)),
    RankerSpec("tfidf", "stableval.nrp.rankers.tfidf:TfidfRanker"),
    RankerSpec("dph", "stableval.nrp.rankers.dph:DPHRanker"),
    RankerSpec("biencoder", "stableval.nrp.rankers.biencoder:BiEncoderRanker", extra="neural"),
    RankerSpec("cross-encoder", "stableval.nrp.rankers.cross_encoder:CrossEncoderRanker", extra="neural"),
    RankerSpec("monot5", "stableval.nrp.rankers.monot5:MonoT5Ranker", extra="neural"),
    RankerSpec("duot5", "stableval.nrp.rankers.duot5:DuoT5Ranker", extra="neural"),
)}

#: Ranker names accepted by :func:`make_ranker` and ``--ranker``.
RANKERS = tuple(REGISTRY)


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
    """A ranker whose score of (query, text) does not depend on the other texts; scores are cached."""

    def __init__(self, *, cache: ScoreCache | None = None, batch_size: int = 32) -> None:
        self.cache = cache if cache is not None else ScoreCache()
        self.batch_size = batch_size

    @abstractmethod
    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """Scores of ``len(texts)`` (query, text) pairs, without the cache."""

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
        keys = [self.cache.key(self.identity, q, t) for q, t in zip(pair_query, pair_text, strict=True)]
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
        with progress_bar(f"{self.name}: scoring", total=len(first), enabled=progress) as bar:
            for start in range(0, len(first), self.batch_size * 8):
                chunk = first[start:start + self.batch_size * 8]
                new = np.asarray(self.score_pairs([pair_query[i] for i in chunk], [pair_text[i] for i in chunk]),
                                 dtype=float)
                chunk_keys = [keys[i] for i in chunk]
                self.cache.put(chunk_keys, list(new[:, None]))
                computed.update(zip(chunk_keys, new.tolist(), strict=True))
                bar.advance(len(chunk))
        if len(todo):
            scores[todo] = [computed[keys[i]] for i in todo]
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


def require_neural(what: str) -> None:
    """Raise a clear error when the ``neural`` extra is not installed."""
    import importlib.util

    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise InputError(f"the {what} ranker needs the optional 'neural' extra ({module} is not installed)",
                             allowed="pip install 'stableval[neural]'")


def make_ranker(name: str, *, model_path: str | Path | None = None, device: str = "cpu", batch_size: int = 32,
                 max_length: int | None = None, cache: ScoreCache | None = None, **options: Any) -> Ranker:
    """Build a ranker by name (see :data:`REGISTRY`): a neural ranker gets the model settings (and ``options``,
    e.g. duoT5's ``k`` and ``first_stage``), any other its own ``options`` (e.g. BM25's ``k1`` and ``b``).
    ``max_length=None``: the model's own training length (the bi-encoder's ``sentence_bert_config.json``, 256 for
    MiniLM; 512 for cross-encoders, monoT5 and duoT5)."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise InputError("unknown ranker", column="--ranker", value=name, allowed=", ".join(RANKERS))
    if spec.extra == "neural":
        settings: dict[str, Any] = {"max_length": max_length} if max_length is not None else {}
        return spec.build(model_path=model_path, device=device, batch_size=batch_size, cache=cache, **settings,
                          **options)
    return spec.build(**options)
