"""The pairwise task type's question files (:mod:`stableval.portal.tasks.pairwise`; its results:
``test_pairwise_results.py``), each regression of the security reviews named in its docstring."""

from __future__ import annotations

from pathlib import Path

import pytest

from stableval.errors import InputError
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question


def test_jsonl_objects_and_lists_are_refused_not_stored_as_python_text(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F22): a pairwise JSON Lines file was read through the flat-table
    reader, so ``{"prompt": {"x": 1}}`` was stored and shown as ``{'x': '1'}`` and ``["l"]`` as ``['l']``. Now a
    cell that is an object or a list is refused with its row and column, as the other task types do; numbers
    are their text."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "p", k=1)
    path = tmp_path / "q.jsonl"
    good = '{"id": 1, "prompt": "P", "model_a": "A", "answer_a": "a", "model_b": "B", "answer_b": 2}\n'
    for bad, column in (('"prompt": {"x": 1}', "prompt"), ('"answer_a": ["l"]', "answer_a")):
        field = bad.split(":")[0]
        line = good.replace(f'{field}: "P"' if field == '"prompt"' else f'{field}: "a"', bad)
        path.write_text(good.replace('"id": 1', '"id": 0') + line)
        with pytest.raises(InputError, match="not text") as caught:
            import_questions(db, "p", path)
        assert (caught.value.row, caught.value.column) == (2, column)
    path.write_text(good)
    assert import_questions(db, "p", path) == 1
    with db.reading() as session:
        question = session.query(Question).one()
        assert (question.external_id, question.answer_b) == ("1", "2")
    db.dispose()


def test_a_csv_with_id_and_ID_columns_is_refused(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F22): a CSV with both ``ID`` and ``id`` imported silently with
    one of them (the last seen). Now it is refused, naming both."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "p", k=1)
    path = tmp_path / "q.csv"
    path.write_text("ID,id,prompt,model_a,answer_a,model_b,answer_b\nX,q1,P,A,a,B,b\n")
    with pytest.raises(InputError, match=r"column named twice.*got 'ID and id'"):
        import_questions(db, "p", path)
    db.dispose()
