"""NRP itself: the worked example and the spec's formula, rank counts against brute force, the shipped monoT5
ranks, NRP among relevant documents, and the bootstrap over questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stableval.errors import InputError
from stableval.nrp import (
    collection_from_frames,
    normalized_rank_position,
    rank_counts,
    read_webis_rank_files,
    score_answers,
)
from stableval.nrp.rankers.bm25 import BM25Ranker
from stableval.nrp.score import bootstrap_means

from paths import WEBIS, shared_file


# ----------------------------------------------------------------------------------- NRP definition
def test_worked_example_and_spec_formula() -> None:
    above, tied, size = rank_counts(np.array([3.0, 2, 2, 1]), np.zeros(4, int), np.array([2.0, 5.0, 0.0]),
                                    np.zeros(3, int))
    assert above.tolist() == [1, 0, 4] and tied.tolist() == [2, 0, 0] and size.tolist() == [4, 4, 4]
    # spec: 1 - r/|D_q| with r the documents above: optimistic ties
    assert normalized_rank_position(above, tied, size, n="documents", ties="optimistic").tolist() == [0.75, 1.0, 0.0]
    np.testing.assert_allclose(normalized_rank_position(above, tied, size, n="list", ties="pessimistic"), [0.4, 1, 0.2])
    with pytest.raises(InputError, match="tie policy"):
        normalized_rank_position(above, tied, size, ties="best")


def test_rank_counts_match_brute_force() -> None:
    rng = np.random.default_rng(3)
    doc_scores, doc_group = rng.integers(0, 6, 300).astype(float), rng.integers(0, 7, 300)
    ans_scores, ans_group = rng.integers(0, 6, 200).astype(float), rng.integers(0, 7, 200)
    above, tied, size = rank_counts(doc_scores, doc_group, ans_scores, ans_group)
    for i in range(200):
        mine = doc_scores[doc_group == ans_group[i]]
        assert above[i] == np.sum(mine > ans_scores[i]) and tied[i] == np.sum(mine == ans_scores[i])
        assert size[i] == len(mine)


def test_shipped_monot5_ranks_reproduced() -> None:
    directory = shared_file(WEBIS, "indexing", "results", "monoT5")
    data = read_webis_rank_files(directory)
    assert len(data) == 16_000 and data["list_length"].notna().all()
    # the authors divided by the list length including the answer: n="list" with |D_q| = length - 1
    nrp = normalized_rank_position(data["above"].to_numpy(), np.zeros(len(data)),
                                   data["list_length"].to_numpy() - 1, n="list", ties="optimistic")
    np.testing.assert_allclose(nrp, data["nrp_shipped"], atol=1e-9)
    spec = normalized_rank_position(data["above"].to_numpy(), np.zeros(len(data)),
                                    data["list_length"].to_numpy() - 1, n="documents", ties="optimistic")
    assert (spec <= nrp + 1e-12).all() and (spec < nrp).any()
    means = data[data["prompt"] == "multimedqa"].groupby("model")["nrp_shipped"].mean()
    # paper, section 4: Llama-2 7B 0.995, Falcon 7B 0.988, ChatGPT "0.998" (0.99885 here), 7B above 13B
    assert round(means["meta-llama_Llama-2-7b-chat-hf"], 3) == 0.995
    assert round(means["tiiuae_falcon-7b-instruct"], 3) == 0.988
    assert 0.998 <= means["chatgpt"] < 0.999 and means.idxmax() == "chatgpt"
    assert means["meta-llama_Llama-2-7b-chat-hf"] > means["meta-llama_Llama-2-13b-chat-hf"]


def test_bootstrap_over_questions() -> None:
    rng = np.random.default_rng(0)
    values, group, cluster = rng.random(400), rng.integers(0, 3, 400), rng.integers(0, 20, 400)
    mean, low, high = bootstrap_means(values, group, cluster, bootstrap=500, seed=1)
    expected = pd.Series(values).groupby(group).mean().to_numpy()
    np.testing.assert_allclose(mean, expected)
    assert (low < mean).all() and (mean < high).all()
    again = bootstrap_means(values, group, cluster, bootstrap=500, seed=1)
    np.testing.assert_array_equal(low, again[1])
    # one replicate by hand: cluster weights from the same generator
    weights = np.random.default_rng(1).multinomial(20, np.full(20, 1 / 20), size=1)[0]
    w = weights[cluster]
    first = [np.sum(values[group == g] * w[group == g]) / np.sum(w[group == g]) for g in range(3)]
    _, low1, _ = bootstrap_means(values, group, cluster, bootstrap=1, seed=1)
    np.testing.assert_allclose(low1, first)


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
