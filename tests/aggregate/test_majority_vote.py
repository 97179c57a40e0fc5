"""Majority vote: soft vote shares and every tie rule, the ``first`` rule against Python's ``Counter`` on real
sets (file order, not rater names), and the vectorised paths against simple row maxima."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from stableval import AnnotationTable, MajorityVote
from stableval.aggregate.em import vote_counts_of_matrix
from stableval.aggregate.responses import first_seen
from stableval.datasets import load_mt_bench, load_truth_inference
from stableval.evaluate import score_agents

from paths import MT_BENCH, shared_file
from synthetic import simulated_matrix


# ------------------------------------------------------------------ majority vote
def tie_table() -> AnnotationTable:
    # response q1: 2 votes 'high', 1 'mid' -> high; q2: one 'low', one 'high' -> tie; q3: 'mid','mid','low','high'
    frame = pd.DataFrame({
        "item": ["q1"] * 3 + ["q2"] * 2 + ["q3"] * 4,
        "agent": "A",
        "rater": ["a", "b", "c", "a", "b", "a", "b", "c", "d"],
        "label": [2, 2, 1, 0, 2, 1, 1, 0, 2],
    })
    return AnnotationTable.from_frame(frame, levels=("low", "mid", "high"))


def test_majority_vote_soft_shares_and_tie_policies() -> None:
    table = tie_table()
    split = MajorityVote().fit(table)
    np.testing.assert_allclose(split.vote_shares_, [[0, 1 / 3, 2 / 3], [0.5, 0, 0.5], [0.25, 0.5, 0.25]])
    np.testing.assert_allclose(split.posteriors_, [[0, 0, 1], [0.5, 0, 0.5], [0, 1, 0]])
    assert split.tied_.tolist() == [False, True, False]
    assert MajorityVote(ties="lowest").fit(table).labels_.tolist() == [2, 0, 1]
    assert MajorityVote(ties="highest").fit(table).labels_.tolist() == [2, 2, 1]
    draws = {int(MajorityVote(ties="random", seed=s).fit(table).labels_[1]) for s in range(40)}
    assert draws == {0, 2}  # only tied levels, both reachable
    assert (MajorityVote(ties="random", seed=3).fit(table).labels_
            == MajorityVote(ties="random", seed=3).fit(table).labels_).all()


def table_of(labels: list[list[int]], levels: tuple[str, ...] = ("0", "1", "2"), agent: str = "A") -> AnnotationTable:
    """One response per list (items q0, q1, ...), its labels in file order, one rater each."""
    frame = pd.DataFrame([{"item": f"q{i}", "agent": agent, "rater": f"r{j}", "label": label}
                          for i, row in enumerate(labels) for j, label in enumerate(row)])
    return AnnotationTable.from_frame(frame, levels=levels)


# ====================================================================================== MV ties = "first"
def test_first_tie_rule_hand_worked() -> None:
    # file order [2, 0, 0, 2]: 0 and 2 tie with two votes each; 2 was seen first → 2 (Counter.most_common's answer)
    """Issue 12: exact conventions."""
    table = table_of([[2, 0, 0, 2], [0, 2, 2, 0], [1, 1, 0], [0, 1, 2]])
    assert Counter([2, 0, 0, 2]).most_common(1)[0][0] == 2
    assert first_seen(table).tolist() == [[1, 14, 0], [4, 14, 5], [10, 8, 14], [11, 12, 13]]  # 14: never
    first = MajorityVote(ties="first").fit(table)
    assert first.labels_.tolist() == [2, 0, 1, 0] and first.tie_break_ == "first"
    np.testing.assert_array_equal(first.posteriors_, np.eye(3)[[2, 0, 1, 0]])
    assert MajorityVote(ties="lowest").fit(table).labels_.tolist() == [0, 0, 1, 0]
    assert MajorityVote(ties="highest").fit(table).labels_.tolist() == [2, 2, 1, 2]
    assert first.tied_.tolist() == [True, True, False, True]


def test_first_follows_row_order_not_rater_names() -> None:
    """Issue 12: exact conventions."""
    frame = pd.DataFrame({"item": "q", "agent": "A", "rater": ["z", "a"], "label": [1, 0]})
    levels = ("0", "1")
    assert MajorityVote(ties="first").fit(AnnotationTable.from_frame(frame, levels=levels)).labels_.tolist() == [1]
    flipped = frame.iloc[::-1].reset_index(drop=True)
    assert MajorityVote(ties="first").fit(AnnotationTable.from_frame(flipped, levels=levels)).labels_.tolist() == [0]


def test_first_without_the_file_order_breaks_ties_at_random_and_says_so() -> None:
    """Issue 12: exact conventions."""
    table = table_of([[2, 0, 0, 2], [0, 2], [1, 0], [1, 1, 2]])
    X = table.response_matrix()
    bare = MajorityVote(ties="first", seed=5).fit_matrix(X, table.n_raters, table.n_levels)
    random = MajorityVote(ties="random", seed=5).fit_matrix(X, table.n_raters, table.n_levels)
    assert bare.tie_break_ == "random"
    np.testing.assert_array_equal(bare.labels_, random.labels_)
    given = MajorityVote(ties="first").fit_matrix(X, table.n_raters, table.n_levels, first_seen=first_seen(table))
    np.testing.assert_array_equal(given.labels_, MajorityVote(ties="first").fit(table).labels_)
    with pytest.raises(ValueError, match="first_seen must have shape"):
        MajorityVote(ties="first").fit_matrix(X, table.n_raters, table.n_levels, first_seen=np.zeros((2, 3)))
    # gold clamps a response whatever the tie rule
    clamped = MajorityVote(ties="first").fit(table, gold={("q0", "A"): "0"})
    assert clamped.labels_.tolist()[0] == 0


def _most_common_first(groups: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], str]:
    return {key: Counter(labels).most_common(1)[0][0] for key, labels in groups.items()}


def test_first_reproduces_counter_most_common_on_truth_inference() -> None:
    """Paper-style MV (Python's Counter over each question's answers in file order) on a real set.
    Issue 12: exact conventions."""
    folder = shared_file("zheng2017_truth_inference", "s4_Dog_data")
    data = load_truth_inference(folder)
    answers = pd.read_csv(folder / "answer.csv", dtype=str).drop_duplicates(["question", "worker"], keep="first")
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for question, answer in zip(answers["question"], answers["answer"], strict=True):
        groups[(question, "s4_Dog_data")].append(answer)
    expected = _most_common_first(groups)
    table = data.table
    model = MajorityVote(ties="first").fit(table)
    ours = {(str(table.items[i]), str(table.agents[a])): table.levels[c]
            for i, a, c in zip(table.response_item, table.response_agent, model.labels_, strict=True)}
    assert ours == expected
    tied = sum(1 for labels in groups.values() if sorted(Counter(labels).values())[-2:].count(
        max(Counter(labels).values())) == 2)
    assert int(model.tied_.sum()) == tied == 50
    lowest = MajorityVote(ties="lowest").fit(table).labels_
    assert (lowest != model.labels_).sum() > 10   # the rule matters on this set


def test_first_reproduces_counter_most_common_on_mt_bench() -> None:
    """Issue 12: exact conventions."""
    path = shared_file(*MT_BENCH)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    outcome = {"model_a": ("win", "loss"), "model_b": ("loss", "win")}
    for line in path.read_text(encoding="utf-8").splitlines():
        vote = json.loads(line)
        if str(vote["turn"]) != "1":
            continue
        item = f"q{vote['question_id']}-turn1"
        a, b = outcome.get(vote["winner"], ("tie", "tie"))
        groups[(item, vote["model_a"])].append(a)
        groups[(item, vote["model_b"])].append(b)
    expected = _most_common_first(groups)
    table = load_mt_bench(path)
    model = MajorityVote(ties="first").fit(table)
    ours = {(str(table.items[i]), str(table.agents[a])): table.levels[c]
            for i, a, c in zip(table.response_item, table.response_agent, model.labels_, strict=True)}
    assert ours == expected and len(ours) == 480
    # and the per-agent MV scores are the means of those labels' credit (win 1, tie 0.5, loss 0)
    credit = {"loss": 0.0, "tie": 0.5, "win": 1.0}
    scores = score_agents(table, [MajorityVote(ties="first")], bootstrap=0).scores.set_index("agent")["score"]
    by_agent: dict[str, list[float]] = defaultdict(list)
    for (_, agent), label in expected.items():
        by_agent[agent].append(credit[label])
    for agent, values in by_agent.items():
        assert scores[agent] == pytest.approx(np.mean(values), abs=1e-12)


def test_refit_bootstrap_keeps_the_first_rule() -> None:
    # agent A: every response ties 0/2 with 2 first → credit 1 each; a refit on the bare matrix would draw ties
    """Issue 12: exact conventions."""
    table = table_of([[2, 0]] * 6, levels=("0", "1", "2"))
    result = score_agents(table, [MajorityVote(ties="first")], bootstrap=20, refit=True, seed=1)
    assert result.scores["score"].tolist() == [1.0]
    np.testing.assert_array_equal(result.replicates["mv"], np.ones((20, 1)))


K = 3


@pytest.mark.parametrize("ties", ["split", "lowest", "highest", "random"])
def test_majority_vote_equals_the_simple_row_maxima(X: sp.csr_matrix, ties: str) -> None:
    """Issue 14: the score path at scale."""
    from stableval.aggregate import MajorityVote

    n_raters = X.shape[1] // K
    gold = np.full(X.shape[0], -1)
    gold[::13] = 1
    model = MajorityVote(ties=ties).fit_matrix(X, n_raters, K, gold=gold)
    counts = vote_counts_of_matrix(X, K)
    counts[gold >= 0] = np.eye(K)[1]
    winners = counts == counts.max(axis=1, keepdims=True)
    assert np.array_equal(model.tied_, winners.sum(axis=1) > 1) and model.tied_.any()
    if ties == "split":
        np.testing.assert_array_equal(model.posteriors_, winners / winners.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(model.posteriors_.argmax(axis=1)[~model.tied_], winners.argmax(axis=1)[~model.tied_])
    if ties in ("split", "lowest"):  # the lowest tied level, found a level at a time
        np.testing.assert_array_equal(model.labels_, winners.argmax(axis=1))
    np.testing.assert_array_equal(model.vote_shares_, counts / np.maximum(counts.sum(axis=1, keepdims=True), 1))


def test_majority_vote_makes_no_copy_of_the_vote_counts() -> None:
    """A transposed copy of the (N, K) vote counts (and of the split posteriors) raised the peak of a 1e8-judgment
    `score` from 8.3 to 9.6 GB: beyond what the model keeps, the fit may hold the counts and a little more.
    Issue 14: the score path at scale."""
    import tracemalloc

    from stableval.aggregate import MajorityVote

    X = simulated_matrix(100_000, 60, 3)
    counts_bytes = vote_counts_of_matrix(X, K).nbytes
    tracemalloc.start()
    try:
        model = MajorityVote().fit_matrix(X, 60, K)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = sum(a.nbytes for a in (model.vote_shares_, model.posteriors_, model.labels_, model.tied_))
    assert peak - kept < 2.0 * counts_bytes
