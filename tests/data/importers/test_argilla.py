"""Issue 32: the Argilla importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stableval import InputError

from importer_files import load, write_json


def argilla_folder(tmp_path: Path, questions: list[dict[str, Any]], records: list[dict[str, Any]]) -> Path:
    """The folder ``Dataset.to_disk`` writes: records.json, .argilla/settings.json, .argilla/dataset.json."""
    folder = tmp_path / "my_dataset"
    write_json(folder / ".argilla" / "dataset.json", {"name": "my_dataset", "status": "ready"})
    write_json(folder / ".argilla" / "settings.json", {
        "guidelines": None, "allow_extra_metadata": False, "vectors": [], "metadata": [],
        "fields": [{"name": "prompt", "title": "prompt", "required": True, "settings": {"type": "text"}}],
        "questions": questions})
    write_json(folder / "records.json", records)
    return folder


def argilla_record(record_id: str, model: str, responses: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"id": record_id, "fields": {"prompt": "...", "response": "..."}, "metadata": {"model": model},
            "suggestions": {"quality": {"value": 3, "score": None, "agent": "gpt-4"}}, "responses": responses,
            "vectors": {}, "_server_id": "5c7a1b0e-0000-4000-8000-000000000000"}


def response(value: Any, user: str, status: str = "submitted") -> dict[str, Any]:
    return {"value": value, "user_id": user, "status": status}


RATING = {"name": "quality", "title": "Quality", "required": True,
          "settings": {"type": "rating", "options": [{"value": v} for v in range(1, 8)]}}
LABEL = {"name": "safe", "title": "Safe?", "required": False,
         "settings": {"type": "label_selection", "options": [{"value": "unsafe", "text": "Unsafe"},
                                                             {"value": "safe", "text": "Safe"}]}}
RANKING = {"name": "preference", "title": "Rank the replies", "required": False,
           "settings": {"type": "ranking", "options": [{"value": "reply-1", "text": "Reply 1"},
                                                       {"value": "reply-2", "text": "Reply 2"},
                                                       {"value": "reply-3", "text": "Reply 3"}]}}


def test_argilla_folder_rating_label_and_ranking_questions(tmp_path: Path) -> None:
    records = [
        argilla_record("r1", "model-a", {"quality": [response(6, "u1"), response(2, "u2", "discarded")],
                                         "safe": [response("safe", "u1")],
                                         "preference": [response(["reply-2", "reply-1", "reply-3"], "u1")]}),
        argilla_record("r2", "model-b", {"quality": [response(3, "u1"), response(4, "u2", "draft")],
                                         "safe": [response("unsafe", "u2")],
                                         "preference": [response(["reply-1", "reply-3", "reply-2"], "u2")]}),
        argilla_record("r3", "model-a", {}),
    ]
    folder = argilla_folder(tmp_path, [RATING, LABEL, RANKING], records)
    rating = load(folder, "argilla", columns={"label": "quality"})
    assert rating.table.levels == tuple(str(v) for v in range(1, 8))  # the settings' scale, not only what was given
    assert rating.table.to_frame()[["item", "agent", "rater", "label"]].values.tolist() == [
        ["r1", "model-a", "u1", "6"], ["r2", "model-b", "u1", "3"]]
    notes = "\n".join(rating.table.notes)
    for counted in ("left out 1 discarded response(s)", "left out 1 draft response(s) (not submitted)",
                    "left out 1 record(s) without a submitted response to 'quality'"):
        assert counted in notes
    with pytest.raises(InputError, match="words, whose order") as words:
        load(folder, "argilla", columns={"label": "safe"})
    assert words.value.option == "levels" and "unsafe,safe" in str(words.value)
    assert load(folder, "argilla", columns={"label": "safe"}, levels="unsafe,safe").table.n_judgments == 2
    ranking = load(folder, "argilla", columns={"label": "preference"})
    assert ranking.votes is not None and ranking.votes.n_votes == 6
    assert set(ranking.votes.frame["agent_a"]) | set(ranking.votes.frame["agent_b"]) == {"reply-1", "reply-2",
                                                                                          "reply-3"}
    with pytest.raises(InputError, match="answers 3 questions") as several:
        load(folder, "argilla")
    assert several.value.option == "columns.label"


def test_argilla_flattened_records_and_rank_ties(tmp_path: Path) -> None:
    """``records.to_list(flatten=True)`` / Hub exports: ``q.responses``, ``q.responses.users``,
    ``q.responses.status``; v1-style rankings ``[{"value", "rank"}]`` may tie."""
    flat = [{"id": "r1", "prompt": "...", "model": "model-a", "quality.responses": [5, 2],
             "quality.responses.users": ["u1", "u2"], "quality.responses.status": ["submitted", "discarded"]},
            {"id": "r2", "prompt": "...", "model": "model-b", "quality.responses": [3],
             "quality.responses.users": ["u1"], "quality.responses.status": ["submitted"]}]
    loaded = load(write_json(tmp_path / "records.json", flat), "argilla")
    assert loaded.table.to_frame()["label"].tolist() == ["5", "3"]
    assert loaded.table.levels == ("3", "4", "5")  # no settings beside the file: the values given
    ranked = [{"id": "r1", "fields": {}, "metadata": {}, "responses": {"rank": [
        response([{"value": "x", "rank": 1}, {"value": "y", "rank": 1}, {"value": "z", "rank": 2}], "u1")]}}]
    votes = load(write_json(tmp_path / "ranked" / "records.json", ranked), "argilla").votes
    assert votes is not None and votes.frame["winner"].tolist() == ["tie", "a", "a"]


def test_argilla_list_answers_without_settings_are_ambiguous(tmp_path: Path) -> None:
    records = [{"id": "r1", "fields": {}, "metadata": {"model": "A"},
                "responses": {"topics": [response(["a", "b"], "u1")]}}]
    path = write_json(tmp_path / "records.json", records)
    with pytest.raises(InputError, match="ranking or a multi-label"):
        load(path, "argilla", columns={"label": "topics"})
    with pytest.raises(InputError, match="no question with answers"):
        load(path, "argilla")
