"""NRP: evaluate generated answers by ranking them among human-judged documents (Heineking et al. 2024).

Modules: :mod:`~stableval.nrp.collection` (test collections and answers), :mod:`~stableval.nrp.score` (the NRP
score, its summary and bootstrap), :mod:`~stableval.nrp.rankers` (one module per ranker, a registry),
:mod:`~stableval.nrp.measures` (trec_eval measures to choose the ranker), :mod:`~stableval.nrp.rank_agreement`
(expert vs system rankings: tau-b, Spearman, AO, RBO) and :mod:`~stableval.nrp.label_studio` (expert exports).
Figures: :mod:`stableval.report.figures.nrp`.

>>> from stableval.nrp import TIE_POLICIES, N_CHOICES
>>> TIE_POLICIES, N_CHOICES
(('optimistic', 'mid', 'pessimistic'), ('documents', 'list'))
"""

from stableval.nrp.collection import (
    TestCollection,
    answers_from_frame,
    collection_from_frames,
    read_answers,
    read_collection,
    read_liveqa,
    write_collection,
)
from stableval.nrp.rankers import RANKERS, make_ranker
from stableval.nrp.score import (
    N_CHOICES,
    TIE_POLICIES,
    NRPResult,
    normalized_rank_position,
    rank_counts,
    read_webis_rank_files,
    score_answers,
    summarize,
)

__all__ = [
    "N_CHOICES",
    "RANKERS",
    "TIE_POLICIES",
    "NRPResult",
    "TestCollection",
    "answers_from_frame",
    "collection_from_frames",
    "make_ranker",
    "normalized_rank_position",
    "rank_counts",
    "read_answers",
    "read_collection",
    "read_liveqa",
    "read_webis_rank_files",
    "score_answers",
    "summarize",
    "write_collection",
]
