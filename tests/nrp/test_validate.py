"""NRP validation against human grades: weighted bootstrap statistics vs scipy on expanded samples, leave-one-out,
and skipped rows (copies of judged documents, unknown questions) that keep the grades aligned."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nrp_data import graded_answers, graded_collection, with_intruders
from stableval.errors import InputError
from stableval.nrp import collection_from_frames, score_answers
from stableval.nrp.leakage import find_copies
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.validate import (
    _pairwise_tau,
    _weighted_pearson,
    agreement_with_grades,
    answer_signals,
    leave_one_out_signals,
    weighted_midranks,
)


def test_weighted_statistics_equal_scipy_on_the_expanded_sample() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 40).astype(float)  # many ties
    y = np.round(x + rng.normal(0, 1.5, 40))
    w = rng.integers(0, 4, (3, 40)).astype(float)
    ranks_x, ranks_y = weighted_midranks(x, w), weighted_midranks(y, w)
    rho = _weighted_pearson(ranks_x, ranks_y, w)
    tau = _pairwise_tau(x, y, w)
    for b in range(3):
        ex, ey = np.repeat(x, w[b].astype(int)), np.repeat(y, w[b].astype(int))
        expanded = stats.rankdata(ex)
        np.testing.assert_allclose(np.repeat(ranks_x[b], w[b].astype(int)), expanded)
        assert rho[b] == pytest.approx(stats.spearmanr(ex, ey).statistic, rel=1e-10)
        assert tau[b] == pytest.approx(stats.kendalltau(ex, ey).statistic, rel=1e-5)


def test_agreement_point_values_equal_scipy() -> None:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"qid": np.repeat([f"q{i}" for i in range(8)], 6), "grade": rng.integers(0, 4, 48)})
    frame["signal"] = frame["grade"] + rng.normal(0, 1.2, 48)
    frame["noise"] = rng.normal(0, 1, 48)
    table = agreement_with_grades(frame, ["signal", "noise"], correct=2, bootstrap=300).set_index(
        ["signal", "measure"])
    positive = frame["grade"] >= 2
    u = stats.mannwhitneyu(frame.loc[positive, "signal"], frame.loc[~positive, "signal"]).statistic
    assert table.loc[("signal", "auc"), "value"] == pytest.approx(u / (positive.sum() * (~positive).sum()))
    assert table.loc[("signal", "spearman"), "value"] == pytest.approx(
        stats.spearmanr(frame["signal"], frame["grade"]).statistic)
    assert table.loc[("signal", "tau_b"), "value"] == pytest.approx(
        stats.kendalltau(frame["signal"], frame["grade"]).statistic)
    per_q = [stats.spearmanr(g["signal"], g["grade"]).statistic for _, g in frame.groupby("qid")]
    assert table.loc[("signal", "spearman_q"), "value"] == pytest.approx(np.mean(per_q))
    row = table.loc[("signal", "auc")]
    assert row["ci_low"] < row["value"] < row["ci_high"] and row["diff"] == 0
    # the noise is worse than the signal, paired: its difference interval lies below 0
    noise = table.loc[("noise", "spearman")]
    assert noise["diff_high"] < 0 and noise["diff"] == pytest.approx(
        noise["value"] - table.loc[("signal", "spearman"), "value"])
    assert int(table["questions"].iloc[0]) == 8


def test_agreement_rejects_bad_input() -> None:
    frame = pd.DataFrame({"qid": ["a", "a"], "grade": [1, 1], "s": [0.1, 0.2]})
    with pytest.raises(InputError, match="every answer is correct"):
        agreement_with_grades(frame, ["s"], correct=1)
    with pytest.raises(InputError, match=r"reference.*'t'"):
        agreement_with_grades(frame.assign(grade=[0, 1]), ["s"], reference="t")
    with pytest.raises(InputError, match=r"row 2.*grade"):
        agreement_with_grades(frame.assign(grade=[0, "x"]), ["s"])


def test_leave_one_out_equals_scoring_each_document_as_an_answer() -> None:
    collection = graded_collection()
    frame = leave_one_out_signals(collection, {"bm25": BM25Ranker(stats="pool")}, relevant=2, ties="mid")
    assert len(frame) == len(collection.pool())
    pool = collection.pool().merge(collection.qrels("relevance"), on=["qid", "docno"])
    for row in frame.rename(columns=lambda c: c.replace(":", "_").replace("-", "_")).sample(
            6, random_state=0).itertuples():
        rest = pool[pool["docno"] != row.docno]
        others = collection_from_frames(collection.queries, collection.documents, rest[["qid", "docno", "grade"]])
        text = pool.loc[pool["docno"] == row.docno, "text"].iloc[0]
        answer = pd.DataFrame({"qid": [row.qid], "model": ["m"], "text": [text]})
        scored = score_answers(others, answer, BM25Ranker(stats="pool"), bootstrap=0, relevant=2).answers.iloc[0]
        assert row.nrp_bm25 == pytest.approx(scored["nrp"])  # nrp:bm25
        assert row.score_bm25 == pytest.approx(scored["score"])  # score:bm25
        assert row.nrp_rel_bm25 == pytest.approx(scored["nrp_relevant"])  # nrp-rel:bm25
    assert list(frame.columns) == ["qid", "docno", "grade", "length", "nrp:bm25", "score:bm25", "nrp-rel:bm25",
                                   "combo:bm25"]
    # combined: the mean of NRP and the share of the other held-out documents' scores below (ties 1/2)
    scores = frame["score:bm25"].to_numpy()
    for j in (0, 7, 23):
        others = np.delete(scores, j)
        share = stats.percentileofscore(others, scores[j], kind="mean") / 100
        assert frame["combo:bm25"].iloc[j] == pytest.approx((frame["nrp:bm25"].iloc[j] + share) / 2)


def test_skipped_rows_keep_the_grades_aligned() -> None:
    collection = graded_collection(5)
    clean = graded_answers(collection)
    assert find_copies(collection, clean).empty
    mixed = with_intruders(collection, clean)
    notes: list[str] = []
    got = answer_signals(collection, mixed, {"bm25": BM25Ranker()}, relevant=2, unknown="skip",
                         exclude_copies=True, notes=notes)
    want = answer_signals(collection, clean, {"bm25": BM25Ranker()}, relevant=2)
    pd.testing.assert_frame_equal(got, want)
    assert notes[0] == "skipped 2 answer(s) to 1 question(s) not in collection"
    assert notes[1].startswith("warning: 3 answer(s) identical (3)") and "left out" in notes[1]
    with pytest.raises(InputError, match=r"row 20, column 'qid'.*'zz'"):  # without the flag: the file's row
        answer_signals(collection, mixed, {"bm25": BM25Ranker()})
    with pytest.raises(InputError, match="no graded answer left"):  # every row skipped: said, not an empty table
        answer_signals(collection, mixed.iloc[[19, 20]], {"bm25": BM25Ranker()}, unknown="skip")
    with pytest.raises(InputError, match=r"row 7, column 'stars'.*'good'"):
        answer_signals(collection, mixed.rename(columns={"grade": "stars"}).assign(
            stars=lambda f: f["stars"].astype(object).where(f.index != 6, "good")), {}, grade="stars")
