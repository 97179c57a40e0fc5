"""Issue 32: the Chatbot Arena / FastChat importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stableval import InputError
from stableval.cli import app

from importer_files import load, runner, write_json, write_lines


def battle(qid: str, a: str, b: str, winner: str, judge: str = "arena_user_973", turn: int = 1) -> dict[str, Any]:
    return {"question_id": qid, "model_a": a, "model_b": b, "winner": winner, "judge": judge,
            "conversation_a": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            "conversation_b": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}],
            "turn": turn, "anony": True, "language": "English", "tstamp": 1682351591.1322,
            "openai_moderation": {"flagged": False}, "toxic_chat_tag": {"roberta-large": {"flagged": False}}}


BATTLES = [battle("58210e39", "chatglm-6b", "koala-13b", "model_b"),
           battle("2564acd0", "oasst-pythia-12b", "alpaca-13b", "tie"),
           battle("90bfd142", "koala-13b", "oasst-pythia-12b", "model_a", judge="arena_user_88"),
           battle("a7c5accc", "vicuna-13b", "oasst-pythia-12b", "tie (bothbad)")]


@pytest.mark.parametrize("layout", ["json", "jsonl", "parquet"])
def test_arena_battle_logs_in_every_layout(tmp_path: Path, layout: str) -> None:
    if layout == "json":
        path = write_json(tmp_path / "clean_battle_20230522.json", BATTLES)
    elif layout == "jsonl":
        path = write_lines(tmp_path / "battles.jsonl", BATTLES)
    else:
        path = tmp_path / "train-00000-of-00001.parquet"
        pd.DataFrame(BATTLES).to_parquet(path)
    votes = load(path, "arena").votes
    assert votes is not None
    assert votes.frame["winner"].tolist() == ["b", "tie", "a", "tie"]
    assert "1 both-bad vote(s) (both answers bad) counted as ties" in votes.notes


def test_arena_one_hot_winners_questions_per_turn_and_bad_winner(tmp_path: Path) -> None:
    kaggle = [{"id": 30192, "model_a": "gpt-4-1106-preview", "model_b": "gpt-4-0613", "prompt": "[]",
               "response_a": "[]", "response_b": "[]", "winner_model_a": 1, "winner_model_b": 0, "winner_tie": 0},
              {"id": 53567, "model_a": "koala-13b", "model_b": "gpt-4-0613", "prompt": "[]", "response_a": "[]",
               "response_b": "[]", "winner_model_a": 0, "winner_model_b": 0, "winner_tie": 1}]
    votes = load(write_json(tmp_path / "train.json", kaggle), "arena").votes
    assert votes is not None and votes.frame[["item", "rater", "winner"]].values.tolist() == [
        ["30192", "anonymous", "a"], ["53567", "anonymous", "tie"]]
    human = [battle("81", "gpt-4", "claude-v1", "model_a", judge="expert_0", turn=1),
             battle("81", "gpt-4", "claude-v1", "tie", judge="expert_0", turn=2)]
    votes = load(write_json(tmp_path / "human.json", human), "arena").votes
    assert votes is not None and votes.frame["item"].tolist() == ["81-turn1", "81-turn2"]
    bad = write_json(tmp_path / "bad.json", [*BATTLES[:2], battle("x", "A", "B", "model_c")])
    with pytest.raises(InputError) as error:
        load(bad, "arena")
    assert (error.value.row, error.value.column, error.value.value) == (3, "winner", "model_c")
    assert "tie (bothbad)" in str(error.value.allowed)


def test_pairwise_from_arena_end_to_end(tmp_path: Path) -> None:
    path = write_json(tmp_path / "clean_battle.json", BATTLES * 3)
    result = runner.invoke(app, ["pairwise", "--from", "arena", str(path), "-B", "10", "--prior", "1",
                                 "--duplicates", "keep"])
    assert result.exit_code == 0, result.output
    assert "both-bad" in result.output and "koala-13b" in result.output
