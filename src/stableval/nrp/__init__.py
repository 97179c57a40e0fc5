"""NRP: evaluate generated answers by ranking them among human-judged documents (Heineking et al. 2024).

Modules: :mod:`~stableval.nrp.testcollection` (the test collection and its building blocks),
:mod:`~stableval.nrp.collection` (reading collections and answers in any format), :mod:`~stableval.nrp.answers`
(checking generated answers), :mod:`~stableval.nrp.liveqa` (the LiveQA medical data), :mod:`~stableval.nrp.score`
(the NRP score, its summary and bootstrap), :mod:`~stableval.nrp.rankers` (one module per ranker, a registry),
:mod:`~stableval.nrp.measures` (trec_eval measures to choose the ranker), :mod:`~stableval.nrp.rank_agreement`
(expert vs system rankings: tau-b, Spearman, AO, RBO), :mod:`~stableval.nrp.label_studio` (expert exports),
:mod:`~stableval.nrp.compare` (paired comparison of two models), :mod:`~stableval.nrp.choose` (``--ranker best``)
and :mod:`~stableval.nrp.webis` (the paper's data release as shipped).
Figures: :mod:`stableval.report.figures.nrp`. Names load lazily, so the command line reads the ranker registry
without pandas.

>>> from stableval.nrp import TIE_POLICIES, N_CHOICES
>>> TIE_POLICIES, N_CHOICES
(('optimistic', 'mid', 'pessimistic'), ('documents', 'list'))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stableval._lazy import lazy_package

if TYPE_CHECKING:  # pragma: no cover  (the public names, declared once: see stableval._lazy)
    from stableval.nrp.answers import answers_from_frame as answers_from_frame
    from stableval.nrp.choose import choose_ranker as choose_ranker
    from stableval.nrp.collection import (
        read_answers as read_answers,
        read_collection as read_collection,
        write_collection as write_collection,
    )
    from stableval.nrp.compare import compare_models as compare_models
    from stableval.nrp.liveqa import read_liveqa as read_liveqa
    from stableval.nrp.rankers import RANKERS as RANKERS, make_ranker as make_ranker
    from stableval.nrp.score import (
        N_CHOICES as N_CHOICES,
        TIE_POLICIES as TIE_POLICIES,
        NRPResult as NRPResult,
        normalized_rank_position as normalized_rank_position,
        rank_counts as rank_counts,
        read_webis_rank_files as read_webis_rank_files,
        score_answers as score_answers,
        summarize as summarize,
    )
    from stableval.nrp.testcollection import (
        TestCollection as TestCollection,
        collection_from_frames as collection_from_frames,
    )
    from stableval.nrp.webis import read_webis_release as read_webis_release


__getattr__, __dir__, __all__ = lazy_package(globals())
