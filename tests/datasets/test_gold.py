"""Gold labels: one gold-file format for accuracy and reliability, and accuracy against gold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.aggregate import DawidSkene, MajorityVote
from stableval.datasets import gold_accuracy, load_truth_inference, read_gold, write_gold
from stableval.errors import InputError
from stableval.evaluate import score_agents

from paths import shared_file


def test_expected_accuracy_is_the_probability_of_the_gold_level_for_every_method() -> None:
    """Issue 12: exact conventions."""
    folder = shared_file("zheng2017_truth_inference", "d_Duck_Identification")
    data = load_truth_inference(folder)
    assert data.gold is not None
    result = score_agents(data.table, ["mv", "ds"], params={"mv": {"ties": "lowest"}}, bootstrap=0)
    np.testing.assert_array_equal(result.posteriors["mv"], MajorityVote(ties="lowest").fit(data.table).posteriors_)
    np.testing.assert_allclose(result.posteriors["ds"], DawidSkene().fit(data.table).posteriors_)
    from stableval.datasets import gold_accuracy

    frame = gold_accuracy(data.table, result.posteriors, data.gold).set_index(["method", "agent"])
    codes = {key: data.table.levels.index(value) for key, value in data.gold.items()}
    index = {(str(data.table.items[i]), str(data.table.agents[a])): n
             for n, (i, a) in enumerate(zip(data.table.response_item, data.table.response_agent, strict=True))}
    rows = np.array([index[key] for key in codes])
    levels = np.array(list(codes.values()))
    for method in ("mv", "ds"):
        mass = result.posteriors[method][rows, levels]
        assert frame.loc[(method, "(all)"), "expected_accuracy"] == pytest.approx(mass.mean(), abs=1e-12)
    # majority vote with a tie rule gives hard labels: its accuracy and expected accuracy agree
    assert frame.loc[("mv", "(all)"), "accuracy"] == frame.loc[("mv", "(all)"), "expected_accuracy"]


def test_gold_accuracy_of_majority_vote_matches_pandas() -> None:
    folder = shared_file("zheng2017_truth_inference", "d_Duck_Identification")
    data = load_truth_inference(folder)
    assert data.gold is not None
    # independent majority vote with ties counted 1/2 (random tie-break), in plain pandas
    answers = pd.read_csv(folder / "answer.csv", dtype=str)
    truth = pd.read_csv(folder / "truth.csv", dtype=str).set_index("question")["truth"]
    counts = answers.groupby(["question", "answer"]).size().unstack(fill_value=0)
    top = counts.eq(counts.max(axis=1), axis=0)
    hit = [top.loc[q, truth[q]] / top.loc[q].sum() if truth[q] in top.columns else 0.0 for q in counts.index]
    expected = float(np.mean(hit))

    model = MajorityVote(ties="split").fit(data.table)
    result = gold_accuracy(data.table, {"mv": model, "ds": DawidSkene().fit(data.table)}, data.gold)
    overall = result.set_index(["method", "agent"])
    assert overall.loc[("mv", "(all)"), "accuracy"] == pytest.approx(expected, abs=1e-12)
    assert overall.loc[("mv", "(all)"), "gold_responses"] == 108
    assert 0.5 < overall.loc[("ds", "(all)"), "accuracy"] <= 1.0
    hard = model.posteriors_.argmax(axis=1)
    labels_only = gold_accuracy(data.table, hard, data.gold)
    assert labels_only["accuracy"].iloc[-1] == labels_only["expected_accuracy"].iloc[-1]


def test_gold_accuracy_counts_unmatched_and_rejects_bad_levels() -> None:
    frame = pd.DataFrame({"item": ["a", "b"], "agent": ["X", "Y"], "rater": "r", "label": [1, 0]})
    from stableval.data.table import AnnotationTable

    table = AnnotationTable.from_frame(frame, levels=("no", "yes"))
    post = np.array([[0.2, 0.8], [0.6, 0.4]])
    result = gold_accuracy(table, post, {("a", "X"): "yes", ("b", "Y"): 1, ("zzz", "X"): "no"})
    assert result["agent"].tolist() == ["X", "Y", "(all)"]
    assert result["accuracy"].tolist() == [1.0, 0.0, 0.5]
    assert result["expected_accuracy"].round(6).tolist() == [0.8, 0.4, 0.6]
    assert result.attrs["unmatched_gold"] == 1 and "matched no response" in result.attrs["notes"][-1]
    with pytest.raises(InputError, match="gold level not among the levels"):
        gold_accuracy(table, post, {("a", "X"): "maybe"})


def test_read_and_write_gold_round_trip(tmp_path: Path) -> None:
    gold = {("q1", "A"): "1", ("q2", "B"): "0"}
    for suffix in (".csv", ".jsonl", ".parquet"):
        assert read_gold(write_gold(gold, tmp_path / f"gold{suffix}")) == gold
    (tmp_path / "truth.csv").write_text("question,truth\nq1,1\nq1,0\n")
    with pytest.raises(InputError, match="two different gold labels"):
        read_gold(tmp_path / "truth.csv", default_agent="A")
    with pytest.raises(InputError, match="no agent column"):
        read_gold(tmp_path / "truth.csv")


def test_one_gold_reader_for_accuracy_and_reliability(tmp_path: Path) -> None:
    """The union format: item aliases, optional agent, gold aliases, optional flag/skip; one typed record."""
    from stableval.datasets import GoldLabels
    from stableval.datasets.gold import GOLD_ALIASES

    path = tmp_path / "qc.csv"
    path.write_text("Question,Model,Truth,flag,skip\nq1,A,good,no,no\nq2,A,,yes,no\nq3,B,bad,no,yes\n"
                    "q1,A,good,no,no\n")
    gold = read_gold(path)
    assert isinstance(gold, GoldLabels) and not gold.by_item
    assert gold == {("q1", "A"): "good"} and gold.mapping() == {("q1", "A"): "good"}   # flagged, skipped: no gold
    qc = gold.judgments()
    assert qc.columns.tolist() == ["item", "agent", "rater", "label", "flag", "skip", "qc", "row"]
    assert qc[["item", "flag", "skip", "row"]].values.tolist() == [["q1", False, False, 1], ["q2", True, False, 2],
                                                                    ["q3", False, True, 3]]
    for column in GOLD_ALIASES:
        (tmp_path / "g.csv").write_text(f"id,{column}\nq1,x\n")
        assert read_gold(tmp_path / "g.csv", default_agent="A") == {("q1", "A"): "x"}
    (tmp_path / "best.csv").write_text("item,best\nq1,tie\n")
    by_item = read_gold(tmp_path / "best.csv", every_agent=True)
    assert by_item.by_item and by_item.judgments()["label"].tolist() == ["tie"]
    with pytest.raises(InputError, match="no agent column"):
        dict(by_item)
    with pytest.raises(InputError, match="not one of the levels"):
        read_gold(path, levels="bad")
    (tmp_path / "x.csv").write_text("item,agent,score\nq1,A,\n")
    with pytest.raises(InputError, match=r"row 1 \(line 2\).*empty label on a row that is neither flagged"):
        read_gold(tmp_path / "x.csv")


def test_a_bad_gold_level_names_the_gold_file_and_row(tmp_path: Path) -> None:
    """Issue 26 (E15): ``gold.csv, row 2, column 'gold'``, not only the (item, agent) pair."""
    table = pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": ["m1", "m2", "m1", "m2"], "rater": "r1",
                          "label": ["good", "bad", "good", "bad"]})
    from stableval.data.frames import as_table

    ratings = as_table(table, levels=["bad", "good"])
    path = tmp_path / "gold.csv"
    path.write_text("item,agent,gold\nq1,m1,good\nq2,m2,NA\n")
    with pytest.raises(InputError) as caught:
        gold_accuracy(ratings, MajorityVote().fit(ratings), read_gold(path))
    assert str(caught.value).startswith(f"{path}, row 2") and caught.value.column == "gold"


@pytest.mark.parametrize("suffix", ["csv", "tsv"])
def test_a_bad_gold_level_names_the_file_line_too(tmp_path: Path, suffix: str) -> None:
    """Issue 26 (E15): ``gold.csv, row 2 (line 3), column 'gold'``, the line as every other reader gives it."""
    from stableval.data.frames import as_table

    ratings = as_table(pd.DataFrame({"item": ["q1", "q1", "q2", "q2"], "agent": ["m1", "m2", "m1", "m2"],
                                     "rater": "r1", "label": ["good", "bad", "good", "bad"]}), levels=["bad", "good"])
    path = tmp_path / f"gold.{suffix}"
    path.write_text("item,agent,gold\nq1,m1,good\nq2,m2,NA\n".replace(",", "," if suffix == "csv" else "\t"))
    with pytest.raises(InputError) as caught:
        gold_accuracy(ratings, MajorityVote().fit(ratings), read_gold(path))
    assert str(caught.value).startswith(f"{path}, row 2 (line 3), column 'gold'"), str(caught.value)
