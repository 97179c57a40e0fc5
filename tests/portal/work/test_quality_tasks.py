"""Quality control of the task types other than pairwise (single, mcq, ddx, rank-documents): the gold column read
and validated per type, gold judged per type, planted bad raters (always the same answer, random) paused and honest
ones not, on SQLite and PostgreSQL, the qualification set, and exports that leave gold questions out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from planted_task_raters import TASKS, gold_answers, seed, track_of, work_in_rounds, write_questions
from portal_helpers import profiled_raters
from sqlalchemy import select
from task_helpers import CONDITIONS

from stableval.errors import InputError
from stableval.portal.admin.export import export_task
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Question
from stableval.portal.tasks.records import GOLD_MARK
from stableval.portal.tasks.registry import TASKS as TASK_TYPES
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.quality import rater_quality, set_override

REGULAR, GOLD = 10, 6


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    database.upgrade()
    yield database
    database.dispose()


@pytest.mark.parametrize("task", TASKS)
def test_planted_bad_raters_are_paused_and_honest_ones_are_not(db: Database, tmp_path: Path, task: str) -> None:
    seed(db, tmp_path, task, regular=REGULAR, gold=GOLD, k=4, gold_rate=0.5, qc_threshold=0.7, qc_min_gold=3)
    honest, constant, random = profiled_raters(db, 2), *profiled_raters(db, 2)
    behaviours = {honest[0]: "honest", honest[1]: "honest", constant: "constant", random: "random"}
    work = work_in_rounds(db, "t", task, behaviours, rounds=30)
    track = track_of(db)
    with db.reading() as session:
        quality = rater_quality(session, track)
    for rater in (constant, random):
        assert work[rater][-1] == "paused", (behaviours[rater], work[rater])
        assert quality[rater].paused and quality[rater].gold_answered == 3
        assert quality[rater].accuracy is not None and quality[rater].accuracy < 0.7
        assert sum(item.startswith("q") for item in work[rater]) < REGULAR  # stopped before the end
        assert claim_next(db, rater, "t").reason == "paused"
    assert quality[constant].accuracy == 0.0  # the gold answers are never the constant rater's answer
    for rater in honest:
        assert work[rater][-1] == "None" and not quality[rater].paused, work[rater]
        assert quality[rater].accuracy == 1.0 and quality[rater].status == "ok"
        assert 2 <= sum(item.startswith("g") for item in work[rater]) <= GOLD  # gold mixed in
    # judgments: one per checked criterion of a single-answer gold question, one per answer otherwise
    per_gold = 2 if task == "single" else 1
    assert quality[honest[0]].judgments == per_gold * quality[honest[0]].gold_answered

    exported = export_task(db, "t")
    column = {"single": "item", "mcq": "qid", "ddx": "case", "rank-documents": "qid"}[task]
    assert len(exported.frame) and not exported.frame[column].astype(str).str.startswith("g").any()
    gold_done = sum(item.startswith("g") for items in work.values() for item in items)
    assert f"{gold_done} submission(s) of gold (quality-control) questions left out" in exported.notes
    if task == "ddx":
        assert all(case.startswith("q") for case in exported.cases)

    set_override(db, "t", constant, "allow")  # the admin lets them go on ...
    assert claim_next(db, constant, "t").assignment_id is not None
    set_override(db, "t", honest[0], "pause")  # ... or pauses an honest rater
    assert claim_next(db, honest[0], "t").reason in ("paused", "none")


@pytest.mark.parametrize("task", TASKS)
def test_qualification_set_comes_first(tmp_path: Path, task: str) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    seed(db, tmp_path, task, regular=4, gold=3, k=2, qualification=2, qc_threshold=0.8, qc_min_gold=3)
    good, sloppy = profiled_raters(db, 2)
    first = work_in_rounds(db, "t", task, {good: "honest"}, rounds=3)[good]
    assert first[:2] == ["g0", "g1"] and first[2].startswith("q")  # qualified: regular questions next
    assert work_in_rounds(db, "t", task, {sloppy: "constant"}, rounds=3)[sloppy] == ["g0", "g1", "paused"]
    db.dispose()


def test_gold_is_stored_in_the_payload_and_hidden_from_the_mark(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    for task in TASKS:
        seed(db, tmp_path, task, regular=1, gold=2, slug=task.replace("-", ""))
    with db.reading() as session:
        golds = {(q.external_id, q.track_id): (q.gold, (q.payload or {}).get("gold"))
                 for q in session.scalars(select(Question))}
    stored = sorted(golds.items(), key=lambda kv: kv[0][1])
    assert [g for (ext, _), (mark, g) in stored if ext == "q0"] == [None] * 4
    assert {mark for (ext, _), (mark, _) in stored if ext.startswith("g")} == {GOLD_MARK}
    by_track = [g for (ext, _), (_, g) in stored if ext == "g1"]
    assert by_track == [gold_answers("single", 2)[1], "C", CONDITIONS.index(gold_answers("ddx", 2)[1]),
                        gold_answers("rank-documents", 2)[1]]
    db.dispose()


@pytest.mark.parametrize(("task", "cell", "problem", "allowed"), [
    ("single", "excellent", "bad gold level accuracy=excellent", "incorrect, partial, correct"),
    ("single", "accuracy=correct; kindness=partial", "bad gold level kindness=partial", "accuracy, safety"),
    ("single", "accuracy=correct;accuracy=partial", "criterion accuracy twice", "criterion=level"),
    ("single", "accuracy=na", "bad gold level accuracy=na", "incorrect, partial, correct"),
    ("mcq", "E", "not one of the question's options", "A, B, C, D"),
    ("mcq", ["A"], "not one of the question's options", "A, B, C, D"),
    ("ddx", "Measles", "not in the track's condition list", "Eczema, Psoriasis"),
    ("rank-documents", "d9", "item ids of this question", "ans, d0, d1, d2"),
    ("rank-documents", ["d0", "d0"], "item ids of this question", "the first is the planted best item"),
])
def test_bad_gold_cells_are_refused_with_file_row_and_column(tmp_path: Path, task: str, cell: object, problem: str,
                                                             allowed: str) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    seed(db, tmp_path, task, regular=2, gold=0)
    path = write_questions(tmp_path / "", task, 2, 1)
    if path.suffix == ".csv":
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        frame.loc[2, "gold"] = cell
        frame["id"] = frame["id"] + "x"
        frame.to_csv(path, index=False)
    else:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        rows[2]["gold"] = cell
        for row in rows:
            row["id"] += "x"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as caught:
        import_questions(db, "t", path)
    error = caught.value
    assert (error.file, error.row, error.column) == (str(path), 3, "gold"), error
    assert problem in error.problem and allowed in str(error.allowed), error
    with db.reading() as session:  # all or nothing
        assert len(session.scalars(select(Question)).all()) == 2
    db.dispose()


def test_gold_cells_in_other_spellings(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "s", task="single", scale="1,2,3", criteria=["accuracy", "Bedside manner"])
    pd.DataFrame({"id": ["a", "b", "c", "d"], "prompt": "p", "model": "m", "answer": "x",
                  "gold": ["3", '{"Bedside manner": 2}', "", "ACCURACY = 1"]}).to_csv(tmp_path / "s.csv", index=False)
    assert import_questions(db, "s", tmp_path / "s.csv") == 4
    create_track(db, "d", task="ddx", conditions=CONDITIONS)
    pd.DataFrame({"id": ["a"], "prompt": ["p"], "gold": ["  tinea   CORPORIS "]}).to_csv(tmp_path / "d.csv",
                                                                                      index=False)
    import_questions(db, "d", tmp_path / "d.csv")
    create_track(db, "m", task="mcq")
    pd.DataFrame({"id": ["a"], "prompt": ["p"], "A": ["x"], "B": ["y"], "answer_idx": ["A"], "gold": ["b"]}
                 ).to_csv(tmp_path / "m.csv", index=False)
    import_questions(db, "m", tmp_path / "m.csv")
    with db.reading() as session:
        golds = [(q.payload or {}).get("gold") for q in session.scalars(select(Question).order_by(Question.id))]
    assert golds == [{"accuracy": "3", "bedside_manner": "3"}, {"bedside_manner": "2"}, None,
                                    {"accuracy": "1"}, 2, "B"]
    db.dispose()


def test_gold_scores_per_task_type() -> None:
    """Hand-worked cases of the rule of each task type (see each module of stableval.portal.tasks)."""
    keys = ["accuracy", "safety"]
    assert TASK_TYPES["single"].score_gold({"accuracy": "correct"}, {"levels": {"accuracy": "correct", "safety": "x"}},
                      keys) == (1, 1)
    assert TASK_TYPES["single"].score_gold({"accuracy": "correct", "safety": "partial"},
                      {"levels": {"accuracy": "partial", "safety": "partial"}}, keys) == (2, 1)
    assert TASK_TYPES["mcq"].score_gold("C", {"blind": ["C"]}, keys) == (1, 1)
    assert TASK_TYPES["mcq"].score_gold("C", {"blind": []}, keys) == (1, 0)  # "no option answers" is wrong here
    assert TASK_TYPES["ddx"].score_gold(2, {"groups": [[0, 2], [1]]}, keys) == (1, 1)  # equally likely first: counts
    assert TASK_TYPES["ddx"].score_gold(2, {"groups": [[0], [2]]}, keys) == (1, 0)
    assert TASK_TYPES["rank-documents"].score_gold(["d1", "d0"], {"order": ["d1", "d2", "d0"]}, keys) == (1, 1)
    assert TASK_TYPES["rank-documents"].score_gold(["d1", "d0"], {"order": ["d0", "d1", "d2"]}, keys) == (1, 0)

