"""NRP validation against human grades: weighted bootstrap statistics vs scipy on expanded samples, leave-one-out,
and skipped rows (copies of judged documents, unknown questions) that keep the grades aligned."""

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

from nrp_data import (
    graded_answers,
    graded_collection,
    graded_collection as _collection,
    raw_graded_answers,
    with_intruders,
)
from paths import shared_file


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


# ====================================================================================== unseen graded answers
# Issue 31: defects found validating NRP on unseen graded answers (MEDIQA 2019 against the LiveQA collection):
# empty query fields, answer grades on another scale than the collection's gains, ``--correct`` silently moving the
# relevant-documents threshold, and ``nrp-rel`` giving the top value to answers of questions without a relevant
# document.


# ====================================================================================== empty queries
def test_liveqa_questions_without_a_paraphrase_fall_back_to_the_summary() -> None:
    """Before: TQ10, TQ34 and TQ103 had an empty query, so every text scored 0 and each answer got NRP 0.5."""
    from stableval.nrp.liveqa import read_liveqa

    collection = read_liveqa(shared_file("liveqa_medical"), pools="mediqa")
    queries = collection.queries.set_index("qid")["query"]
    assert (queries.str.strip() != "").all()
    assert queries["10"] == "What joint pain medications are indicated in type 2 diabetes patients?"
    assert ("warning: query field paraphrase is empty for 3 question(s) (10, 34, 103): their summary is the query "
            "instead") in collection.notes
    summary = read_liveqa(shared_file("liveqa_medical"), pools="mediqa", query_field="summary")
    assert not any("empty" in note for note in summary.notes)  # every question has a summary


def test_an_empty_query_is_an_error_naming_the_questions() -> None:
    with pytest.raises(InputError, match=r"question text is empty \(2 question\(s\): b, c\)"):
        collection_from_frames(pd.DataFrame({"qid": ["a", "b", "c"], "query": ["flu", " ", None]}),
                               pd.DataFrame({"docno": ["d"], "text": ["flu"]}),
                               pd.DataFrame({"qid": ["a"], "docno": ["d"], "grade": [1]}))


def test_a_question_scored_alike_throughout_is_warned_about() -> None:
    collection = collection_from_frames(
        pd.DataFrame({"qid": ["1", "2"], "query": ["flu fever", "zzz"]}),
        pd.DataFrame({"docno": list("abcd"), "text": ["flu fever", "tax", "flu", "car tree"]}),
        pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": list("abcd"), "grade": [2, 0, 1, 0]}))
    answers = pd.DataFrame({"qid": ["1", "2"], "text": ["flu", "car"]})
    result = score_answers(collection, answers, BM25Ranker(), bootstrap=0)
    assert result.answers.set_index("qid").loc["2", "nrp"] == 0.5  # ties alone
    assert ("warning: 1 question(s) where the ranker scored every document and answer alike (NRP comes from ties "
            "alone): 2") in result.notes


# ====================================================================================== the grade scale
def _raw_collection():
    """A collection read from raw grades 1-4 recoded to gains 0-3 (as LiveQA's)."""
    base = _collection(3)
    raw = base.judgments.assign(grade=base.judgments["grade"] + 1)
    return collection_from_frames(base.queries, base.documents, raw[["qid", "docno", "grade"]],
                                  grade_map={"relevance": {1.0: 0.0, 2.0: 1.0, 3.0: 2.0, 4.0: 3.0}})


def test_raw_answer_grades_are_refused_and_recoded_on_request(tmp_path) -> None:
    """Before: raw 1-4 grades were compared with --correct 2 on the 0-3 gain scale, silently measuring 'related
    or better'."""
    collection = _raw_collection()
    gains = raw_graded_answers(collection)
    raw = gains.assign(grade=gains["grade"] + 1)
    with pytest.raises(InputError, match=r"not on the scale they are read on, the relevance gains of collection "
                                         r"\(0 to 3; .*--answer-grades raw to recode them \(1→0, 2→1, 3→2, 4→3\)"):
        answer_signals(collection, raw, {"bm25": BM25Ranker()}, relevant=2)
    recoded = answer_signals(collection, raw, {"bm25": BM25Ranker()}, relevant=2, scale="raw")
    pd.testing.assert_frame_equal(recoded, answer_signals(collection, gains, {"bm25": BM25Ranker()}, relevant=2))
    with pytest.raises(InputError, match=r"raw relevance scale.*got 0.0"):
        answer_signals(collection, gains, {"bm25": BM25Ranker()}, scale="raw")  # 0 is no raw grade here

    directory = write_collection(collection, tmp_path / "c")
    (directory / "grade-map.csv").write_text("dimension,grade,gain\n" + "".join(
        f"relevance,{g},{g - 1}\n" for g in range(1, 5)))
    collection.judgments.assign(grade=collection.judgments["grade"] + 1).to_csv(directory / "judgments.csv",
                                                                                index=False)
    raw.to_csv(tmp_path / "raw.csv", index=False)
    base = ["nrp", "validate", str(directory), str(tmp_path / "raw.csv"), "-r", "bm25", "-B", "0"]
    refused = CliRunner().invoke(app, base)
    assert refused.exit_code == 1 and "--answer-grades raw" in refused.output
    result = CliRunner().invoke(app, [*base, "--answer-grades", "raw", "--format", "json"])
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert ("grade scale: the answers' grades (recoded from the raw scale) are relevance gains of c, 0 to 3 (its "
            "raw grades recoded: 1→0, 2→1, 3→2, 4→3); correct = gain >= 2; nrp-rel: among documents of gain >= 2 "
            "(--relevant not given: it follows --correct)") in notes
    moved = CliRunner().invoke(app, [*base, "--answer-grades", "raw", "--relevant", "1", "--format", "json"])
    assert any(note.endswith("nrp-rel: among documents of gain >= 1") for note in json.loads(moved.stdout)["notes"])
    loo = CliRunner().invoke(app, ["nrp", "validate", str(directory), "--answer-grades", "raw"])
    assert loo.exit_code == 2 and "only with ANSWERS" in loo.output


# ====================================================================== nrp-rel without relevant documents
def _no_relevant_collection():
    """Question 3 has no document of grade 2."""
    base = _collection(6, questions=4)
    judgments = base.judgments.copy()
    judgments.loc[(judgments["qid"] == "q3") & (judgments["grade"] >= 2), "grade"] = 1
    return collection_from_frames(base.queries, base.documents, judgments[["qid", "docno", "grade"]])


def test_nrp_relevant_has_no_value_without_relevant_documents() -> None:
    """Before: such answers got nrp_relevant 1, the top value (85 incorrect MEDIQA answers did)."""
    collection = _no_relevant_collection()
    answers = raw_graded_answers(collection)
    result = score_answers(collection, answers, BM25Ranker(), bootstrap=0, relevant=2)
    per = result.answers.set_index("qid")
    assert per.loc["q3", "nrp_relevant"].isna().all() and (per.loc["q3", "n_relevant"] == 0).all()
    assert per.drop(index="q3")["nrp_relevant"].notna().all()
    assert ("nrp_relevant: 6 answer(s) to 1 question(s) with no document of grade >= 2 have no value (left out of "
            "mean_nrp_relevant)") in result.notes
    assert result.summary["mean_nrp_relevant"].iloc[0] == pytest.approx(per["nrp_relevant"].mean())
    loo = leave_one_out_signals(collection, {"bm25": BM25Ranker()}, relevant=2)
    assert loo.loc[loo["qid"] == "q3", "nrp-rel:bm25"].isna().all()


def test_validate_measures_a_signal_on_the_answers_that_have_a_value(tmp_path) -> None:
    collection = _no_relevant_collection()
    frame = answer_signals(collection, raw_graded_answers(collection), {"bm25": BM25Ranker()}, relevant=2)
    signals = ["nrp:bm25", "nrp-rel:bm25", "score:bm25"]
    table = agreement_with_grades(frame, signals, correct=2, bootstrap=50).set_index(["signal", "measure"])
    kept = frame[frame["qid"] != "q3"]
    by_hand = agreement_with_grades(kept, signals, correct=2, bootstrap=50).set_index(["signal", "measure"])
    # nrp-rel on the answers with a value (and its diff against nrp on those same answers) = dropping q3 by hand
    for measure in ("auc", "spearman", "tau_b", "spearman_q", "tau_b_q"):
        for column in ("value", "diff"):
            got, want = table.loc[("nrp-rel:bm25", measure), column], by_hand.loc[("nrp-rel:bm25", measure), column]
            assert got == pytest.approx(want), (measure, column)
    assert table.loc[("nrp-rel:bm25", "auc"), "answers"] == len(kept)
    assert table.loc[("nrp:bm25", "auc"), "answers"] == len(frame)
    assert table.loc[("nrp:bm25", "auc"), "value"] != by_hand.loc[("nrp:bm25", "auc"), "value"]  # all answers

    directory = write_collection(collection, tmp_path / "c")
    raw_graded_answers(collection).to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "validate", str(directory), str(tmp_path / "a.csv"), "-r", "bm25",
                                      "-B", "0", "--format", "json"])
    assert result.exit_code == 0, result.output
    correct = int((frame.loc[frame["qid"] == "q3", "grade"] >= 2).sum())
    assert (f"nrp-rel:bm25: 6 answers ({correct} correct) to 1 question with no document of gain >= 2 have no "
            "value, left out of its measures and of its diff") in json.loads(result.stdout)["notes"]


# ====================================================================================== MEDIQA on LiveQA (shipped)
def _mediqa():
    return shared_file("liveqa_medical", "mediqa2019_liveqamed", "MEDIQA2019-Task3-QA-TrainingSet1-LiveQAMed.xml")


def test_mediqa_xml_reads_as_graded_answers() -> None:
    from stableval.nrp.collection import read_answers_table

    answers = read_answers_table(_mediqa())
    assert len(answers) == 839 and answers["qid"].nunique() == 104
    assert answers["grade"].astype(int).value_counts().to_dict() == {1: 341, 2: 269, 3: 138, 4: 91}
    assert (answers["model"] == "chiqa").all() and answers["answer_id"].is_unique


def test_mediqa_against_liveqa_reproduces_the_issue(monkeypatch) -> None:
    """The issue's numbers on unseen graded answers: 85 answers (all incorrect) without a relevant document, and
    --ranker best choosing DPH (AUC 0.769) over BM25 (0.731) by agreement with the grades."""
    from stableval.commands import nrp as command

    collection = shared_file("liveqa_medical")
    runner = CliRunner()
    base = [str(collection), str(_mediqa()), "--pool", "trec,medquad", "--answer-grades", "raw", "-B", "0",
            "--format", "json"]
    refused = runner.invoke(app, ["nrp", "validate", *base[:4], "-r", "bm25", "-B", "0"])
    assert refused.exit_code == 1 and "91 answer(s) outside" in refused.output
    validated = runner.invoke(app, ["nrp", "validate", *base, "-r", "bm25"])
    assert validated.exit_code == 0, validated.output
    notes = json.loads(validated.stdout)["notes"]
    assert ("nrp-rel:bm25: 85 answers (0 correct) to 10 questions with no document of gain >= 2 have no value, "
            "left out of its measures and of its diff") in notes
    monkeypatch.setattr(command, "best_candidates", lambda: ["bm25", "bm25-pool", "tfidf", "dph"])
    best = runner.invoke(app, ["nrp", "score", *base[:4], "-r", "best", "--graded", str(_mediqa()), *base[4:]])
    assert best.exit_code == 0, best.output
    choice = json.loads(best.stdout)["ranker_choice"]
    auc = {row["ranker"]: round(row["auc"], 3) for row in choice["candidates"]}
    assert choice["chosen"] == "dph" and auc == {"bm25": 0.731, "bm25-pool": 0.674, "tfidf": 0.735, "dph": 0.769}
