"""NRP validation against human grades: weighted bootstrap statistics vs scipy on expanded samples, leave-one-out,
NRP among relevant documents, and the ``nrp validate`` command."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp import collection_from_frames, score_answers, write_collection
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.validate import (
    _pairwise_tau,
    _weighted_pearson,
    agreement_with_grades,
    answer_signals,
    leave_one_out_signals,
    weighted_midranks,
)

WORDS = np.array("flu fever cough heart pain drug dose sleep diet skin blood sugar insulin tax car tree".split())


def _collection(seed: int = 0, questions: int = 5, docs: int = 10):
    rng = np.random.default_rng(seed)
    queries = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                            "query": [" ".join(rng.choice(WORDS[:8], 2, replace=False)) for _ in range(questions)]})
    texts, grades = [], []
    for i in range(questions * docs):  # graded documents: more query words, higher grade
        query = queries["query"].iloc[i // docs].split()
        hits = int(rng.integers(0, 4))
        texts.append(" ".join([*rng.choice(query, hits), *rng.choice(WORDS[8:], int(rng.integers(2, 8)))]))
        grades.append(min(hits, 3))
    documents = pd.DataFrame({"docno": [f"d{i:03d}" for i in range(questions * docs)], "text": texts})
    judgments = pd.DataFrame({"qid": np.repeat(queries["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": grades})
    return collection_from_frames(queries, documents, judgments)


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
    collection = _collection()
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


def test_nrp_among_relevant_documents_by_hand() -> None:
    collection = collection_from_frames(
        pd.DataFrame({"qid": ["1"], "query": ["flu fever"]}),
        pd.DataFrame({"docno": list("abcd"), "text": ["flu fever flu", "flu fever", "flu", "tax"]}),
        pd.DataFrame({"qid": ["1"] * 4, "docno": list("abcd"), "grade": [0, 2, 2, 0]}))
    answers = pd.DataFrame({"qid": ["1"], "model": ["m"], "text": ["flu fever fever"]})
    result = score_answers(collection, answers, BM25Ranker(stats="pool"), bootstrap=0, relevant=2).answers.iloc[0]
    docs, (answer,) = BM25Ranker(stats="pool").score(["flu fever"], [["flu fever flu", "flu fever", "flu", "tax"]],
                                                      [["flu fever fever"]])
    above_all = int((docs[0] > answer[0]).sum())
    above_relevant = int((docs[0][[1, 2]] > answer[0]).sum())
    assert result["nrp"] == pytest.approx(1 - above_all / 4)
    assert result["n_relevant"] == 2 and result["nrp_relevant"] == pytest.approx(1 - above_relevant / 2)


def test_answer_signals_and_cli(tmp_path) -> None:
    collection = _collection(3)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool().merge(collection.qrels("relevance"), on=["qid", "docno"])
    answers = pool.assign(model="m", answer_id=pool["docno"])[["qid", "model", "answer_id", "text", "grade"]]
    answers.to_csv(tmp_path / "graded.csv", index=False)
    frame = answer_signals(collection, answers, {"bm25": BM25Ranker()}, relevant=2)
    assert {"nrp:bm25", "score:bm25", "nrp-rel:bm25", "combo:bm25", "length", "grade"} <= set(frame.columns)
    # combined: the answer's percentile among every judged document's score against its own question
    docs, _ = BM25Ranker().score(collection.queries["query"].tolist(),
                                 [pool.loc[pool["qid"] == q, "text"].tolist() for q in collection.queries["qid"]])
    reference = np.concatenate(docs)
    share = np.array([stats.percentileofscore(reference, v, kind="mean") / 100 for v in frame["score:bm25"]])
    np.testing.assert_allclose(frame["combo:bm25"], (frame["nrp:bm25"] + share) / 2)
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "graded.csv"), "-r", "bm25",
                                 "-B", "50", "--format", "json", "--signals-out", str(tmp_path / "s.csv")])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    signals = {r["signal"] for r in payload["rows"]}
    assert signals == {"nrp:bm25", "score:bm25", "nrp-rel:bm25", "combo:bm25", "length"}
    auc = {r["signal"]: r["value"] for r in payload["rows"] if r["measure"] == "auc"}
    assert auc["score:bm25"] > 0.6  # the synthetic grades follow the query words
    assert len(pd.read_csv(tmp_path / "s.csv")) == len(answers)
    result = runner.invoke(app, ["nrp", "validate", str(directory), "-r", "bm25,bm25-pool", "-B", "50",
                                 "--format", "csv"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert set(table["signal"]) >= {"nrp:bm25", "nrp:bm25-pool", "combo:bm25", "length"} and len(table) == 9 * 5
    result = runner.invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "graded.csv"),
                                 "--grade-column", "stars"])
    assert result.exit_code == 1 and "stars" in result.output
    result = runner.invoke(app, ["nrp", "validate", str(directory), "--ties", "best"])
    assert result.exit_code == 2


def test_score_reports_the_absolute_companions(tmp_path) -> None:
    collection = _collection(4, questions=3)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool()
    answers = pool.assign(model=np.where(np.arange(len(pool)) % 2, "odd", "even"))[["qid", "model", "text"]]
    answers.to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "--relevant", "2",
                                      "-B", "0", "--format", "csv", "--answers-out", str(tmp_path / "per.csv")])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(pd.io.common.StringIO(result.stdout)).set_index("model")
    per = pd.read_csv(tmp_path / "per.csv")
    for model in ("odd", "even"):
        rows = per[per["model"] == model]
        assert summary.loc[model, "mean_nrp_relevant"] == pytest.approx(rows["nrp_relevant"].mean())
        assert summary.loc[model, "mean_score"] == pytest.approx(rows["score"].mean())
    assert (per["n_relevant"] < per["n_documents"]).any() and (per["nrp_relevant"] >= 0).all()
