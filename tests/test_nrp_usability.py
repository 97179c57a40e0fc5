"""NRP safety checks and usability: copies of judged documents, several LiveQA pools, unknown questions, an
optional model column, evaluate-rankers --run-out."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp import answers_from_frame, collection_from_frames, read_liveqa, score_answers, write_collection
from stableval.nrp.leakage import find_copies
from stableval.nrp.rankers import make_ranker

from conftest import shared_file

WORDS = np.array("flu fever cough heart pain drug dose sleep diet skin blood sugar insulin tax car tree".split())


def _collection(seed: int = 0, questions: int = 3, docs: int = 6):
    rng = np.random.default_rng(seed)
    queries = pd.DataFrame({"qid": [f"q{i}" for i in range(questions)],
                            "query": [" ".join(rng.choice(WORDS, 2, replace=False)) for _ in range(questions)]})
    documents = pd.DataFrame({"docno": [f"d{i}" for i in range(questions * docs)],
                              "text": [" ".join(rng.choice(WORDS, 12)) for _ in range(questions * docs)]})
    judgments = pd.DataFrame({"qid": np.repeat(queries["qid"], docs).to_numpy(), "docno": documents["docno"],
                              "grade": rng.integers(0, 3, questions * docs)})
    return collection_from_frames(queries, documents, judgments)


def test_copies_are_found_identical_and_near() -> None:
    collection = _collection()
    pool = collection.pool()
    first = pool.iloc[0]
    other_q = pool[pool["qid"] != first["qid"]].iloc[0]
    words = first["text"].split()
    answers = pd.DataFrame({
        "qid": [first["qid"], first["qid"], first["qid"], first["qid"]],
        "answer_id": ["same", "near", "fresh", "elsewhere"],
        "text": [first["text"].upper() + "  ", " ".join([*words, words[0]]), "completely new words here",
                 other_q["text"]]})  # "elsewhere" copies a document of another question: not a leak here
    copies = find_copies(collection, answers).set_index("answer_id")
    assert list(copies.index) == ["same", "near"]
    assert copies.loc["same", "identical"] and copies.loc["same", "docno"] == first["docno"]
    assert not copies.loc["near", "identical"] and copies.loc["near", "similarity"] >= 0.95
    assert copies.loc["near", "docno"] == first["docno"]


def test_cli_score_counts_and_excludes_copies_skips_unknown_questions(tmp_path) -> None:
    collection = _collection(1)
    directory = write_collection(collection, tmp_path / "c")
    pool = collection.pool()
    rows = pd.DataFrame({"qid": [pool["qid"].iloc[0], pool["qid"].iloc[0], pool["qid"].iloc[7], "nowhere"],
                         "text": [pool["text"].iloc[0], "flu fever tea", "heart pain rest", "flu"]})
    rows.to_csv(tmp_path / "a.csv", index=False)  # no model column: one system
    runner = CliRunner()
    result = runner.invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "0"])
    assert result.exit_code == 1 and "nowhere" in result.output and "--skip-unknown-questions" in result.output
    base = ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-B", "0", "--skip-unknown-questions",
            "--format", "json"]
    payload = json.loads(runner.invoke(app, base).stdout)
    assert payload["copies"] == 1 and payload["rows"][0]["model"] == "-" and payload["rows"][0]["answers"] == 3
    notes = " ".join(payload["notes"])
    assert "skipped 1 answer(s) to 1 question(s)" in notes and "1 answer(s) identical (1)" in notes
    payload = json.loads(runner.invoke(app, [*base, "--exclude-copies"]).stdout)
    assert payload["rows"][0]["answers"] == 2 and "left out (--exclude-copies)" in " ".join(payload["notes"])


def test_model_column_is_optional() -> None:
    table = answers_from_frame(pd.DataFrame({"qid": ["1"], "text": ["hi"]}))
    assert table["model"].tolist() == ["-"]


def test_evaluate_rankers_run_out(tmp_path) -> None:
    collection = _collection(2)
    directory = write_collection(collection, tmp_path / "c")
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(directory), "-r", "bm25,tfidf", "--run-out",
                                      str(tmp_path / "run.csv"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    run = pd.read_csv(tmp_path / "run.csv", dtype={"qid": str, "docno": str})
    assert list(run.columns) == ["ranker", "qid", "docno", "score", "rank"]
    assert len(run) == 2 * len(collection.pool())
    for _, group in run.groupby(["ranker", "qid"]):
        assert sorted(group["rank"]) == list(range(1, len(group) + 1))
        assert group.loc[group["rank"] == 1, "score"].iloc[0] == group["score"].max()


def test_several_liveqa_pools() -> None:
    directory = shared_file("liveqa_medical", "trec2017_liveqa").parent
    both = read_liveqa(directory, pools="trec,medquad")
    assert both.name == "liveqa-trec+medquad"
    prefixes = set(both.documents["docno"].str.split("-").str[0])
    assert prefixes == {"trec", "medquad"}
    assert len(both.pool()) == len(read_liveqa(directory, pools=["trec", "medquad"]).pool())
    with pytest.raises(InputError, match="unknown LiveQA pool"):
        read_liveqa(directory, pools="trec,nope")


def test_ranker_best_picks_the_highest_ndcg_and_says_so(tmp_path, monkeypatch) -> None:
    from stableval.commands import nrp as command
    from stableval.nrp.measures import evaluate_rankers, select_ranker
    from stableval.nrp.rankers import make_ranker

    collection = _collection(5, questions=4)
    directory = write_collection(collection, tmp_path / "c")
    candidates = {"bm25-pool": make_ranker("bm25-pool"), "tfidf": make_ranker("tfidf")}
    summary, _ = evaluate_rankers(collection, candidates)
    expected = summary["ranker"].iloc[int(summary["ndcg@10"].to_numpy().argmax())]
    assert select_ranker(collection, candidates)[0] == expected
    # issue 31: every installed ranker is a candidate now, bm25-pool and DPH included (was bm25, tfidf, biencoder)
    assert command.best_candidates()[:4] == ["bm25", "bm25-pool", "tfidf", "dph"]
    monkeypatch.setattr(command, "best_candidates", lambda: ["bm25-pool", "tfidf"])
    pool = collection.pool()
    pool[["qid", "text"]].head(5).to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "best", "-B",
                                      "0", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert f"--ranker best: {expected} (nDCG@10" in " ".join(payload["notes"])
    assert payload["settings"]["ranker"].startswith(expected.split("-")[0])


def test_grade_map_with_unjudged_values_in_ndcg_and_nrp(tmp_path) -> None:
    from stableval.nrp.measures import evaluate_run

    queries = pd.DataFrame({"qid": ["1"], "query": ["flu fever"]})
    documents = pd.DataFrame({"docno": list("abc"), "text": ["flu fever", "flu", "tax"]})
    judgments = pd.DataFrame({"qid": ["1"] * 5, "docno": ["a", "b", "c", "a", "c"],
                              "dimension": ["relevance"] * 3 + ["credibility"] * 2, "grade": [2, 1, 0, 3, 1]})
    directory = tmp_path / "c"
    write_collection(collection_from_frames(queries, documents, judgments), directory)
    (directory / "grade-map.csv").write_text("dimension,grade,gain\ncredibility,0,0\ncredibility,1,1\n"
                                             "credibility,2,2\ncredibility,3,unjudged\n")
    from stableval.nrp import read_collection

    mapped = read_collection(directory)
    plain = collection_from_frames(queries, documents, judgments)
    # credibility 3 = "unable to judge": that judgment is gone, relevance is untouched, D_q keeps a, b, c
    assert mapped.qrels("relevance")["grade"].tolist() == [2.0, 1.0, 0.0]
    assert mapped.qrels("credibility")[["docno", "grade"]].values.tolist() == [["c", 1.0]]
    assert len(mapped.pool()) == 3 and "1 judgment(s) with a grade mapped to 'unjudged'" in " ".join(mapped.notes)
    # nDCG: ranking c first is ideal once a's 3 is not a gain; without the map a's 3 counts as the top gain
    run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]})
    assert evaluate_run(mapped.qrels("credibility"), run)["ndcg"].iloc[0] == pytest.approx(1.0)
    assert evaluate_run(plain.qrels("credibility"), run)["ndcg"].iloc[0] < 0.8
    # NRP among credible documents (grade >= 1): only c is left to rank against
    answer = pd.DataFrame({"qid": ["1"], "model": ["m"], "text": ["fever"]})
    result = score_answers(mapped, answer, make_ranker("bm25"), bootstrap=0, relevant=1, dimension="credibility")
    assert result.answers["n_relevant"].iloc[0] == 1
    (directory / "grade-map.csv").write_text("dimension,grade,gain\nrelevance,0,0\nrelevance,1,1\n")
    with pytest.raises(InputError, match=r"grade not in the grade map.*got '2.0'; allowed: 0, 1"):
        read_collection(directory)
    result = CliRunner().invoke(app, ["nrp", "evaluate-rankers", str(directory), "--grade-map",
                                      str(tmp_path / "missing.csv")])
    assert result.exit_code == 1 and "missing.csv" in result.output


def test_score_with_several_rankers_is_a_usage_error(tmp_path) -> None:
    """``nrp score -r bm25,tfidf`` ended in an unhandled ValueError ("too many values to unpack"); like ``study`` it
    now says that it scores with one ranker (exit 2)."""
    directory = write_collection(_collection(5, questions=4), tmp_path / "c")
    _collection(5, questions=4).pool()[["qid", "text"]].head(5).to_csv(tmp_path / "a.csv", index=False)
    result = CliRunner().invoke(app, ["nrp", "score", str(directory), str(tmp_path / "a.csv"), "-r", "bm25,tfidf",
                                      "-B", "0"])
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())  # the error panel, unwrapped
    assert result.exit_code == 2 and "scores with one ranker" in text and "--ranker" in text
    assert not isinstance(result.exception, ValueError)
