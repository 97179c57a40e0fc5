"""Answers that copy a judged document of their question, identical or near."""

from __future__ import annotations

import pandas as pd

from stableval.nrp.leakage import find_copies

from nrp_data import small_collection


def test_copies_are_found_identical_and_near() -> None:
    collection = small_collection()
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
