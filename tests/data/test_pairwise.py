"""Pairwise votes: validation, duplicate policies, conversion to judgments, detection, file order and turns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from stableval import load
from stableval.aggregate import MajorityVote
from stableval.cli import app
from stableval.commands.common import flag_spelling
from stableval.data import (
    PairwiseTable,
    is_pairwise_frame,
    pairwise_from_frame,
    pairwise_to_annotations,
    read_any,
    read_pairwise,
)
from stableval.data.table import AnnotationTable
from stableval.errors import InputError

from paths import FIXTURES, SMALL_PAIRWISE

runner = CliRunner()


def _votes_with_turns(path: Path) -> Path:
    rows = [{"question_id": 81, "turn": turn, "model_a": "A", "model_b": "B", "winner": winner, "judge": "j1",
             "category": "writing"} for turn, winner in ((1, "model_a"), (2, "model_b"))]
    rows.append({"question_id": 82, "turn": 1, "model_a": "A", "model_b": "B", "winner": "tie", "judge": "j1",
                 "category": "roleplay"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_turn_column_makes_each_turn_its_own_item(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = _votes_with_turns(tmp_path / "votes.jsonl")
    votes = read_pairwise(path)
    assert votes.frame["item"].tolist() == ["81-turn1", "81-turn2", "82-turn1"]
    assert any("column 'turn'" in note for note in votes.notes)
    result = runner.invoke(app, ["score", str(path), "-B", "0", "-m", "mv", "-f", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["dataset"]["responses"] == 6


def test_agent_named_like_its_own_position_is_accepted(tmp_path: Path) -> None:
    """Issue 16: bad input."""
    path = tmp_path / "votes.csv"
    pd.DataFrame({"item": ["q1", "q2"], "model_a": ["a", "a"], "model_b": ["b", "b"], "judge": "r1",
                  "winner": ["a", "b"]}).to_csv(path, index=False)
    assert read_pairwise(path).frame["winner"].tolist() == ["a", "b"]


def test_bad_weight_is_rejected_with_row_and_column() -> None:
    frame = pd.DataFrame({"item": ["a", "b"], "agent_a": ["A", "A"], "agent_b": ["B", "B"], "rater": "r",
                          "winner": ["a", "b"], "weight": ["1", "-2"]})
    with pytest.raises(InputError, match=r"row 2.*'weight'.*'-2'"):
        pairwise_from_frame(frame, source="votes.csv")


def test_pairwise_votes_keep_file_order_for_first(tmp_path: Path) -> None:
    # A's judgments of q1: vote 1 (A as agent_b) loses, vote 2 (A as agent_a) wins → tie of loss and win; first = loss
    """Issue 12: exact conventions."""
    path = tmp_path / "votes.csv"
    path.write_text("item,agent_a,agent_b,rater,winner\nq1,B,A,r1,a\nq1,A,C,r2,a\n")
    table = load(path).table
    assert table.to_frame()[["agent", "label"]].values.tolist() == [["B", "win"], ["A", "loss"], ["A", "win"],
                                                                    ["C", "loss"]]
    a = list(table.agents).index("A")
    labels = MajorityVote(ties="first").fit(table).labels_
    assert labels[table.response_agent == a].tolist() == [0]


def votes(**columns: list[str]) -> pd.DataFrame:
    base = {"item": ["q1", "q1", "q2"], "agent_a": ["A", "B", "C"], "agent_b": ["B", "C", "A"],
            "rater": ["r1", "r1", "r2"], "winner": ["a", "tie", "b"]}
    base.update(columns)
    return pd.DataFrame(base)


def judgments(table: AnnotationTable) -> list[tuple[str, ...]]:
    frame = table.to_frame()
    return sorted(map(tuple, frame.values.tolist()))


# ====================================================================================== detection
def test_is_pairwise_frame() -> None:
    assert is_pairwise_frame(pd.read_csv(SMALL_PAIRWISE))
    assert is_pairwise_frame(pd.DataFrame(columns=["Item", "System_A", "System_B", "Worker", "Winner"]))
    assert not is_pairwise_frame(pd.DataFrame(columns=["item", "agent", "rater", "label"]))
    with_label = ["item", "model_a", "model_b", "rater", "winner", "score"]
    assert not is_pairwise_frame(pd.DataFrame(columns=with_label))
    assert not is_pairwise_frame(pd.DataFrame(columns=["item", "model_a", "rater", "winner"]))
    assert is_pairwise_frame(pd.DataFrame(columns=["i", "x", "y", "r", "w"]), {"winner": "w"})
    assert not is_pairwise_frame(pd.DataFrame(columns=["item", "model_a", "model_b", "winner", "s"]),
                                 {"label": "s"})


# ====================================================================================== validation
def test_winner_values_are_normalised() -> None:
    raw = ["a", "A", "model_a", "Agent_A", "b", "MODEL_B", "agent_b", "tie", "Draw", "tie (bothbad)",
           " x1 ", "y1"]
    n = len(raw)
    table = pairwise_from_frame(pd.DataFrame({
        "item": [f"q{i}" for i in range(n)], "agent_a": ["x1"] * n, "agent_b": ["y1"] * n, "rater": ["r"] * n,
        "winner": raw}))
    assert table.frame["winner"].tolist() == ["a"] * 4 + ["b"] * 3 + ["tie"] * 3 + ["a", "b"]
    assert table.n_votes == n and table.notes == ()
    assert list(table.frame.columns) == ["item", "agent_a", "agent_b", "rater", "winner"]


def test_unknown_winner_names_row_line_column_value_and_allowed(tmp_path: Path) -> None:
    path = tmp_path / "w.csv"
    path.write_text("item,model_a,model_b,judge,winner\nq1,A,B,r1,model_a\nq2,A,B,r1,C\nq3,A,B,r1,\n")
    with pytest.raises(InputError) as excinfo:
        read_pairwise(path)
    text = str(excinfo.value)
    assert text.startswith(f"{path}, row 2 (line 3), column 'winner': unknown winner (2 row(s) in all)")
    assert "got 'C'" in text and "model_a" in text and "tie" in text and "winning agent's name" in text


def test_an_agent_against_itself_is_an_error() -> None:
    with pytest.raises(InputError) as excinfo:
        pairwise_from_frame(votes(agent_b=["B", "B", "A"]), source="self.csv")
    text = str(excinfo.value)
    assert text.startswith("self.csv, row 2, column 'agent_b': a vote compares an agent with itself")
    assert "got 'B'" in text and "two different agents" in text


@pytest.mark.parametrize("column", ["item", "agent_a", "agent_b", "rater"])
def test_empty_ids(column: str) -> None:
    values = votes()[column].tolist()
    values[2] = " "
    with pytest.raises(InputError) as excinfo:
        pairwise_from_frame(votes(**{column: values}), source="ids.csv")
    assert str(excinfo.value).startswith(f"ids.csv, row 3, column {column!r}: empty {column} id")
    assert "got ' '" in str(excinfo.value)


def test_missing_winner_column_names_flag() -> None:
    with pytest.raises(InputError) as excinfo:
        pairwise_from_frame(votes().drop(columns="winner"), source="nw.csv")
    text = str(excinfo.value)
    assert "nw.csv" in text and "no winner column" in text and "columns={'winner': NAME}" in text
    assert "--winner-col NAME" in excinfo.value.spelled(flag_spelling)
    assert "columns present: item, agent_a, agent_b, rater" in text


# ====================================================================================== duplicates
DUPLICATE_VOTES = pd.DataFrame({
    "item": ["q1", "q1", "q1", "q1"], "agent_a": ["A", "B", "A", "A"], "agent_b": ["B", "A", "C", "B"],
    "rater": ["r1", "r1", "r1", "r2"], "winner": ["a", "a", "tie", "b"]})


def test_duplicate_votes_are_the_same_unordered_pair() -> None:
    with pytest.raises(InputError) as excinfo:
        pairwise_from_frame(DUPLICATE_VOTES, source="d.csv")
    text = str(excinfo.value)
    assert text.startswith("d.csv, row 2: 1 row(s) repeat a (item, agent pair, rater) judged on an earlier")
    assert "rows 1 and 2 (item 'q1', agents 'A' and 'B', rater 'r1')" in text
    assert "duplicates='first'|'last'|'keep'" in text
    assert "--duplicates first|last|keep" in excinfo.value.spelled(flag_spelling)


@pytest.mark.parametrize("policy, winners, note", [
    ("first", ["a", "tie", "b"], "dropped 1 duplicate vote(s) (policy 'first')"),
    ("last", ["a", "tie", "b"], "dropped 1 duplicate vote(s) (policy 'last')"),
    ("keep", ["a", "a", "tie", "b"],
     "kept 1 repeated vote(s) of the same (item, agent pair, rater) as independent votes (policy 'keep')"),
])
def test_duplicate_vote_policies(policy: str, winners: list[str], note: str) -> None:
    table = pairwise_from_frame(DUPLICATE_VOTES, duplicates=policy)
    assert table.frame["winner"].tolist() == winners
    assert table.notes == (note,)
    expected_first = {"first": ("A", "B"), "last": ("B", "A"), "keep": ("A", "B")}[policy]
    assert tuple(table.frame.loc[0, ["agent_a", "agent_b"]]) == expected_first


def test_votes_on_different_criteria_are_not_duplicates() -> None:
    data = DUPLICATE_VOTES.iloc[:2].assign(criterion=["helpful", "harmless"])
    table = pairwise_from_frame(data)
    assert table.n_votes == 2 and table.frame["criterion"].tolist() == ["helpful", "harmless"]
    converted = pairwise_to_annotations(table)
    assert converted.notes[-1] == "votes on 2 criteria pooled into one table"
    with pytest.raises(ValueError, match="not a policy"):
        pairwise_from_frame(data, duplicates="newest")


# ====================================================================================== conversion
def test_conversion_by_hand() -> None:
    table = read_pairwise(SMALL_PAIRWISE)
    assert table.frame.values.tolist() == [["q1", "A", "B", "r1", "a"], ["q1", "B", "C", "r1", "tie"],
                                           ["q2", "C", "A", "r2", "b"]]
    converted = pairwise_to_annotations(table)
    assert judgments(converted) == [
        ("q1", "A", "r1", "win"), ("q1", "B", "r1", "loss"), ("q1", "B", "r1", "tie"),
        ("q1", "C", "r1", "tie"), ("q2", "A", "r2", "win"), ("q2", "C", "r2", "loss")]
    assert converted.levels == ("loss", "tie", "win")
    np.testing.assert_allclose(converted.credit, [0.0, 0.5, 1.0])
    assert (converted.n_responses, converted.n_items, converted.n_agents, converted.n_raters) == (5, 2, 3, 2)
    assert converted.notes == ("3 pairwise votes converted to 6 judgments: win=2, tie=1, loss=0",)
    assert converted.source == str(SMALL_PAIRWISE)
    # (q1, B) was judged twice by r1 (against A and against C): two judgments, inherent, not duplicates
    assert converted.judgments_per_response().tolist() == [1, 2, 1, 1, 1]


def test_conversion_credit_and_bad_winner() -> None:
    table = pairwise_from_frame(votes())
    np.testing.assert_allclose(pairwise_to_annotations(table, credit="0,0.4,1").credit, [0, 0.4, 1])
    with pytest.raises(InputError, match="3 levels"):
        pairwise_to_annotations(table, credit=[0, 1])
    raw = PairwiseTable(votes(winner=["a", "model_b", "tie"]), source="raw")
    with pytest.raises(InputError) as excinfo:
        pairwise_to_annotations(raw)
    assert str(excinfo.value).startswith("raw, row 2, column 'winner'") and "'model_b'" in str(excinfo.value)


# ====================================================================================== read_any
def test_read_any_detects_both_kinds(tmp_path: Path) -> None:
    pairwise = read_any(SMALL_PAIRWISE)
    assert pairwise.levels == ("loss", "tie", "win") and pairwise.n_judgments == 6
    single = read_any(FIXTURES / "small_annotations.csv", levels="bad,ok,good")
    assert single.levels == ("bad", "ok", "good") and single.n_judgments == 5
    with pytest.raises(InputError, match="no agent column"):
        read_any(SMALL_PAIRWISE, pairwise=False)
    path = tmp_path / "votes.jsonl"
    pd.read_csv(SMALL_PAIRWISE).to_json(path, orient="records", lines=True)
    assert judgments(read_any(path)) == judgments(pairwise)
    assert judgments(read_any(path, pairwise=True, format="jsonl")) == judgments(pairwise)


def test_read_any_pairwise_levels_and_credit() -> None:
    with pytest.raises(InputError) as excinfo:
        read_any(SMALL_PAIRWISE, levels=["bad", "good"])
    text = str(excinfo.value)
    assert str(SMALL_PAIRWISE) in text and "fixed" in text and "loss, tie, win" in text and "credit=" in text
    assert "--credit" in excinfo.value.spelled(flag_spelling)
    np.testing.assert_allclose(read_any(SMALL_PAIRWISE, credit="0,0.3,1").credit, [0, 0.3, 1])
    with pytest.raises(InputError) as excinfo:
        read_any(SMALL_PAIRWISE, credit="0,1")
    assert "3 levels (loss, tie, win)" in str(excinfo.value)
