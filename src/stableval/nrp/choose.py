"""Choosing the NRP ranker on evidence (``--ranker best``; Heineking et al. 2024, section 2, step 2: "rank the set
using the best model").

Which evidence: NRP is meant to agree with human judgments of **answers**, so where a set of graded answers is
given, each candidate is judged by how well its NRP agrees with their grades — ``nrp validate``'s AUC of
``nrp:R`` (correct = grade >= ``correct`` against the rest), with its Spearman and Kendall tau-b alongside. Only
without graded answers is the ranker judged by how well it ranks the judged documents: nDCG@10 averaged over every
quality dimension of the collection (relevance, and credibility and readability where judged). The two can
disagree: on LiveQA with unseen MEDIQA answers, the bi-encoder ranks documents best (nDCG@10) but its NRP agrees
worst with the expert grades.

>>> import pandas as pd
>>> from stableval.nrp.testcollection import collection_from_frames
>>> from stableval.nrp.rankers import make_ranker
>>> c = collection_from_frames(pd.DataFrame({"qid": ["1"], "query": ["flu fever"]}),
...     pd.DataFrame({"docno": list("abc"), "text": ["flu fever", "flu", "tax forms"]}),
...     pd.DataFrame({"qid": ["1"] * 3, "docno": list("abc"), "grade": [2, 1, 0]}))
>>> choice = choose_ranker(c, {"bm25": make_ranker("bm25"), "tfidf": make_ranker("tfidf")})
>>> choice.name, choice.measure, choice.evidence.columns.tolist()
('bm25', 'ndcg@10', ['ranker', 'ndcg@10 relevance', 'mean', 'chosen'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stableval.nrp.measures import select_ranker
from stableval.nrp.rankers import Ranker
from stableval.nrp.testcollection import TestCollection

__all__ = ["RankerChoice", "choose_ranker"]


@dataclass(frozen=True)
class RankerChoice:
    """The chosen ranker, the measure it was chosen by (``auc`` or ``ndcg@10``) and the evidence: one row per
    candidate with its measure(s) and ``chosen``."""

    name: str
    measure: str
    evidence: pd.DataFrame

    def note(self) -> str:
        """One line for a command's notes: the choice and every candidate's value.

        >>> RankerChoice("dph", "auc", pd.DataFrame({"ranker": ["bm25", "dph"], "auc": [0.7, 0.8]})).note()
        '--ranker best: dph (AUC of its NRP against the graded answers: bm25 0.700, dph 0.800)'
        """
        if self.measure == "auc":
            what, column = "AUC of its NRP against the graded answers", "auc"
        else:
            dimensions = [c.removeprefix("ndcg@10 ") for c in self.evidence.columns if c.startswith("ndcg@10 ")]
            what, column = f"nDCG@10 averaged over {', '.join(dimensions)}", "mean"
        values = ", ".join(f"{ranker} {value:.3f}" for ranker, value in zip(self.evidence["ranker"],
                                                                            self.evidence[column], strict=True))
        return f"--ranker best: {self.name} ({what}: {values})"


def choose_ranker(collection: TestCollection, rankers: Mapping[str, Ranker], *, graded: pd.DataFrame | None = None,
                  grade: str = "grade", correct: float = 2.0, scale: str = "gain", dimension: str = "relevance",
                  n: str = "documents", ties: str = "mid", unknown: str = "error", exclude_copies: bool = False,
                  file: str | None = None, notes: list[str] | None = None, progress: bool = False) -> RankerChoice:
    """The candidate whose NRP agrees best with ``graded`` answers (AUC of ``nrp:R``, as ``nrp validate``;
    ``grade``, ``correct``, ``scale``, ``dimension``, ``unknown`` and ``exclude_copies`` as there), or without
    them the one with the highest nDCG@10 averaged over every quality dimension; ties go to the first given."""
    from stableval.nrp.validate import agreement_with_grades, answer_signals

    if graded is None:
        name, evidence = select_ranker(collection, rankers, progress=progress)
        return RankerChoice(name, "ndcg@10", evidence.assign(chosen=evidence["ranker"] == name))
    frame = answer_signals(collection, graded, rankers, grade=grade, dimension=dimension, n=n, ties=ties,
                           progress=progress, unknown=unknown, exclude_copies=exclude_copies, file=file, notes=notes,
                           scale=scale)
    table = agreement_with_grades(frame, [f"nrp:{name}" for name in rankers], correct=correct, bootstrap=0)
    wide = table.pivot(index="signal", columns="measure", values="value").reindex([f"nrp:{r}" for r in rankers])
    evidence = pd.DataFrame({"ranker": list(rankers), "auc": wide["auc"].to_numpy(),
                             "spearman": wide["spearman"].to_numpy(), "tau_b": wide["tau_b"].to_numpy(),
                             "answers": len(frame)})
    name = str(evidence["ranker"].iloc[int(np.nanargmax(evidence["auc"].to_numpy()))])
    return RankerChoice(name, "auc", evidence.assign(chosen=evidence["ranker"] == name))
