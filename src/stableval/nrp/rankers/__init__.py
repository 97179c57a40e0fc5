"""Rankers that score texts against a question: one module per ranker, one shared interface.

Every ranker scores, per question, the judged documents and (optionally) the generated answers. Pointwise
rankers (all of these) score each text on its own, so the documents are scored **once per question** and each
answer alone; inserting the answer into the document list and re-ranking gives the same ranks for far less work.
BM25 keeps its document statistics (IDF, average length) from the judged pool only, so it is pointwise too.

===============  ==========================================================  =====================
name             model                                                       needs
===============  ==========================================================  =====================
``bm25``         BM25 (Lucene variant) via ``bm25s`` tokenisation            nothing (default)
``biencoder``    all-MiniLM-L6-v2 bi-encoder, cosine similarity              extra ``neural``
``cross-encoder`` a local cross-encoder directory (``model_path``)            extra ``neural``
``monot5``       a local monoT5 directory (``model_path``)                   extra ``neural``
===============  ==========================================================  =====================

To add a ranker: write its module here (a :class:`Ranker` or :class:`PointwiseRanker` subclass) and add one
:class:`RankerSpec` to :data:`REGISTRY`; ``--ranker``, :data:`RANKERS` and :func:`make_ranker` follow.

>>> [(spec.name, spec.extra) for spec in REGISTRY.values()]
[('bm25', None), ('biencoder', 'neural'), ('cross-encoder', 'neural'), ('monot5', 'neural')]
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

__all__ = ["RANKERS", "REGISTRY", "PointwiseRanker", "Ranker", "RankerSpec", "ScoreCache", "make_ranker"]


@dataclass(frozen=True)
class RankerSpec:
    """One ranker: its ``--ranker`` name, the class as ``"module:Class"`` (imported only when built), and the
    optional extra it needs (``neural``: it takes the model settings ``model_path, device, batch_size,
    max_length, cache``; ``None``: it takes the ranker's own keyword options instead)."""

    name: str
    factory: str
    extra: str | None = None

    def build(self, **settings: Any) -> Ranker:
        """Import the class and construct it with ``settings``."""
        module, _, name = self.factory.partition(":")
        ranker: Ranker = getattr(importlib.import_module(module), name)(**settings)
        return ranker


#: Every ranker, by name, in ``--help`` order (the first is the default).
REGISTRY: dict[str, RankerSpec] = {spec.name: spec for spec in (
    RankerSpec("bm25", "stableval.nrp.rankers.bm25:BM25Ranker"),
    RankerSpec("biencoder", "stableval.nrp.rankers.biencoder:BiEncoderRanker", extra="neural"),
    RankerSpec("cross-encoder", "stableval.nrp.rankers.cross_encoder:CrossEncoderRanker", extra="neural"),
    RankerSpec("monot5", "stableval.nrp.rankers.monot5:MonoT5Ranker", extra="neural"),
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
        raise InputError(f"the {ranker} ranker needs a local model directory", column="--model-path",
                         allowed=f"--model-path DIR, a directory saved with save_pretrained() holding "
                                 f"{', '.join(files)}, the weights and the tokenizer (no download is attempted)")
    path = Path(model_path)
    missing = [name for name in files if not (path / name).is_file()]
    if not path.is_dir() or missing:
        raise InputError(f"{ranker} model directory is missing {', '.join(missing) or 'entirely'}", file=str(path),
                         column="--model-path",
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
                 max_length: int = 512, cache: ScoreCache | None = None, **options: Any) -> Ranker:
    """Build a ranker by name (see :data:`REGISTRY`): a neural ranker gets the model settings, any other its own
    ``options`` (e.g. BM25's ``k1`` and ``b``)."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise InputError("unknown ranker", column="--ranker", value=name, allowed=", ".join(RANKERS))
    if spec.extra == "neural":
        return spec.build(model_path=model_path, device=device, batch_size=batch_size, max_length=max_length,
                          cache=cache)
    return spec.build(**options)
