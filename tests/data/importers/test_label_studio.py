"""Issue 32: the Label Studio importer on small files built here the way the tool writes them (its
documented export format): what it leaves out is counted; its errors name the file, record, field and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stableval import InputError
from stableval.cli import app

from importer_files import load, runner, write_json


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
