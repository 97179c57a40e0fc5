"""Pairwise votes: validation, duplicate policies, conversion to judgments, detection, bundled example."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stableval.commands.common import flag_spelling
from stableval.data import (
    AnnotationTable,
    PairwiseTable,
    example_path,
    is_pairwise_frame,
    pairwise_from_frame,
    pairwise_to_annotations,
    read_any,
    read_pairwise,
)
from stableval.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SMALL = DATA / "small_pairwise.csv"
MT_BENCH_SOURCE = (Path(__file__).resolve().parents[2] / "shared" / "data" / "mt_bench_human_judgments"
                   / "cprentice9_eval_platform" / "data" / "mt_bench" / "human_judgments.jsonl")


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
    assert is_pairwise_frame(pd.read_csv(SMALL))
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
    table = read_pairwise(SMALL)
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
    assert converted.source == str(SMALL)
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
    pairwise = read_any(SMALL)
    assert pairwise.levels == ("loss", "tie", "win") and pairwise.n_judgments == 6
    single = read_any(DATA / "small_annotations.csv", levels="bad,ok,good")
    assert single.levels == ("bad", "ok", "good") and single.n_judgments == 5
    with pytest.raises(InputError, match="no agent column"):
        read_any(SMALL, pairwise=False)
    path = tmp_path / "votes.jsonl"
    pd.read_csv(SMALL).to_json(path, orient="records", lines=True)
    assert judgments(read_any(path)) == judgments(pairwise)
    assert judgments(read_any(path, pairwise=True, format="jsonl")) == judgments(pairwise)


def test_read_any_pairwise_levels_and_credit() -> None:
    with pytest.raises(InputError) as excinfo:
        read_any(SMALL, levels=["bad", "good"])
    text = str(excinfo.value)
    assert str(SMALL) in text and "fixed" in text and "loss, tie, win" in text and "credit=" in text
    assert "--credit" in excinfo.value.spelled(flag_spelling)
    np.testing.assert_allclose(read_any(SMALL, credit="0,0.3,1").credit, [0, 0.3, 1])
    with pytest.raises(InputError) as excinfo:
        read_any(SMALL, credit="0,1")
    assert "3 levels (loss, tie, win)" in str(excinfo.value)


# ====================================================================================== bundled example
def test_bundled_mt_bench_example() -> None:
    path = example_path()
    assert path.is_file() and path == example_path("mt_bench")
    votes_table = read_pairwise(path, duplicates="keep")
    assert votes_table.n_votes == 1689
    assert Counter(votes_table.frame["winner"]) == {"a": 656, "b": 628, "tie": 405}  # SOURCE.md counts
    table = read_any(path, duplicates="keep")
    assert table.n_judgments == 3378
    assert (table.n_raters, table.n_agents, table.n_items) == (65, 6, 80)
    assert sorted(table.agents) == ["alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b",
                                    "vicuna-13b-v1.2"]
    assert table.notes[-1] == "1,689 pairwise votes converted to 3,378 judgments: win=2, tie=1, loss=0"
    # each vote gives one winner and one loser judgment, or two ties
    assert np.bincount(table.label, minlength=3).tolist() == [656 + 628, 2 * 405, 656 + 628]


def test_bundled_example_has_one_repeated_vote() -> None:
    with pytest.raises(InputError) as excinfo:
        read_any(example_path())
    text = str(excinfo.value)
    assert "rows 992 and 994 (lines 993 and 995)" in text
    assert "item 'q128-turn1'" in text and "rater 'author_0'" in text and "duplicates=" in text
    assert "--duplicates" in excinfo.value.spelled(flag_spelling)
    assert read_pairwise(example_path(), duplicates="first").n_votes == 1688


def test_example_path_unknown_name() -> None:
    with pytest.raises(ValueError, match="mt_bench"):
        example_path("arena")


@pytest.mark.skipif(not MT_BENCH_SOURCE.is_file(), reason=f"shared data set not present: {MT_BENCH_SOURCE}")
def test_example_is_what_the_script_makes_from_the_source(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_example_mt_bench", ROOT / "scripts"
                                                  / "make_example_mt_bench.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "votes.csv"
    assert script.convert(MT_BENCH_SOURCE, out) == 1689
    assert out.read_bytes() == example_path().read_bytes()
    source = [json.loads(line) for line in MT_BENCH_SOURCE.read_text().splitlines() if line.strip()]
    example = pd.read_csv(example_path(), dtype=str)
    assert example["rater"].tolist() == [vote["judge"] for vote in source]
    assert example["item"].tolist() == [f"q{vote['question_id']}-turn1" for vote in source]
