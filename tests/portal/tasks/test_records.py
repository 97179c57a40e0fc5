"""Reading question files (:mod:`stableval.portal.tasks.records`), for every registered task type: text that could
not be stored is refused with its row and column (each regression of the security reviews says so in its
docstring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from stableval.errors import InputError
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question
from stableval.portal.tasks.registry import TASKS


@pytest.mark.parametrize("name", list(TASKS))
def test_a_control_character_in_a_question_file_is_refused(db_url: str, tmp_path: Path, name: str) -> None:
    """Regression (issue 26, security review 3, F11): a NUL in an import cell answered 500 on PostgreSQL (it cannot
    store NUL). Now a control character (other than tab and line breaks) in any cell, nested JSON included, is
    refused with the file, row and column, on either database, and nothing is imported."""
    task = TASKS[name]
    db = Database(db_url)
    db.upgrade()
    create_track(db, "t", task=name, **task.example_settings)
    path = tmp_path / "q.jsonl"
    for column, record in (("prompt", {**task.example_question(1), "prompt": "Dose\x00?"}),
                           ("specialty", {**task.example_question(1), "specialty": "card\x1bio"})):
        path.write_text(json.dumps(task.example_question(0)) + "\n" + json.dumps(record) + "\n")
        with pytest.raises(InputError, match=r"control character U\+00(00|1B)") as caught:
            import_questions(db, "t", path)
        assert (caught.value.row, caught.value.column) == (2, column), name
    first = json.dumps(task.example_question(0))
    for bad in (first.replace('"', '"\\u0000', 1),  # a key; then nested text, if the example has any
                first.replace('"text": "', '"text": "\\u0007', 1).replace('"A": "', '"A": "\\u0007', 1)):
        if bad == first:
            continue  # no nested text in this type's example
        path.write_text(bad + "\n")
        with pytest.raises(InputError, match="control character"):
            import_questions(db, "t", path)
    path.write_text(json.dumps({**task.example_question(0), "prompt": "Tabs\tand\r\nbreaks"}) + "\n")
    assert import_questions(db, "t", path) == 1
    db.dispose()


@pytest.mark.parametrize("name", list(TASKS))
def test_a_column_named_twice_is_refused(tmp_path: Path, name: str) -> None:
    """Regression (issue 26, security review 3, F22): a file with both ``ID`` and ``id`` columns imported silently
    with one of them. Now column names that are the same but for case and spaces are refused, naming both."""
    task = TASKS[name]
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "t", task=name, **task.example_settings)
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"ID": "other", **task.example_question(0)}) + "\n")
    with pytest.raises(InputError, match="column named twice") as caught:
        import_questions(db, "t", path)
    assert caught.value.row == 1 and "ID" in str(caught.value) and "'id'" in str(caught.value)
    db.dispose()


@pytest.mark.parametrize("name", list(TASKS))
def test_line_separators_inside_json_strings_are_text(tmp_path: Path, name: str) -> None:
    """Regression (issue 26, security review 3, F13): JSON Lines were split at every Unicode line boundary, so a
    valid line holding U+2028, U+2029 or U+0085 inside a string (as ``JSON.stringify``, ``jq`` and
    ``ensure_ascii=False`` write them) was refused as "not valid JSON". Now only a line feed ends a line."""
    task = TASKS[name]
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "t", task=name, **task.example_settings)
    path = tmp_path / "q.jsonl"
    text = "first\u2028second\u2029third\u0085fourth"
    records = [{**task.example_question(0), "prompt": text}, task.example_question(1)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in records), encoding="utf-8")
    assert import_questions(db, "t", path) == 2
    with db.reading() as session:
        assert session.scalars(select(Question.prompt).order_by(Question.id)).first() == text
    db.dispose()
