"""The admin's "New track" form for every task type: the same checks as ``stableval portal track`` (one function,
``create_track``, behind both), the error summary with inline errors, CSRF, and the condition list as text or file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of
from sqlalchemy import select
from task_helpers import CONDITIONS
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.manage import create_track, track_problems
from stableval.portal.store.db import Database
from stableval.portal.store.models import Track


def _admin(app: Any) -> TestClient:
    client = TestClient(app)
    login = client.get("/admin/login")
    answer = client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    assert answer.status_code == 200 and "New track" in answer.text
    return client


def _post(client: TestClient, **fields: str) -> Any:
    return _post_files(client, None, **fields)


def _post_files(client: TestClient, files: dict[str, Any] | None, **fields: str) -> Any:
    csrf = csrf_of(client.get("/admin").text)
    return client.post("/admin/tracks", data={"csrf": csrf, **fields}, files=files, follow_redirects=False)


def _track(db: Database, slug: str) -> Track | None:
    with db.reading() as session:
        return session.scalar(select(Track).where(Track.slug == slug))


def test_form_creates_each_task_type_with_its_options(portal: tuple[Any, Database]) -> None:
    app, db = portal
    admin = _admin(app)
    page = admin.get("/admin").text
    assert [m for m in re.findall(r'<option value="([a-z-]+)"', page)][:5] == \
        ["pairwise", "single", "mcq", "ddx", "rank-documents"]
    assert _post(admin, slug="grading", task="single", scale="incorrect, partial ,correct", k="2",
                 criteria="Accuracy,Safety").status_code == 303
    assert _post(admin, slug="medqa", task="mcq", gold_rate="0.2", qc_threshold="0.6", qc_min_gold="4",
                 qualification="2").status_code == 303
    upload = {"conditions_file": ("derm.txt", "\n".join(CONDITIONS).encode(), "text/plain")}
    assert _post_files(admin, upload, slug="derm", task="ddx", max_conditions="3").status_code == 303
    assert _post(admin, slug="derm2", task="ddx", conditions="Eczema\r\nPsoriasis\r\n").status_code == 303
    assert _post(admin, slug="nrp", task="rank-documents", k="4", lease_hours="2",
                 specialties="Oncology, cardiology", fallback="any").status_code == 303
    single, medqa, derm, derm2, nrp = (_track(db, s) for s in ("grading", "medqa", "derm", "derm2", "nrp"))
    assert single and (single.task_type, single.scale, single.k) == ("single", ["incorrect", "partial", "correct"], 2)
    assert [c["key"] for c in single.criteria] == ["accuracy", "safety"]
    assert medqa and (medqa.task_type, medqa.gold_rate, medqa.qc_threshold, medqa.qc_min_gold,
                      medqa.qualification) == ("mcq", 0.2, 0.6, 4, 2)
    assert derm and derm.task_type == "ddx" and derm.task_options == {"conditions": CONDITIONS, "max_conditions": 3}
    assert derm2 and derm2.task_options == {"conditions": ["Eczema", "Psoriasis"], "max_conditions": 5}
    assert nrp and (nrp.task_type, nrp.k, nrp.lease_seconds, nrp.specialties, nrp.fallback) == \
        ("rank-documents", 4, 7200, ["oncology", "cardiology"], "any")


def _error_page(answer: Any, field: str) -> str:
    """The re-shown form: 422, the summary links to the field, the field is marked and points to its message."""
    assert answer.status_code == 422 and "Track not created" in answer.text, answer.text[:300]
    html = answer.text
    assert re.search(rf'<a href="#{field}">', html), field
    assert re.search(rf'id="{field}"[^>]*aria-invalid="true" aria-describedby="err-{field}', html), field
    found = re.search(rf'<p class="field-error" id="err-{field}">(.*?)</p>', html, re.S)
    assert found, field
    return found.group(1)


def test_form_errors_are_inline_and_keep_the_values(portal: tuple[Any, Database]) -> None:
    app, db = portal
    admin = _admin(app)
    answer = _post(admin, slug="grading", task="single", scale="good", k="two", lease_hours="1e300",
                   title="Kept title")
    assert "Ratings per question (k): not a whole number: got &#39;two&#39;" in _error_page(answer, "k")
    assert 'value="Kept title"' in answer.text and 'value="good"' in answer.text
    assert re.search(r'<option value="single" selected>', answer.text)
    assert "bad scale" in _error_page(_post(admin, slug="grading", task="single", scale="good"), "scale")
    assert "applies to ddx tracks only" in _error_page(
        _post(admin, slug="grading", task="single", conditions="A\nB"), "conditions")
    assert "needs its condition list" in _error_page(_post(admin, slug="derm", task="ddx"), "conditions")
    assert "condition repeats line 1" in _error_page(
        _post(admin, slug="derm", task="ddx", conditions="Eczema\neczema"), "conditions")
    bad_file = {"conditions_file": ("list.txt", b"\xff\xfe bad", "text/plain")}
    assert "list.txt: file is not UTF-8" in _error_page(_post_files(admin, bad_file, slug="derm", task="ddx"),
                                                         "conditions_file")
    assert "max_conditions out of range" in _error_page(
        _post(admin, slug="derm", task="ddx", conditions="A\nB", max_conditions="21"), "max_conditions")
    assert "unknown task type" in _error_page(_post(admin, slug="x", task="essay"), "task")
    assert "unknown fallback" in _error_page(_post(admin, slug="x", fallback="nowhere"), "fallback")
    assert "bad track name" in _error_page(_post(admin, slug="Bad Name"), "slug")
    with db.reading() as session:
        assert session.scalars(select(Track.slug)).all() == []  # nothing was created


def test_form_shows_every_problem_at_once(portal: tuple[Any, Database]) -> None:
    app, db = portal
    admin = _admin(app)
    answer = _post(admin, slug="Bad Name", task="ddx", k="0", lease_hours="soon", gold_rate="2", max_k="1001")
    summary = re.findall(r'<li><a href="#([a-z_]+)">', answer.text)
    assert summary == ["slug", "conditions", "k", "lease_hours", "gold_rate", "max_k"]  # in the order of the form
    for field, words in (("slug", "bad track name"), ("conditions", "needs its condition list"),
                         ("k", "k out of range"), ("lease_hours", "not a number"),
                         ("gold_rate", "gold_rate out of range"), ("max_k", "max_k out of range")):
        assert words in _error_page(answer, field), field
    with pytest.raises(InputError, match="bad scale"):  # the command line's function raises the first one
        create_track(db, "Bad Name", task="single", scale="x", k=0)
    assert [e.column for e in track_problems("Bad Name", task="single", scale="x", k=0)[1]] == ["scale", "slug", "k"]


def test_form_and_cli_refuse_with_the_same_message(portal: tuple[Any, Database], tmp_path: Path) -> None:
    app, db = portal
    admin = _admin(app)
    listing = tmp_path / "conditions.txt"
    listing.write_text("Eczema\n\nPsoriasis\n")
    for options, fields, field in (
            (["--task", "single", "--scale", "a,a"], {"task": "single", "scale": "a,a"}, "scale"),
            (["--task", "mcq", "--k", "3", "--max-k", "3"], {"task": "mcq", "k": "3", "max_k": "3"}, "max_k"),
            (["--task", "ddx", "--conditions", str(listing)], {"task": "ddx", "conditions": "Eczema\n\nPsoriasis"},
             "conditions")):
        cli = CliRunner().invoke(cli_app, ["portal", "track", "same", *options, "--database-url", db.url])
        assert cli.exit_code == 1, cli.output
        problem = re.search(r"error: .*?: ([a-z][^:]*(?:: got [^;]*)?;)", cli.output.replace("\n", " "))
        assert problem, cli.output
        web = _error_page(_post(admin, slug="same", **fields), field)
        assert problem.group(1).replace("'", "&#39;") in web, (problem.group(1), web)


def test_form_needs_admin_and_csrf(portal: tuple[Any, Database]) -> None:
    app, db = portal
    anonymous = TestClient(app)
    assert anonymous.post("/admin/tracks", data={"slug": "x", "task": "mcq"}).status_code == 401
    admin = _admin(app)
    assert admin.post("/admin/tracks", data={"slug": "x", "task": "mcq"}).status_code == 403
    assert admin.post("/admin/tracks", data={"slug": "x", "task": "mcq", "csrf": "forged"}).status_code == 403
    script = TestClient(app).post("/admin/tracks", data={"slug": "by-script", "task": "mcq"},
                                  headers={"Authorization": f"Bearer {ADMIN}"}, follow_redirects=False)
    assert script.status_code == 303
    assert _track(db, "x") is None and _track(db, "by-script") is not None
    page = admin.get("/admin/new-track")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text and "Create track" in page.text
