"""Every registered task type works through the whole portal from its declaration alone, as tests/test_registry.py
checks every aggregation method: its example question file is imported by ``stableval portal import``, two raters
claim, answer every step on the rater pages and submit, the track exports (Python and ``stableval portal
export``), the admin's track and results pages render, and the live rater tables (the rater model, or the
consensus order for rankings) see both raters. A new type in :data:`~stableval.portal.tasks.registry.TASKS` is
picked up here with no edit; its templates must exist and docs/portal.md must describe it (issue 25)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of, form_token_of, invite_tokens, start_rater
from sqlalchemy import select
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.commands.portal import TaskName
from stableval.portal.admin.export import export
from stableval.portal.admin.live_diagnostics import track_diagnostics
from stableval.portal.admin.manage import create_track
from stableval.portal.admin.order_agreement import track_order_agreement
from stableval.portal.store.models import Assignment, Question, Submission, Track
from stableval.portal.tasks.registry import TASKS, task_names
from stableval.portal.web.app import create_app

PORTAL = Path(__file__).resolve().parents[3] / "src" / "stableval" / "portal"
DOCS = Path(__file__).resolve().parents[3] / "docs" / "portal.md"
QUESTIONS = 3
runner = CliRunner()


def test_the_command_line_names_every_registered_type() -> None:
    assert task_names() == tuple(TASKS) == tuple(name.value for name in TaskName)
    refused = runner.invoke(cli_app, ["portal", "track", "t", "--task", "no-such-type"])
    assert refused.exit_code == 2 and "--task" in refused.output


@pytest.mark.parametrize("name", list(TASKS))
def test_every_template_exists(name: str) -> None:
    task = TASKS[name]
    for step in (*task.steps, "confirm", "results"):
        assert step in task.templates, f"{name}: no template for {step}"
    missing = [template for template in task.templates.values() if not (PORTAL / "templates" / template).exists()]
    assert not missing, f"{name}: templates missing in portal/templates: {missing}"


@pytest.mark.parametrize("name", list(TASKS))
def test_the_docs_describe_every_type(name: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert f"| `{name}` |" in text, f"docs/portal.md: add a row for {name} to the task types table"


def _answer_question(client: TestClient, db: Any, page: Any) -> None:
    """From a question's first step page: every step answered with the type's example answer, then submitted."""
    found = re.search(r"/a/(\d+)/", str(page.url))
    assert found and page.status_code == 200, (page.url, page.text[:300])
    assignment = int(found.group(1))
    with db.reading() as session:
        question = session.get_one(Question, session.get_one(Assignment, assignment).question_id)
        track = session.get_one(Track, question.track_id)
    task = TASKS[track.task_type]
    for step in task.steps:
        assert str(page.url).endswith(task.step_url(assignment, step)), (page.url, step)
        page = client.post(task.step_url(assignment, step),
                           data={"csrf": csrf_of(page.text), "action": "next",
                                 **task.example_answer(track, question, step)})
        assert page.status_code == 200, page.text[:500]
    assert str(page.url).endswith(task.step_url(assignment, "confirm")) and "Check and submit" in page.text
    digest = re.search(r'name="digest" value="([^"]+)"', page.text)
    assert digest
    done = client.post(f"/a/{assignment}/submit", data={"csrf": csrf_of(page.text), "digest": digest.group(1),
                                                        "form_token": form_token_of(page.text)})
    assert done.status_code == 200 and str(done.url).endswith("/progress?saved=1"), done.text[:300]


@pytest.mark.parametrize("name", list(TASKS))
def test_every_type_through_the_portal(name: str, tmp_path: Path) -> None:
    task = TASKS[name]
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    db = app.state.portal.db
    create_track(db, "t", title="T", task=name, k=2, **task.example_settings)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(task.example_question(n)) + "\n" for n in range(QUESTIONS)))
    imported = runner.invoke(cli_app, ["portal", "import", "t", str(questions), "--task", name,
                                       "--database-url", url])
    assert imported.exit_code == 0, imported.output
    assert f"imported {QUESTIONS} questions" in imported.output

    for token in invite_tokens(db, 2):  # each rater answers every question (k = 2)
        client = TestClient(app)
        start_rater(client, token)
        for _ in range(QUESTIONS):
            progress = client.get("/progress")
            _answer_question(client, db, client.post("/tracks/t/next", data={"csrf": csrf_of(progress.text)}))
    with db.reading() as session:
        assert len(session.scalars(select(Submission)).all()) == 2 * QUESTIONS

    result = export(db, track="t")
    assert len(result.frame) > 0 and result.task == name
    target = tmp_path / ("export.json" if result.selectors is not None else "export.csv")
    written = runner.invoke(cli_app, ["portal", "export", "t", "-o", str(target), "--database-url", url])
    assert written.exit_code == 0 and target.exists() and target.stat().st_size > 0, written.output

    admin = TestClient(app)
    admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    track_page = admin.get("/admin/tracks/t")
    assert track_page.status_code == 200 and f"Task: {name}." in track_page.text
    results = admin.get("/admin/tracks/t/results")
    assert results.status_code == 200 and "Results" in results.text

    if task.ordering:
        order = track_order_agreement(db, "t", cache=False)
        assert [r.answers for r in order.raters] == [QUESTIONS, QUESTIONS] and order.measure
    elif task.categorical:
        live = track_diagnostics(db, "t", cache=False)
        assert live.message == "" and len(live.raters) == 2, live.message
    db.dispose()
