"""Issue 32: the MT-Bench judgments importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stableval import InputError

from importer_files import load, write_lines


def pair(qid: int, m1: str, m2: str, g1: str, g2: str, turn: int = 1) -> dict[str, Any]:
    return {"question_id": qid, "model_1": m1, "model_2": m2, "g1_winner": g1, "g2_winner": g2,
            "judge": ["gpt-4", "pair-v2" if turn == 1 else "pair-v2-multi-turn"], "g1_user_prompt": "...",
            "g1_judgment": "[[A]]", "g2_user_prompt": "...", "g2_judgment": "[[B]]", "turn": turn,
            "tstamp": 1687221890.6}


def test_mt_bench_pair_judgments(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "gpt-4_pair.jsonl", [
        pair(81, "alpaca-13b", "gpt-3.5-turbo", "model_2", "model_2"),
        pair(81, "alpaca-13b", "gpt-3.5-turbo", "model_1", "tie", turn=2),
        pair(82, "llama-13b", "gpt-3.5-turbo", "error", "model_2"),
        pair(82, "vicuna-13b", "gpt-3.5-turbo", "tie", "tie")])
    loaded = load(path, "mt-bench-judge")
    assert loaded.votes is not None
    assert loaded.votes.frame[["item", "agent_a", "rater", "winner"]].values.tolist() == [
        ["81-turn1", "alpaca-13b", "gpt-4", "b"], ["81-turn2", "alpaca-13b", "gpt-4", "tie"],
        ["82-turn1", "vicuna-13b", "gpt-4", "tie"]]
    notes = "\n".join(loaded.votes.notes)
    assert "1 judgment(s) whose two position orders disagree counted as ties" in notes
    assert "left out 1 judgment(s) with a verdict 'error'" in notes
    bad = write_lines(tmp_path / "bad.jsonl", [pair(81, "a", "b", "model_3", "tie")])
    with pytest.raises(InputError) as error:
        load(bad, "mt-bench-judge")
    assert (error.value.row, error.value.column, error.value.value) == (1, "g1_winner", "model_3")


def test_mt_bench_single_judgments_are_ratings_one_to_ten(tmp_path: Path) -> None:
    def single(qid: int, model: str, score: float, turn: int = 1) -> dict[str, Any]:
        return {"question_id": qid, "model": model, "judge": ["gpt-4", "single-v1"], "user_prompt": "...",
                "judgment": f"Rating: [[{score}]]", "score": score, "turn": turn, "tstamp": 1687221890.6}

    path = write_lines(tmp_path / "gpt-4_single.jsonl", [
        single(81, "vicuna-13b", 9.0), single(81, "llama-13b", 2.0), single(82, "vicuna-13b", 7.5),
        single(82, "llama-13b", -1), single(81, "vicuna-13b", 8.0, turn=2)])
    table = load(path, "mt-bench-judge").table
    assert table.levels[:3] == ("1", "2", "3") and "7.5" in table.levels and table.levels[-1] == "10"
    assert table.credit[table.levels.index("7.5")] == pytest.approx(6.5 / 9)
    assert "left out 1 judgment(s) scored -1 (the verdict could not be parsed)" in table.notes
    assert set(table.items) == {"81-turn1", "82-turn1", "81-turn2"}
