"""Rankers that score texts against a question: one module per ranker, one shared interface, one registry.

Every ranker scores, per question, the judged documents and (optionally) the generated answers. Pointwise
rankers (all of these) score each text on its own, so the documents are scored **once per question** and each
answer alone; inserting the answer into the document list and re-ranking gives the same ranks for far less work.
BM25 keeps its document statistics (IDF, average length) from the collection's judged documents (or the
question's pool), never from the answers, so it is pointwise too.

:data:`REGISTRY` (:mod:`~stableval.nrp.rankers.registry`) declares each ranker once (:class:`RankerSpec`: name,
class, title, summary, extra, options); ``--ranker`` and its help, the flags of the rankers' own options,
:data:`RANKERS`, :func:`make_ranker` and the ranker table of docs/nrp.md (:func:`ranker_table`) are derived from it.
To add a ranker: write its module here (a :class:`Ranker` or :class:`PointwiseRanker` subclass, from
:mod:`~stableval.nrp.rankers.base`) and add one :class:`RankerSpec` to :data:`REGISTRY`. Names load lazily, so the
command line reads the registry without numpy.

>>> ranker = make_ranker("bm25")
>>> docs, answers = ranker.score(["flu fever"], [["flu gives fever", "tax forms"]], [["fever"]])
>>> bool(docs[0][0] > docs[0][1] == 0.0), bool(answers[0][0] > 0)
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.nrp.rankers.base import (
        CollectionStatsRanker as CollectionStatsRanker,
        PointwiseRanker as PointwiseRanker,
        Ranker as Ranker,
        check_model_path as check_model_path,
        require_neural as require_neural,
    )
    from stableval.nrp.rankers.cache import ScoreCache as ScoreCache
    from stableval.nrp.rankers.registry import (
        RANKERS as RANKERS,
        REGISTRY as REGISTRY,
        RankerSpec as RankerSpec,
        make_ranker as make_ranker,
        ranker_table as ranker_table,
    )


__getattr__, __dir__, __all__ = lazy_package(globals())
