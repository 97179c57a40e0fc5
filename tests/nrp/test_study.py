"""The expert user-study builder: selection (top answer per model by NRP, top relevant document), reproducible
topics, shuffling, and the portal's rank-documents format and its schema check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.errors import InputError
from stableval.nrp.rankers import make_ranker
from stableval.nrp.score import score_answers
from stableval.nrp.study import build_study, check_portal_question, portal_questions, write_portal_questions

from nrp_data import STUDY_MODELS


def test_study_selects_top_answers_and_the_top_relevant_document(study_data) -> None:
    collection, answers = study_data
    study = build_study(collection, answers, make_ranker("bm25"))
    items = study.items
    assert len(study.topics) == 20 and len(items) == 100 and "q0" not in study.topics
    assert (items.groupby("qid")["kind"].apply(sorted) == [["answer"] * 4 + ["document"]] * 20).all()
    assert (items.groupby("qid")["position"].apply(sorted) == [[1, 2, 3, 4, 5]] * 20).all()
    assert items["item"].str.endswith("-none").sum() == 0  # the multimedqa answers only (the paper's prompt)
    # each model's answer is its best NRP on that topic (NRP from score_answers on every answer of the topic)
    nrp = score_answers(collection, answers[answers["prompt"] == "multimedqa"], make_ranker("bm25"),
                        bootstrap=0).answers
    best = nrp.groupby(["qid", "model"])["nrp"].max()
    chosen = items[items["kind"] == "answer"].set_index(["qid", "model"])["nrp"]
    assert np.allclose(chosen.to_numpy(), best.loc[chosen.index].to_numpy())
    # the document is the highest BM25 score among the topic's documents of grade >= 1
    ranker = make_ranker("bm25")
    ranker.prepare(collection.documents["text"].tolist())
    pool = collection.pool().merge(collection.qrels("relevance"), on=["qid", "docno"])
    for qid, doc in items[items["kind"] == "document"].set_index("qid")["item"].items():
        part = pool[pool["qid"] == qid]
        scores, _ = ranker.score([part["query"].iloc[0]], [part["text"].tolist()])
        relevant = part.assign(score=scores[0])
        relevant = relevant[relevant["grade"] >= 1].sort_values(["score", "docno"], ascending=[False, True])
        assert doc == relevant["docno"].iloc[0]
    # system ranks follow the scores within each topic
    for _, part in items.groupby("qid"):
        assert list(part.sort_values("system_rank")["score"]) == sorted(part["score"], reverse=True)


def test_topics_and_order_are_reproducible_and_shuffled(study_data) -> None:
    collection, answers = study_data
    one = build_study(collection, answers, make_ranker("bm25"), topics=10, seed=3)
    again = build_study(collection, answers, make_ranker("bm25"), topics=10, seed=3)
    other = build_study(collection, answers, make_ranker("bm25"), topics=10, seed=4)
    pd.testing.assert_frame_equal(one.items, again.items)
    assert one.topics != other.topics
    # shown order is not the system order, and the document is not always in the same place
    assert (one.items["position"] != one.items["system_rank"]).any()
    assert one.items.loc[one.items["kind"] == "document", "position"].nunique() > 1


def test_portal_file_follows_the_shared_format(study_data, tmp_path: Path) -> None:
    collection, answers = study_data
    study = build_study(collection, answers, make_ranker("bm25"), models=STUDY_MODELS[:2], topics=5)
    path = write_portal_questions(study, tmp_path / "study.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5
    for line in lines:
        question = json.loads(line)
        # the format of the brief, checked here independently of check_portal_question
        assert set(question) <= {"id", "prompt", "items", "specialty"} and {"id", "prompt", "items"} <= set(question)
        assert isinstance(question["id"], str) and isinstance(question["prompt"], str) and question["prompt"]
        assert 2 <= len(question["items"]) <= 20 and len(question["items"]) == 3
        assert len({item["id"] for item in question["items"]}) == len(question["items"])
        for item in question["items"]:
            assert isinstance(item["id"], str) and isinstance(item["text"], str) and item["text"]
            assert item["kind"] in ("answer", "document")
            if item["kind"] == "answer":
                assert item["model"] in STUDY_MODELS[:2] and "grade" not in item
            else:
                assert "model" not in item and isinstance(item["grade"], int | float) and item["grade"] >= 1
        shown = study.items[study.items["qid"] == question["id"]]
        assert [item["id"] for item in question["items"]] == list(shown["item"])
        assert question["prompt"] == collection.queries.set_index("qid").loc[question["id"], "query"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda q: q["items"].append(dict(q["items"][0])), "repeated id"),
    (lambda q: q["items"][0].update(kind="web"), "unknown kind"),
    (lambda q: q["items"][1].update(grade="2"), "wrong type"),
    (lambda q: q["items"].__setitem__(slice(None), q["items"][:1]), "needs 2 to 20 items"),
    (lambda q: q["items"].extend({"id": f"x{i}", "text": "t", "kind": "answer"} for i in range(19)),
     "needs 2 to 20 items"),
    (lambda q: q.update(extra=1), "unknown key"),
    (lambda q: q["items"][0].pop("text"), "missing text"),
    (lambda q: q.update(prompt=""), "prompt must be a non-empty string"),
])
def test_portal_schema_check_refuses_what_the_format_forbids(change, message) -> None:
    question = {"id": "q1", "prompt": "flu?", "specialty": "GP", "items": [
        {"id": "a", "text": "rest", "kind": "answer", "model": "m"},
        {"id": "d", "text": "drink", "kind": "document", "grade": 2}]}
    check_portal_question(question)
    change(question)
    with pytest.raises(InputError, match=message):
        check_portal_question(question)


def test_portal_questions_refuse_clashing_ids(study_data) -> None:
    collection, answers = study_data
    study = build_study(collection, answers, make_ranker("bm25"), topics=2)
    items = study.items.copy()
    items.loc[items["kind"] == "answer", "item"] = "same"
    with pytest.raises(InputError, match="repeated id"):
        portal_questions(type(study)(items))
