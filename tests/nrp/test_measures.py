"""Ranking effectiveness measures against ir_measures, ties included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.nrp.measures import evaluate_run


# ----------------------------------------------------------------------------------- measures vs ir-measures
def test_measures_match_ir_measures_with_ties() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, nDCG

    rng = np.random.default_rng(7)
    qrels, run = [], []
    for q in range(25):
        for d in range(int(rng.integers(3, 25))):
            qrels.append((str(q), f"d{d}", int(rng.integers(0, 4))))
            run.append((str(q), f"d{d}", float(rng.integers(0, 5))))  # many ties: trec_eval's docno order
    mine = evaluate_run(pd.DataFrame(qrels, columns=["qid", "docno", "grade"]),
                        pd.DataFrame(run, columns=["qid", "docno", "score"]), min_relevant=2).set_index("qid")
    measures = {"ndcg@10": nDCG @ 10, "ndcg": nDCG, "ap": AP(rel=2), "p@10": P(rel=2) @ 10, "rr": RR(rel=2)}
    reference = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        list(measures.values()), [ir_measures.Qrel(*r) for r in qrels], [ir_measures.ScoredDoc(*r) for r in run])}
    for column, measure in measures.items():
        expected = [reference[(q, str(measure))] for q in mine.index]
        np.testing.assert_allclose(mine[column].to_numpy(), expected, atol=1e-12, err_msg=column)
