"""Test collections and answer files: round trips, errors, LiveQA pools and an optional model column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.errors import InputError
from stableval.nrp import (
    answers_from_frame,
    read_answers,
    read_collection,
    read_liveqa,
    score_answers,
    write_collection,
)
from stableval.nrp.rankers.bm25 import BM25Ranker

from nrp_data import random_collection
from paths import shared_file


# ----------------------------------------------------------------------------------- readers and errors
def test_collection_round_trip_and_errors(tmp_path) -> None:
    collection = random_collection(0)
    again = read_collection(write_collection(collection, tmp_path / "c"))
    assert again.n_questions == 4 and len(again.pool()) == len(collection.pool())
    (tmp_path / "c" / "judgments.csv").write_text("qid,docno,grade\nq0,d0,2\nq0,d1,high\n")
    with pytest.raises(InputError) as error:
        read_collection(tmp_path / "c")
    assert "row 2" in str(error.value) and "'grade'" in str(error.value) and "'high'" in str(error.value)
    (tmp_path / "c" / "judgments.csv").write_text("qid,docno,grade\nq0,d0,2\nq0,nope,1\n")
    with pytest.raises(InputError, match="no text"):
        read_collection(tmp_path / "c")
    dropped = read_collection(tmp_path / "c", missing_text="drop")
    assert any("dropped 1 judgment" in note for note in dropped.notes)
    qrels = tmp_path / "t"
    qrels.mkdir()
    (qrels / "queries.csv").write_text("qid,query\n1,flu\n")
    (qrels / "documents.csv").write_text("docno,text\na,flu fever\n")
    (qrels / "qrels.txt").write_text("1 0 a 2\n1 0 a\n")
    with pytest.raises(InputError, match=r"row 2.*4 fields"):
        read_collection(qrels)


def test_answers_errors(tmp_path) -> None:
    collection = random_collection(0)
    path = tmp_path / "answers.csv"
    path.write_text("qid,model,prompt,answer_id,text\nq0,m,p,1,fine\nq9,m,p,2,lost\n")
    with pytest.raises(InputError) as error:
        read_answers(path, collection=collection)
    assert "row 2" in str(error.value) and "'q9'" in str(error.value)
    path.write_text("qid,model,prompt,answer_id,text\nq0,m,p,1,fine\nq0,m,p,1,again\n")
    with pytest.raises(InputError, match="duplicate answer_id"):
        read_answers(path)
    path.write_text("qid,model,text\nq0,m,\n")
    with pytest.raises(InputError, match="empty"):
        read_answers(path)


# ----------------------------------------------------------------------------------- LiveQA end to end
def test_liveqa_merged_pools_and_degraded_answers() -> None:
    from stableval.nrp.liveqa import read_liveqa, read_liveqa_references

    directory = shared_file("liveqa_medical", "trec2017_liveqa").parent
    collection, references = read_liveqa(directory), read_liveqa_references(directory)
    assert collection.n_questions == 104 and len(collection.pool()) == 3731
    sizes = collection.pool().groupby("qid").size()
    assert (sizes.min(), sizes.max()) == (14, 57)
    assert not collection.documents["text"].str.contains(r"(?s)^Question:.*?\nURL:", regex=True).any()
    rng = np.random.default_rng(0)
    refs = references.drop_duplicates("qid").reset_index(drop=True)
    words = refs["text"].str.split()
    truncated = refs.assign(model="truncated", answer_id=refs["answer_id"] + "-t",
                            text=[" ".join(w[:8]) for w in words])
    off_topic = refs.assign(model="off-topic", answer_id=refs["answer_id"] + "-o",
                            text=refs["text"].to_numpy()[rng.permutation(len(refs))])
    answers = pd.concat([refs, truncated, off_topic], ignore_index=True)
    answers = answers[answers["qid"].isin(set(collection.queries["qid"]))]
    result = score_answers(collection, answers, BM25Ranker(), bootstrap=200)
    means = result.summary.set_index("model")["mean_nrp"]
    assert means["reference"] > means["truncated"] > means["off-topic"]


def test_model_column_is_optional() -> None:
    table = answers_from_frame(pd.DataFrame({"qid": ["1"], "text": ["hi"]}))
    assert table["model"].tolist() == ["-"]


def test_several_liveqa_pools() -> None:
    directory = shared_file("liveqa_medical", "trec2017_liveqa").parent
    both = read_liveqa(directory, pools="trec,medquad")
    assert both.name == "liveqa-trec+medquad"
    prefixes = set(both.documents["docno"].str.split("-").str[0])
    assert prefixes == {"trec", "medquad"}
    assert len(both.pool()) == len(read_liveqa(directory, pools=["trec", "medquad"]).pool())
    with pytest.raises(InputError, match="unknown LiveQA pool"):
        read_liveqa(directory, pools="trec,nope")


def test_the_collection_module_still_exports_the_names_it_had() -> None:
    """Issue 25: the test collection, LiveQA and answers moved to modules of their own (no import cycle with webis);
    every name ``stableval.nrp.collection`` exported is still importable from it, the same object as at home."""
    from stableval.nrp import answers, collection, liveqa, testcollection

    before = ["ANSWER_COLUMNS", "CLEF_CREDIBILITY", "CLEF_DIMENSIONS", "LIVEQA_GRADES", "LIVEQA_POOLS",
              "LIVEQA_QUERY_FIELDS", "TestCollection", "answers_from_frame", "clef_grade_map", "collection_from_frames",
              "qrels_dimension", "read_answers", "read_answers_table", "read_collection", "read_grade_map",
              "read_liveqa", "read_liveqa_references", "read_mediqa_answers", "read_qrels", "unread_note",
              "write_collection"]
    assert set(before) <= set(collection.__all__)
    for name in before:
        home = next((module for module in (testcollection, liveqa, answers) if name in module.__all__), collection)
        assert getattr(collection, name) is getattr(home, name), name
