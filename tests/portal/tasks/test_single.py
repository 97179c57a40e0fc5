"""Task types: the framework (track task type, import dispatch, schema), agent transcripts, and the single-answer
rating task end to end (form, validation, drafts, idempotent submit, export read by ``stableval score``)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from portal_helpers import ADMIN, claim, complete_one, csrf_of, questions_frame, seed_track, signed_in_rater
from sqlalchemy import func, select
from task_helpers import TRANSCRIPT, claim_task, submit_confirm, task_rater, write_single
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.export import export_task
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.models import Submission
from stableval.portal.tasks.transcripts import answer_to_html
from stableval.portal.web.app import create_app

runner = CliRunner()
SCALE = "incorrect,partial,correct"


# ------------------------------------------------------------------------------------------------ transcripts
def test_transcript_renders_collapsible_and_escaped() -> None:
    html = answer_to_html(TRANSCRIPT)
    assert html.count('<details class="message') == 4
    assert '<details class="message user" open><summary>User</summary>' in html
    assert '<details class="reasoning"><summary>Reasoning</summary><div class="md"><p>Look up the <strong>label' in html
    assert "<summary>Tool call: fda_label (c1)</summary>" in html
    assert '<details class="message tool"><summary>Tool result: fda_label</summary><pre class="json">' in html
    # arguments and results are escaped JSON text, never markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script" not in html
    assert "&lt;img src=x onerror&#61;alert(2)&gt;" in html and "<img" not in html
    assert "<p>Take <strong>5 mg</strong> daily.</p>" in html
    # OpenAI's nested function form, arguments as a JSON string
    nested = json.dumps([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"aspirin\"}"}}]}])
    assert '"q": "aspirin"' in answer_to_html(nested).replace("&#34;", '"').replace("&quot;", '"')
    # Markdown that merely starts with a bracket stays Markdown
    assert answer_to_html("[link](http://example.org) text").startswith('<p><a href="http://example.org"')


@pytest.mark.parametrize(("answer", "problem"), [
    ('[{"role": "bot", "content": "x"}]', "message 1: role 'bot' is not one of system, user, assistant, tool"),
    ('[{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"arguments": {}}]}]',
     "message 2, tool call 1 has no name"),
    ('[{"role": "user", "content": {"a": 1}}]', "message 1: content is dict"),
    ('[{"role": "user", "content": "x"}, 3]', "message 2 is not an object"),
])
def test_bad_transcripts_are_refused_at_import_with_row_and_column(tmp_path: Path, answer: str, problem: str
                                                                   ) -> None:
    from stableval.portal.store.db import Database

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "pw")
    frame = questions_frame(3)
    frame.loc[2, "answer_b"] = answer
    frame.to_csv(tmp_path / "pw.csv", index=False)
    with pytest.raises(InputError) as caught:
        import_questions(db, "pw", tmp_path / "pw.csv")
    assert (caught.value.row, caught.value.column) == (3, "answer_b") and problem in caught.value.problem
    create_track(db, "one", task="single")
    single = pd.DataFrame({"id": ["a", "b"], "prompt": ["p", "p"], "model": ["m", "m"], "answer": ["fine", answer]})
    single.to_csv(tmp_path / "one.csv", index=False)
    with pytest.raises(InputError) as caught:
        import_questions(db, "one", tmp_path / "one.csv")
    assert (caught.value.row, caught.value.column) == (2, "answer") and problem in caught.value.problem
    with db.reading() as session:
        from stableval.portal.store.models import Question

        assert session.scalar(select(func.count(Question.id))) == 0  # all or nothing
    db.dispose()


def test_pairwise_pages_render_transcripts(portal: tuple[Any, Any], tmp_path: Path) -> None:
    frame = questions_frame(1)
    frame.loc[0, "answer_b"] = TRANSCRIPT
    client, _ = signed_in_rater(portal, tmp_path, frame)
    assignment, html = claim(client)
    assert assignment and "Tool call: fda_label" in html and "&lt;script&gt;" in html and "<script>alert" not in html


# ------------------------------------------------------------------------------------------------ framework
def test_track_options_are_validated(tmp_path: Path) -> None:
    from stableval.portal.store.db import Database

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"task": "essay"}, "task"), ({"task": "single", "scale": "good"}, "scale"),
        ({"task": "single", "scale": "a,b,a"}, "scale"), ({"task": "mcq", "scale": "a,b"}, "scale"),
        ({"task": "ddx"}, "conditions"), ({"task": "pairwise", "conditions": ["a", "b"]}, "conditions")]
    for kwargs, column in cases:
        with pytest.raises(InputError) as caught:
            create_track(db, "x", **kwargs)
        assert caught.value.column == column, kwargs
    create_track(db, "one", task="single")
    from stableval.portal.store.models import Track

    with db.reading() as session:
        track = session.scalar(select(Track).where(Track.slug == "one"))
        assert track is not None and track.task_type == "single" and track.scale == ["1", "2", "3", "4", "5"]
    # a pairwise file into a single track names the missing columns
    questions_frame(2).to_csv(tmp_path / "pw.csv", index=False)
    with pytest.raises(InputError, match=r"missing column.*model, answer") as caught:
        import_questions(db, "one", tmp_path / "pw.csv")
    assert caught.value.row == 1
    db.dispose()


def test_cli_creates_task_tracks_and_checks_the_task_on_import(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    made = runner.invoke(cli_app, ["portal", "track", "one", "--task", "single", "--scale", SCALE,
                                   "--criteria", "accuracy", "--database-url", url])
    assert made.exit_code == 0, made.output
    wrong = runner.invoke(cli_app, ["portal", "track", "two", "--task", "mcq", "--scale", SCALE, "--database-url", url])
    assert wrong.exit_code == 1 and "scale applies to single-answer tracks only" in wrong.output
    path = write_single(tmp_path / "single.csv")
    mismatch = runner.invoke(cli_app, ["portal", "import", "one", str(path), "--task", "mcq", "--database-url", url])
    assert mismatch.exit_code == 1 and "is a single track" in mismatch.output
    done = runner.invoke(cli_app, ["portal", "import", "one", str(path), "--task", "single", "--database-url", url])
    assert done.exit_code == 0 and "imported 3 questions" in done.output


# ------------------------------------------------------------------------------------------------ single answer
def _level_form(html: str, level: str, **extra: str) -> dict[str, str]:
    return {"csrf": csrf_of(html), "action": "next", "level-accuracy": level, "why-accuracy": "", "flag_reason": "",
            **extra}


def test_single_answer_flow_validation_draft_and_idempotent_submit(portal: tuple[Any, Any], tmp_path: Path
                                                                  ) -> None:
    app, db = portal
    client = task_rater(app, db, tmp_path, "single", n=1, criteria=["Accuracy"], scale=SCALE)
    assignment, first = claim_task(client)
    assert assignment and str(first.url).endswith(f"/a/{assignment}/task/single")
    html = first.text
    assert "Rate the answer" in html and "Tool call: fda_label" in html  # the answer is a transcript
    assert [m for m in re.findall(r'name="level-accuracy" value="([^"]+)"', html)] == ["incorrect", "partial",
                                                                                       "correct", "na"]
    # the pairwise address leads to the task's page
    assert str(client.get(f"/a/{assignment}/pairwise").url).endswith("/task/single")
    # nothing chosen: 422 with the error summary, the message inline and the group marked invalid
    answer = client.post(f"/a/{assignment}/task/single", data={"csrf": csrf_of(html), "action": "next",
                                                               "flag_reason": ""})
    assert answer.status_code == 422
    assert 'id="error-summary"' in answer.text and 'href="#level-accuracy"' in answer.text
    assert 'aria-invalid="true" aria-describedby="err-accuracy"' in answer.text
    # an unknown level is dropped, never stored
    answer = client.post(f"/a/{assignment}/task/single", data=_level_form(html, "excellent"))
    assert answer.status_code == 422
    # a draft survives a reload
    saved = client.post(f"/a/{assignment}/task/single", data=_level_form(html, "partial", action="save",
                                                                          **{"why-accuracy": "half right"}))
    assert saved.status_code == 200 and 'value="partial" id="level-accuracy-2" checked' in saved.text
    assert "half right" in saved.text
    confirm = client.post(f"/a/{assignment}/task/single", data=_level_form(saved.text, "correct",
                                                                           **{"why-accuracy": "half right"}))
    assert confirm.status_code == 200 and "Check and submit" in confirm.text
    assert "<td><bdi>correct</bdi></td><td><bdi>half right</bdi></td>" in confirm.text
    first_submit = submit_confirm(client, assignment, confirm.text)
    again = submit_confirm(client, assignment, confirm.text)  # double click / resubmitted POST
    assert first_submit.status_code == 200 and again.status_code == 200 and "saved" in str(again.url)
    with db.reading() as session:
        rows = session.scalars(select(Submission)).all()
    assert len(rows) == 1 and rows[0].payload is not None and rows[0].payload["levels"] == {"accuracy": "correct"}
    frame = export_task(db, "t").frame
    assert frame[["item", "agent", "label", "criterion"]].values.tolist() == [["s0", "TxAgent", "correct",
                                                                                "accuracy"]]


def test_single_flag_needs_a_reason_and_is_left_out_of_the_export(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    client = task_rater(app, db, tmp_path, "single", n=1, scale=SCALE)
    assignment, first = claim_task(client)
    answer = client.post(f"/a/{assignment}/task/single", data={"csrf": csrf_of(first.text), "action": "next",
                                                               "flag": "on", "flag_reason": " "})
    assert answer.status_code == 422 and "Say why the question does not make sense" in answer.text
    confirm = client.post(f"/a/{assignment}/task/single", data={"csrf": csrf_of(first.text), "action": "next",
                                                                "flag": "on", "flag_reason": "Not a question"})
    assert "You flagged this question" in confirm.text
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    result = export_task(db, "t")
    assert len(result.frame) == 0 and "1 submission(s) flagged" in result.notes[0]


def test_single_export_feeds_stableval_score(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    db = app.state.portal.db
    from portal_helpers import invite_tokens, start_rater
    from task_helpers import seed_task_track

    seed_task_track(db, tmp_path, "single", n=3, criteria=["Accuracy"], scale=SCALE)
    # s0, s2 by TxAgent, s1 by GPT-4o; three raters each rate all three
    levels = {"s0": ["correct", "correct", "partial"], "s1": ["incorrect", "partial", "partial"],
              "s2": ["partial", "incorrect", "correct"]}
    from fastapi.testclient import TestClient

    for r, token in enumerate(invite_tokens(db, 3)):
        client = TestClient(app)
        start_rater(client, token)
        for _ in range(3):
            assignment, page = claim_task(client)
            item = re.search(r"item <bdi>(s\d)</bdi>\)", page.text)
            assert assignment and item
            confirm = client.post(f"/a/{assignment}/task/single", data=_level_form(page.text, levels[item[1]][r]))
            assert submit_confirm(client, assignment, confirm.text).status_code == 200
    out = tmp_path / "single.csv"
    exported = runner.invoke(cli_app, ["portal", "export", "t", "-o", str(out), "--database-url", url])
    assert exported.exit_code == 0, exported.output
    assert f"analyse with: stableval score {out} --levels {SCALE}" in exported.output
    scored = runner.invoke(cli_app, ["score", str(out), "--levels", SCALE, "--method", "mv", "--format", "json",
                                     "--bootstrap", "50"])
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.stdout[scored.stdout.index("{"):])
    scores = {row["agent"]: row["score"] for row in result["scores"]}
    # majority vote by hand, credit incorrect 0, partial 0.5, correct 1: s0 -> correct (1); s2 -> a three-way tie,
    # split credit (0 + 0.5 + 1) / 3 = 0.5; TxAgent = (1 + 0.5) / 2; s1 -> partial: GPT-4o = 0.5
    assert scores == pytest.approx({"TxAgent": 0.75, "GPT-4o": 0.5})
    assert result["dataset"]["judgments"] == 9 and result["dataset"]["levels"] == SCALE.split(",")
    frame = pd.read_csv(io.StringIO(out.read_text()), dtype=str)
    assert list(frame.columns) == ["item", "agent", "rater", "label", "criterion", "rater_group", "track"]
    app.state.portal.db.dispose()


def test_pairwise_tracks_still_export_as_before(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path)
    complete_one(client)
    with pytest.raises(InputError, match="pairwise track"):
        export_task(db, "main")
    seed_track(db, tmp_path, "second")  # a second pairwise track is unaffected by task columns
    from stableval.portal.store.models import Track

    with db.reading() as session:
        assert set(session.scalars(select(Track.task_type))) == {"pairwise"}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migration_0004_keeps_existing_tracks_pairwise(kind: str, tmp_path: Path) -> None:
    from portal_helpers import database_url
    from sqlalchemy import text

    from stableval.portal.store.db import Database

    db = Database(database_url(kind, tmp_path))
    db.upgrade("0003")
    with db.engine.begin() as connection:
        connection.execute(text("INSERT INTO tracks (slug, title, criteria, rules, k, flag_limit, lease_seconds, "
                                "created_at) VALUES ('old', 'Old', '[]', '{}', 3, 2, 60, '2026-01-01')"))
    db.upgrade("0004")
    with db.engine.connect() as connection:
        row = connection.execute(text("SELECT task_type, scale, task_options FROM tracks")).one()
        version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert tuple(row) == ("pairwise", None, None) and version == "0004"
    db.dispose()


def test_autosave_other_raters_and_admin_download(portal: tuple[Any, Any], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from portal_helpers import invite_tokens, start_rater

    app, db = portal
    client = task_rater(app, db, tmp_path, "single", n=2, criteria=["Accuracy"], scale=SCALE)
    assignment, first = claim_task(client)
    rev = re.search(r'name="rev" value="(\d+)"', first.text)
    assert rev
    saved = client.post(f"/a/{assignment}/task/draft", data={"csrf": csrf_of(first.text), "step": "single",
                                                             "rev": rev[1], "level-accuracy": "partial"})
    assert saved.status_code == 204
    assert 'value="partial" id="level-accuracy-2" checked' in client.get(f"/a/{assignment}/task/single").text
    stale = client.post(f"/a/{assignment}/task/draft", data={"csrf": csrf_of(first.text), "step": "single",
                                                             "rev": str(int(rev[1]) - 1), "level-accuracy": "correct"})
    assert stale.status_code == 204  # accepted, but an older page's autosave changes nothing
    assert 'value="partial" id="level-accuracy-2" checked' in client.get(f"/a/{assignment}/task/single").text
    assert client.post(f"/a/{assignment}/task/draft", data={"csrf": csrf_of(first.text), "step": "blind",
                                                            "rev": rev[1]}).status_code == 409
    other = TestClient(app)
    start_rater(other, invite_tokens(db, 1)[0])
    assert other.get(f"/a/{assignment}/task/single").status_code == 404  # raters see only their own work
    assert other.get(f"/a/{assignment}/task/confirm").status_code == 404
    confirm = client.post(f"/a/{assignment}/task/single", data=_level_form(first.text, "correct"))
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    download = TestClient(app).get("/admin/tracks/t/export?format=csv", headers={"Authorization": f"Bearer {ADMIN}"})
    assert download.status_code == 200
    frame = pd.read_csv(io.StringIO(download.text), dtype=str)
    assert frame[["agent", "label", "criterion"]].values.tolist() == [["TxAgent", "correct", "accuracy"]]
