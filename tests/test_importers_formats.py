"""Issue 32: every importer on a small file built here the way its tool writes it (the tool's documented export
format), with what it leaves out counted, its scale, and its errors naming the file, record, field and value."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import stableval
from stableval import InputError, InputOptions
from stableval.cli import app

runner = CliRunner()


def load(path: Path, importer: str, **options: Any) -> stableval.Loaded:
    return stableval.load(path, InputOptions(importer=importer, **options))


def write_json(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# ====================================================================================== Label Studio
def ls_result(from_name: str, kind: str, value: dict[str, Any], to_name: str = "text") -> dict[str, Any]:
    return {"id": "Dx_aB91ISN", "from_name": from_name, "to_name": to_name, "type": kind, "origin": "manual",
            "value": value}


def ls_annotation(user: Any, results: list[dict[str, Any]], *, cancelled: bool = False) -> dict[str, Any]:
    return {"id": 1001, "completed_by": user, "result": results, "was_cancelled": cancelled, "ground_truth": False,
            "created_at": "2024-03-09T22:16:08.728353Z", "updated_at": "2024-03-09T22:16:08.728378Z",
            "lead_time": 4.288, "result_count": 0, "task": 1, "project": 83}


def ls_task(task_id: int, data: dict[str, Any], annotations: list[dict[str, Any]],
            predictions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": task_id, "data": data, "annotations": annotations, "predictions": predictions or [],
            "created_at": "2024-03-09T21:52:49.513742Z", "updated_at": "2024-03-09T22:16:08.746926Z", "project": 83}


def rating_export(tmp_path: Path) -> Path:
    """Two prompts × two models, two annotators on a 5-star Rating control and a free-text comment; one skipped
    annotation, one task nobody annotated, one model prediction."""
    def stars(user: Any, rating: int) -> dict[str, Any]:
        return ls_annotation(user, [ls_result("quality", "rating", {"rating": rating}),
                                    ls_result("comment", "textarea", {"text": ["ok"]})])

    tasks = [ls_task(1, {"prompt_id": "q1", "model": "model-a", "text": "..."}, [stars(1, 5), stars(2, 4)],
                     predictions=[{"model_version": "v1", "result": [ls_result("quality", "rating", {"rating": 3})]}]),
             ls_task(2, {"prompt_id": "q1", "model": "model-b", "text": "..."},
                     [stars(1, 2), ls_annotation(2, [], cancelled=True)]),
             ls_task(3, {"prompt_id": "q2", "model": "model-a", "text": "..."}, [stars(1, 4), stars(2, 4)]),
             ls_task(4, {"prompt_id": "q2", "model": "model-b", "text": "..."},
                     [stars({"id": 1, "email": "ann@lab.org"}, 1), stars(2, 2)]),
             ls_task(5, {"prompt_id": "q3", "model": "model-a", "text": "..."}, [])]
    return write_json(tmp_path / "export.json", tasks)


def test_label_studio_ratings_count_what_is_left_out(tmp_path: Path) -> None:
    loaded = load(rating_export(tmp_path), "label-studio")
    table = loaded.table
    assert (table.n_judgments, table.n_items, table.n_agents, table.n_raters) == (7, 2, 2, 3)
    assert table.levels == ("1", "2", "3", "4", "5") and list(table.credit) == [0, 0.25, 0.5, 0.75, 1]
    notes = "\n".join(table.notes)
    assert "control 'quality' (rating): 7 answer(s) read" in notes and "item: data.prompt_id" in notes
    for counted in ("left out 1 skipped (cancelled) annotation(s)", "left out 1 task(s) nobody annotated",
                    "left out 1 model prediction(s)"):
        assert counted in notes
    assert "ann@lab.org" in set(table.raters)  # completed_by as an object: its email


def test_label_studio_score_end_to_end_prints_the_left_out_counts(tmp_path: Path) -> None:
    """Done-when of issue 32: ``stableval score --from label-studio export.json`` works end to end."""
    result = runner.invoke(app, ["score", "--from", "label-studio", str(rating_export(tmp_path)), "-B", "20"])
    assert result.exit_code == 0, result.output
    assert "left out 1 skipped (cancelled) annotation(s)" in result.output
    assert "model-a" in result.output and "Leaderboard" in result.output


def test_label_studio_choices_need_their_order_and_several_controls_need_label_col(tmp_path: Path) -> None:
    def verdict(user: int, choice: str) -> dict[str, Any]:
        return ls_annotation(user, [ls_result("verdict", "choices", {"choices": [choice]}),
                                    ls_result("stars", "rating", {"rating": 3})])

    tasks = [ls_task(k, {"item": f"q{k}", "agent": agent}, [verdict(1, choice), verdict(2, "Good")])
             for k, (agent, choice) in enumerate([("A", "Bad"), ("B", "Good"), ("A", "Good")], start=1)]
    tasks[0]["annotations"].append(ls_annotation(3, [ls_result("verdict", "choices",
                                                                {"choices": ["Bad", "Good"]})]))
    path = write_json(tmp_path / "export.json", tasks)
    with pytest.raises(InputError, match="answers 2 controls") as several:
        load(path, "label-studio")
    assert several.value.option == "columns.label" and several.value.allowed == "verdict, stars"
    with pytest.raises(InputError, match="words, whose order") as words:
        load(path, "label-studio", columns={"label": "verdict"})
    assert words.value.option == "levels"
    loaded = load(path, "label-studio", columns={"label": "verdict"}, levels="Bad,Good")
    assert loaded.table.levels == ("Bad", "Good") and loaded.table.n_judgments == 6
    assert "left out 1 answer(s) with several choice(s)" in loaded.table.notes
    result = runner.invoke(app, ["agreement", "--from", "label-studio", str(path)])
    assert result.exit_code == 1 and "--label-col NAME" in result.output


def test_label_studio_pairwise_and_ranker_give_votes(tmp_path: Path) -> None:
    pairwise = [ls_task(k, {"prompt": "p", "question_id": f"q{k}", "model_a": a, "model_b": b, "text1": "...",
                            "text2": "..."},
                        [ls_annotation(1, [ls_result("pw", "pairwise", {"selected": side}, to_name="text1")]),
                         ls_annotation(2, [ls_result("pw", "pairwise", {"selected": "left"}, to_name="text1")])])
                for k, (a, b, side) in enumerate([("A", "B", "right"), ("B", "C", "left")], start=1)]
    votes = load(write_json(tmp_path / "pw.json", pairwise), "label-studio").votes
    assert votes is not None
    assert votes.frame[["agent_a", "agent_b", "rater", "winner"]].values.tolist() == [
        ["A", "B", "1", "b"], ["A", "B", "2", "a"], ["B", "C", "1", "a"], ["B", "C", "2", "a"]]

    items = [{"id": "blog", "title": "...", "body": "..."}, {"id": "mdn", "title": "...", "body": "..."},
             {"id": "wiki", "title": "...", "body": "..."}]
    ranker = [ls_task(1, {"query": "arrow functions", "items": items},
                      [ls_annotation(1, [ls_result("rank", "ranker", {"ranker": ["mdn", "wiki", "blog"]},
                                                   to_name="results")]),
                       ls_annotation(2, [ls_result("rank", "ranker", {"ranker": {"rank": ["wiki", "mdn", "blog"]}},
                                                   to_name="results")]),
                       ls_annotation(3, [ls_result("rank", "ranker", {"ranker": {"best": ["mdn"], "ads": ["blog"]}},
                                                   to_name="results")])])]
    loaded = load(write_json(tmp_path / "ranker.json", ranker), "label-studio")
    assert loaded.votes is not None and loaded.votes.n_votes == 6  # two rankings of three items: 3 pairs each
    first = loaded.votes.frame[loaded.votes.frame["rater"] == "1"]
    assert first[["agent_a", "agent_b", "winner"]].values.tolist() == [
        ["mdn", "wiki", "a"], ["mdn", "blog", "a"], ["wiki", "blog", "a"]]
    notes = "\n".join(loaded.votes.notes)
    assert "2 ranking(s) → 6 pairwise votes" in notes
    assert "left out 1 Ranker answer(s) sorted into buckets" in notes


def test_label_studio_bad_value_names_the_task_field_and_value(tmp_path: Path) -> None:
    tasks = [ls_task(1, {"item": "q1", "model": "A"}, [ls_annotation(1, [ls_result("q", "rating", {"rating": 4})])]),
             ls_task(2, {"item": "q2", "model": "A"}, [ls_annotation(1, [ls_result("q", "rating",
                                                                                  {"rating": "four"})])])]
    with pytest.raises(InputError) as error:
        load(write_json(tmp_path / "export.json", tasks), "label-studio")
    assert (error.value.file, error.value.row, error.value.column, error.value.value) == (
        str(tmp_path / "export.json"), 2, "annotations[0].result[q].value.rating", "four")
    assert error.value.allowed == "a number"


def test_label_studio_table_errors_point_at_the_task_not_the_table_row(tmp_path: Path) -> None:
    tasks = [ls_task(k, {"question_id": f"q{k}", "model_a": "A", "model_b": b},
                     [ls_annotation(1, [ls_result("pw", "pairwise", {"selected": "left"})])])
             for k, b in [(1, "B"), (2, "B"), (3, "A")]]
    with pytest.raises(InputError) as error:
        load(write_json(tmp_path / "export.json", tasks), "label-studio")
    assert error.value.row == 3 and error.value.column is not None and error.value.column.startswith("data.model")


def test_label_studio_export_must_be_the_json_list(tmp_path: Path) -> None:
    path = write_json(tmp_path / "export.json", {"tasks": []})
    with pytest.raises(InputError, match="not a list of tasks") as error:
        load(path, "label-studio")
    assert error.value.file == str(path) and "JSON-MIN" in str(error.value.allowed)


# ====================================================================================== Argilla
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


# ====================================================================================== Mechanical Turk, Prolific
MTURK_HEADER = ["HITId", "HITTypeId", "Title", "Reward", "CreationTime", "MaxAssignments", "AssignmentId", "WorkerId",
                "AssignmentStatus", "AcceptTime", "SubmitTime", "WorkTimeInSeconds", "LifetimeApprovalRate"]


def mturk_csv(path: Path, inputs: list[str], answers: list[str], rows: list[tuple[Any, ...]]) -> Path:
    """A batch results CSV: the assignment columns, Input.*, Answer.*, then Approve and Reject."""
    columns = [*MTURK_HEADER, *(f"Input.{n}" for n in inputs), *(f"Answer.{n}" for n in answers), "Approve",
               "Reject"]
    frame = pd.DataFrame([[f"3H{k}", "3T9", "Rate an answer", "$0.05", "Mon Mar 04 2024", 3, f"3A{k}", worker,
                           status, "Mon Mar 04 2024", "Mon Mar 04 2024", 40, "100% (12/12)", *values]
                          for k, (worker, status, *values) in enumerate(rows)], columns=columns)
    frame.to_csv(path, index=False)
    return path


def test_mturk_batch_results_leave_out_rejected_assignments(tmp_path: Path) -> None:
    path = mturk_csv(tmp_path / "Batch_5012345_batch_results.csv", ["item_id", "model", "response"],
                     ["quality", "comment"],
                     [("A1", "Approved", "q1", "model-a", "...", 4, "fine", "x", ""),
                      ("A2", "Rejected", "q1", "model-a", "...", 1, "", "", "too fast"),
                      ("A3", "Submitted", "q1", "model-a", "...", 5, "", "", "copy-paste answer"),
                      ("A1", "Submitted", "q1", "model-b", "...", 2, "", "", ""),
                      ("A4", "Submitted", "q1", "model-b", "...", "", "", "", "")])
    with pytest.raises(InputError, match="2 answer columns") as several:
        load(path, "mturk")
    assert several.value.option == "columns.label" and several.value.allowed == "quality, comment"
    loaded = load(path, "mturk", columns={"label": "Answer.quality"})
    assert loaded.table.to_frame()[["agent", "rater", "label"]].values.tolist() == [
        ["model-a", "A1", "4"], ["model-b", "A1", "2"]]
    notes = "\n".join(loaded.table.notes)
    assert "left out 2 rejected assignment(s)" in notes  # status Rejected, and a reason in Reject
    assert "left out 1 assignment(s) without an answer in Answer.quality" in notes
    result = runner.invoke(app, ["convert", "mturk", str(path), "--label-col", "quality", "-o",
                                 str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    assert "left out 2 rejected assignment(s)" in result.output


def test_mturk_two_agents_make_pairwise_votes_and_hitid_is_the_item(tmp_path: Path) -> None:
    path = mturk_csv(tmp_path / "batch.csv", ["model_a", "model_b"], ["winner"],
                     [("W1", "Approved", "A", "B", "a", "x", ""), ("W2", "Approved", "A", "B", "tie", "x", "")])
    votes = load(path, "mturk").votes
    assert votes is not None and votes.frame[["item", "winner"]].values.tolist() == [["3H0", "a"], ["3H1", "tie"]]
    assert "item: HITId (no input names the item)" in votes.notes


def test_prolific_leaves_out_rejected_returned_and_timed_out_submissions(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    pd.DataFrame({"PROLIFIC_PID": ["5f1a", "5f1a", "60b2", "60b2", "61c3", "62d4"],
                  "Status": ["APPROVED", "APPROVED", "RETURNED", "RETURNED", "AWAITING REVIEW", "TIMED-OUT"],
                  "question_id": ["q1", "q2", "q1", "q2", "q1", "q1"],
                  "model": ["A", "B", "A", "B", "A", "B"], "rating": [4, 2, 1, 1, 5, 3]}).to_csv(path, index=False)
    loaded = load(path, "prolific")
    assert sorted(loaded.table.to_frame()["rater"]) == ["5f1a", "5f1a", "61c3"]
    notes = "\n".join(loaded.table.notes)
    assert "left out 2 answer(s) of RETURNED submissions" in notes
    assert "left out 1 answer(s) of TIMED-OUT submissions" in notes


# ====================================================================================== Chatbot Arena / FastChat
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


# ====================================================================================== AlpacaEval
def alpaca_rows(model: str, preferences: list[Any]) -> list[dict[str, Any]]:
    instructions = ["How did US states get their names?", "What is a haiku?", "Name three primes.",
                    "Explain recursion."]
    return [{"instruction": instruction, "output_1": "...", "generator_1": "gpt4_1106_preview",
             "dataset": "helpful_base", "output_2": "...", "generator_2": model,
             "annotator": "weighted_alpaca_eval_gpt4_turbo", "preference": preference,
             "price_per_example": 0.0133, "time_per_example": 1.2,
             "raw_completion": {"concise_explanation": "...", "ordered_models": [{"model": "M", "rank": 1}]}}
            for instruction, preference in zip(instructions, preferences, strict=False)]


def test_alpaca_eval_results_folder_gives_llm_votes(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_json(results / "model-a" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
               alpaca_rows("model-a", [1.93, 1.0, None, 1.5]))
    write_json(results / "model-b" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
               alpaca_rows("model-b", [1.12, 2.0, 1.61, 0]))
    loaded = load(results, "alpaca-eval")
    assert loaded.votes is not None
    assert loaded.votes.frame["winner"].tolist() == ["b", "a", "tie", "a", "b", "b", "tie"]
    notes = "\n".join(loaded.votes.notes)
    assert "3 fractional preference(s) counted as a win of the side they lean to" in notes
    assert "left out 1 annotation(s) without a preference" in notes
    result = runner.invoke(app, ["score", "--from", "alpaca-eval", str(results), "--raters", "llm", "-B", "0"])
    assert result.exit_code == 0, result.output
    assert "raters: llm only" in result.output


def test_alpaca_eval_preference_out_of_range(tmp_path: Path) -> None:
    path = write_json(tmp_path / "annotations.json", alpaca_rows("m", [1.2, 3.5]))
    with pytest.raises(InputError) as error:
        load(path, "alpaca-eval")
    assert (error.value.row, error.value.column, error.value.value) == (2, "preference", 3.5)


# ====================================================================================== MT-Bench judgments
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


# ====================================================================================== Inspect
def inspect_log(model: str, scores: list[dict[str, Any]], task: str = "security_guide") -> dict[str, Any]:
    samples = []
    for k, score in enumerate(scores, start=1):
        sample: dict[str, Any] = {"id": k, "epoch": 1, "input": "...", "target": "...", "messages": [],
                                  "output": {"model": model, "choices": []}, "metadata": {}}
        if score:
            sample["scores"] = {name: {"value": value, "answer": "...", "explanation": "..."}
                                for name, value in score.items()}
        else:
            sample["scores"] = {}
            sample["error"] = {"message": "RateLimitError", "traceback": "..."}
        samples.append(sample)
    return {"version": 2, "status": "success",
            "eval": {"run_id": "abc", "created": "2024-05-29T12:38:35", "task": task, "task_id": "t1",
                     "task_version": 0, "model": model, "dataset": {"name": "security_guide", "samples": len(scores)}},
            "plan": {"name": "plan", "steps": []}, "results": {"total_samples": len(scores), "scores": []},
            "stats": {}, "samples": samples}


def eval_zip(path: Path, log: dict[str, Any]) -> Path:
    """An ``.eval`` log as Inspect's eval recorder writes it: start.json, samples/<id>_epoch_<n>.json, results."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": log["plan"]}))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("results.json", json.dumps({"status": "success", "stats": {}, "results": log["results"]}))
    return path


def test_inspect_logs_json_and_eval_in_a_folder(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write_json(logs / "2024-05-29T12-38-35_security-guide_gpt-4o.json", inspect_log("openai/gpt-4o", [
        {"match": "C", "model_graded_fact": "C"}, {"match": "I", "model_graded_fact": "P"}, {}]))
    eval_zip(logs / "2024-05-29T13-01-02_security-guide_claude.eval", inspect_log("anthropic/claude-3-5-sonnet", [
        {"match": "C", "model_graded_fact": "C"}, {"match": "C", "model_graded_fact": {"a": 1}}]))
    write_json(logs / "logs.json", {"index": "of the log viewer"})
    loaded = load(logs, "inspect-ai")
    table = loaded.table
    assert table.levels == ("I", "P", "C") and list(table.credit) == [0.0, 0.5, 1.0]
    assert set(table.agents) == {"openai/gpt-4o", "anthropic/claude-3-5-sonnet"}
    assert set(table.raters) == {"match", "model_graded_fact"} and table.n_judgments == 7
    notes = "\n".join(table.notes)
    assert "left out 1 sample(s) that ended in an error" in notes
    assert "left out 1 score(s) that are not one value" in notes
    one = load(logs, "inspect-ai", columns={"label": "match"}).table
    assert set(one.raters) == {"match"} and one.n_judgments == 4
    result = runner.invoke(app, ["score", "--from", "inspect-ai", str(logs), "--raters", "llm", "-B", "0"])
    assert result.exit_code == 0, result.output


def test_inspect_numeric_scores_and_unknown_scorer(tmp_path: Path) -> None:
    path = write_json(tmp_path / "log.json", inspect_log("m", [{"f1": 0.5}, {"f1": 1.0}, {"f1": "C"}, {"f1": False}]))
    table = load(path, "inspect-ai").table
    assert table.levels == ("0", "0.5", "1") and list(table.credit) == [0.0, 0.5, 1.0]
    assert sorted(table.to_frame()["label"].tolist()) == ["0", "0.5", "1", "1"]
    with pytest.raises(InputError, match="no scorer 'bleu'") as error:
        load(path, "inspect-ai", columns={"label": "bleu"})
    assert error.value.option == "columns.label" and error.value.allowed == "f1"
