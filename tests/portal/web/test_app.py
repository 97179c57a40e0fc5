"""The web app's security and pages: hashed invite tokens, admin credential, CSRF, signed cookies, rate limits,
escaping, isolation, revocation, body checks, validation messages, accessible error pages (each regression of the
portal security review says so in its docstring)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from portal_helpers import (
    ADMIN,
    CRITERIA,
    claim,
    complete_one,
    csrf_of,
    fill_steps,
    invite_tokens,
    pairwise_form,
    questions_frame,
    row_count,
    seed_track,
    signed_in_rater,
    start_rater,
)
from sqlalchemy import func, select

from stableval.errors import InputError
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.models import Assignment, Question, Rater, Track
from stableval.portal.store.security import hash_token
from stableval.portal.web.app import COOKIE, create_app

ATTACKS = ['<script>alert("x")</script>', '<img src=x onerror="alert(1)">', "[a](javascript:alert(1))",
           '<a href="javascript:alert(1)">j</a>']


def _bad(html: str) -> list[str]:
    lowered = html.lower()
    return [s for s in ("<script>alert", "onerror=", "javascript:") if s in lowered]


def test_invite_tokens_are_stored_hashed(portal: tuple[Any, Any]) -> None:
    _, db = portal
    token = invite_tokens(db, 1)[0]
    with db.reading() as session:
        stored = session.scalars(select(Rater.token_hash)).one()
    assert stored == hash_token(token) and token not in stored and len(token) >= 32


def test_admin_endpoints_refuse_without_credential(portal: tuple[Any, Any], tmp_path: Path) -> None:
    client, _ = signed_in_rater(portal, tmp_path)  # a signed-in rater is not an admin
    for url in ("/admin", "/admin/tracks/main", "/admin/tracks/main/export"):
        assert client.get(url).status_code == 401
    csrf = csrf_of(client.get("/progress").text)
    assert client.post("/admin/invites", data={"csrf": csrf, "notes": "x"}).status_code == 401
    assert client.post("/admin/tracks", data={"csrf": csrf, "slug": "evil"}).status_code == 401
    assert client.get("/admin", headers={"Authorization": "Bearer wrong-token-123"}).status_code == 401
    assert client.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200
    login = client.get("/admin/login")
    assert client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": "nope"}).status_code == 401
    assert client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN}).status_code == 200
    assert client.get("/admin").status_code == 200


def test_csrf_and_tampered_cookie_are_refused(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, _ = portal
    client, _ = signed_in_rater(portal, tmp_path)
    assert client.post("/tracks/main/next", data={}).status_code == 403
    assert client.post("/tracks/main/next", data={"csrf": "0" * 64}).status_code == 403
    cookie = client.cookies.get(COOKIE)
    assert cookie
    other = TestClient(app)
    body, mac = cookie.rsplit(".", 1)
    other.cookies.set(COOKIE, body + "." + ("0" * len(mac)))
    assert other.get("/progress").status_code == 401  # signature wrong: not signed in


def test_raters_see_only_their_own_work(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    seed_track(db, tmp_path)
    first, second = TestClient(app), TestClient(app)
    tokens = invite_tokens(db, 2)
    start_rater(first, tokens[0])
    start_rater(second, tokens[1])
    assignment, _ = claim(first)
    assert second.get(f"/a/{assignment}/pairwise").status_code == 404
    csrf = csrf_of(second.get("/progress").text)
    assert second.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf)).status_code == 404


def test_invite_endpoint_is_rate_limited(tmp_path: Path) -> None:
    app = create_app(f"sqlite:///{tmp_path / 'p.db'}", admin_token=ADMIN, invite_rate=3)
    client = TestClient(app)
    codes = [client.get(f"/i/guess{i}").status_code for i in range(5)]
    assert codes == [404, 404, 404, 429, 429]
    app.state.portal.db.dispose()


def test_nothing_active_reaches_any_page(portal: tuple[Any, Any], tmp_path: Path) -> None:
    frame = questions_frame(2)
    frame["prompt"] = [f"{a} prompt" for a in ATTACKS[:2]]
    frame["answer_a"] = ATTACKS[2:]
    frame["answer_b"] = ATTACKS[:2]
    frame["reference"] = ATTACKS[1:3]
    client, _ = signed_in_rater(portal, tmp_path, frame)
    assignment, html = claim(client)
    assert _bad(html) == [] and "alert(1)" in html
    reasons = {f"why-{c}": ATTACKS[i % 4] for i, c in enumerate(("accuracy", "helpfulness"))}
    answer = client.post(f"/a/{assignment}/pairwise", data=pairwise_form(csrf_of(html), **reasons))
    assert _bad(answer.text) == []
    for step in ("pairwise", "rating"):
        assert _bad(client.get(f"/a/{assignment}/{step}").text) == []
    complete_one(client)
    bad_profile = client.post("/profile", data={"csrf": csrf_of(client.get("/profile").text), "name": ATTACKS[1],
                                                "email": ATTACKS[3], "specialty": "x", "years": "1"})
    assert bad_profile.status_code == 422 and _bad(bad_profile.text) == []
    login = client.get("/admin/login")  # signing in as admin ends the rater session (one role per browser)
    admin = client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    csrf = csrf_of(admin.text)  # signing in renews the session nonce, hence the CSRF token
    notes = client.post("/admin/invites", data={"csrf": csrf, "notes": ATTACKS[0]})
    assert notes.status_code == 200 and _bad(notes.text) == []
    assert _bad(client.get("/admin").text) == [] and _bad(client.get("/admin/tracks/main").text) == []


def test_email_and_lease_validation(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F12: validation)."""
    client, db = signed_in_rater(portal, tmp_path)
    page = client.get("/profile")
    for email in ("@", "a@", "@b.org", "a@b", "a b@c.org"):
        answer = client.post("/profile", data={"csrf": csrf_of(page.text), "name": "Dr X", "email": email,
                                               "specialty": "cardiology", "years": "3"})
        assert answer.status_code == 422 and "name@example.org" in answer.text, email
    for hours in (1e-9, 0.0, float("nan"), 1e9):
        with pytest.raises(InputError, match="lease"):
            create_track(db, "short", lease_hours=hours)


def test_import_errors_name_the_uploaded_file(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F13: upload names)."""
    app, db = portal
    seed_track(db, tmp_path)
    admin = TestClient(app)
    page = admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    for content in (b"", b"\xff\xfe\x00garbage\x00"):
        answer = admin.post("/admin/tracks/main/import", data={"csrf": csrf_of(page.text)},
                            files={"file": ("my-questions.csv", content, "text/csv")})
        assert answer.status_code == 422 and "my-questions.csv" in answer.text, answer.text
        assert "upload.csv" not in answer.text and "/tmp" not in answer.text


def test_inline_errors_no_autofocus_html_error_pages(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F17: accessibility and error pages)."""
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


def test_focus_outline_contrast_is_at_least_3_to_1() -> None:
    """Regression (portal security review, correctness finding F17: accessibility and error pages)."""
    css = (Path(__file__).resolve().parents[3] / "src/stableval/portal/static/portal.css").read_text()
    found = re.search(r":focus-visible\{outline:\d+px solid (#[0-9a-fA-F]{6})", css)
    assert found
    ratio = (1.0 + 0.05) / (_luminance(found.group(1)) + 0.05)  # against the white page
    assert ratio >= 3.0, ratio
    assert abs((1.05 / (_luminance("#f5a623") + 0.05)) - 2.0) < 0.1  # the old colour: about 2.0:1 (WCAG formula)


def test_long_text_is_refused_and_images_leave_a_placeholder(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F18: long text and images)."""
    _, db = portal
    create_track(db, "main")
    frame = questions_frame(2)
    frame.loc[1, "answer_b"] = "y" * 100_001
    path = tmp_path / "long.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"long.csv, row 2, column 'answer_b'.*at most 100,000 characters"):
        import_questions(db, "main", path)
    assert row_count(db, Question) == 0
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


def _admin(app: Any) -> TestClient:
    client = TestClient(app, raise_server_exceptions=False)
    login = client.get("/admin/login")
    answer = client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    assert answer.status_code == 200 and "New track" in answer.text
    return client


def _tracks(db: Any) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count(Track.id))) or 0)


def test_csrf_is_skipped_only_for_the_valid_bearer_token(portal: tuple[Any, Any]) -> None:
    """Regression (portal security review, finding F1: CSRF with a proxy's Authorization header)."""
    app, db = portal
    admin = _admin(app)
    basic = admin.post("/admin/tracks", data={"slug": "csrf-demo"}, headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert basic.status_code == 403 and _tracks(db) == 0  # a proxy's Basic header is no reason to skip CSRF
    wrong = admin.post("/admin/tracks", data={"slug": "csrf-demo"}, headers={"Authorization": "Bearer wrong-one"})
    assert wrong.status_code == 403 and _tracks(db) == 0
    script = TestClient(app).post("/admin/tracks", data={"slug": "by-script"},
                                  headers={"Authorization": f"Bearer {ADMIN}"}, follow_redirects=False)
    assert script.status_code == 303 and _tracks(db) == 1  # scripts with the token itself need no CSRF field


def test_admin_sign_out_and_token_change_end_admin_sessions(tmp_path: Path) -> None:
    """Regression (portal security review, finding F3: revocation)."""
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    admin = _admin(app)
    old_cookie = admin.cookies.get(COOKIE)
    assert old_cookie and admin.get("/admin").status_code == 200
    admin.post("/admin/logout", data={"csrf": csrf_of(admin.get("/admin").text)})
    replay = TestClient(app)
    replay.cookies.set(COOKIE, old_cookie)
    assert replay.get("/admin").status_code == 401  # signed out: the saved cookie is no longer admin

    second = _admin(app)
    cookie = second.cookies.get(COOKIE)
    rotated = create_app(url, admin_token="another-admin-token-0")  # restart with a new admin token
    again = TestClient(rotated)
    again.cookies.set(COOKIE, cookie)
    assert again.get("/admin").status_code == 401
    still = TestClient(app)
    still.cookies.set(COOKIE, cookie)
    assert still.get("/admin").status_code == 200  # same token, not signed out: still admin
    for each in (app, rotated):
        each.state.portal.db.dispose()


def test_raters_and_invites_can_be_revoked(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, finding F3: revocation)."""
    from stableval.portal.admin.manage import end_rater_sessions, reissue_invite, revoke_invite, set_rater_disabled

    app, db = portal
    seed_track(db, tmp_path)
    tokens = invite_tokens(db, 2)
    rater = TestClient(app, raise_server_exceptions=False)
    start_rater(rater, tokens[0])
    rater_id = 1

    revoke_invite(db, rater_id)
    assert TestClient(app).get(f"/i/{tokens[0]}").status_code == 404  # the link stops working ...
    assert rater.get("/progress").status_code == 200  # ... the signed-in browser goes on
    link = reissue_invite(db, rater_id).link("http://testserver")
    assert TestClient(app).get(link).status_code == 200

    end_rater_sessions(db, rater_id)
    assert rater.get("/progress").status_code == 401  # signed out everywhere
    assert rater.get(link).status_code == 200 and rater.get("/progress").status_code == 200  # may sign in again

    assignment, _ = claim(rater)
    assert assignment
    set_rater_disabled(db, rater_id, True)
    assert rater.get("/progress").status_code == 403
    assert rater.get(f"/a/{assignment}/pairwise").status_code == 403
    assert TestClient(app).get(link).status_code == 403
    with db.reading() as session:
        assert session.get(Assignment, assignment).status == "released"  # its slot goes back to the pool
    set_rater_disabled(db, rater_id, False)
    assert TestClient(app).get(link).status_code == 200


def test_admin_page_revokes_a_rater(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, finding F3: revocation)."""
    app, _ = portal
    client, _ = signed_in_rater(portal, tmp_path)
    admin = _admin(app)
    page = admin.get("/admin")
    assert 'action="/admin/raters/1/disable"' in page.text and "active" in page.text
    done = admin.post("/admin/raters/1/disable", data={"csrf": csrf_of(page.text)})
    assert done.status_code == 200 and "Rater disabled" in done.text and "disabled" in done.text
    assert client.get("/progress").status_code == 403
    fresh = admin.post("/admin/raters/1/new-invite", data={"csrf": csrf_of(done.text)})
    assert fresh.status_code == 200 and "http://testserver/i/" in fresh.text
    assert admin.post("/admin/raters/1/disable", data={}).status_code == 403  # CSRF still checked
    assert admin.post("/admin/raters/99/disable", data={"csrf": csrf_of(done.text)}).status_code == 404


def test_admin_sign_in_is_rate_limited(portal: tuple[Any, Any]) -> None:
    """Regression (portal security review, finding F6: sign-in rate limit)."""
    app, _ = portal
    client = TestClient(app)
    csrf = csrf_of(client.get("/admin/login").text)
    codes = [client.post("/admin/login", data={"csrf": csrf, "token": f"guess-{i:04d}-xx"}).status_code
             for i in range(12)]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    assert client.post("/admin/login", data={"csrf": csrf, "token": ADMIN}).status_code == 429  # even the right one


def test_non_ascii_credentials_and_huge_numbers_are_refused_not_500(portal: tuple[Any, Any],
                                                                      tmp_path: Path) -> None:
    """Regression (portal security review, finding F7: 500s on odd input)."""
    app, _ = portal
    client = TestClient(app, raise_server_exceptions=False)
    assert client.get("/admin", headers={"Authorization": "Bearer tökén-ünicode".encode()}).status_code == 401
    odd = TestClient(app, raise_server_exceptions=False)
    assert odd.get("/", headers={"Cookie": f"{COOKIE}=e30=.zz\u00e9".encode()}).status_code == 200
    csrf = csrf_of(client.get("/admin/login").text)
    assert client.post("/admin/login", data={"csrf": "\u00e9" * 64, "token": ADMIN}).status_code == 403
    assert client.post("/admin/login", data={"csrf": csrf, "token": "\u00e9" * 20}).status_code == 401
    admin = _admin(app)
    csrf = csrf_of(admin.get("/admin").text)
    for field, value in (("k", str(10**30)), ("flag_limit", str(2**70)), ("lease_hours", "1e300"),
                         ("lease_hours", "inf"), ("lease_hours", "1e-9"), ("k", "²")):
        answer = admin.post("/admin/tracks", data={"csrf": csrf, "slug": "t1", field: value})
        assert answer.status_code == 422 and "Track not created" in answer.text, (field, value)
    rater, _ = signed_in_rater(portal, tmp_path)
    page = rater.get("/profile")
    for years in ("²", "⁵", "81", "99"):
        answer = rater.post("/profile", data={"csrf": csrf_of(page.text), "name": "Dr X", "email": "x@example.org",
                                              "specialty": "cardiology", "years": years})
        assert answer.status_code == 422 and "whole number from 0 to 80" in answer.text, years


def test_bodies_are_checked_before_they_are_read(portal: tuple[Any, Any]) -> None:
    """Regression (portal security review, finding F8: bodies read before any check)."""
    app, _ = portal
    client = TestClient(app)
    upload = {"file": ("big.bin", b"x" * 1000, "application/octet-stream")}
    assert client.post("/admin/login", files=upload, data={"token": "x"}).status_code == 415
    assert client.post("/admin/logout", files=upload).status_code == 415
    assert client.post("/a/1/pairwise", files=upload).status_code == 401  # not signed in: refused first
    assert client.post("/a/1/submit", data={"x": "y"}).status_code == 401
    huge = client.post("/admin/login", content=b"a=1", headers={"Content-Length": str(300 * 1024 * 1024),
                                                                 "Content-Type": "application/x-www-form-urlencoded"})
    assert huge.status_code == 413 and "too large" in huge.text


def test_another_invite_link_asks_before_switching(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (portal security review, finding F16: identity switch)."""
    app, db = portal
    seed_track(db, tmp_path)
    first, second = invite_tokens(db, 2)
    browser = TestClient(app)
    start_rater(browser, first)
    ask = browser.get(f"/i/{second}")
    assert ask.status_code == 200 and "Switch to another rater?" in ask.text and "Dr Test" in ask.text
    assert "About you" not in browser.get("/progress").text  # still the first rater (profile filled in)
    switched = browser.post(f"/i/{second}", data={"csrf": csrf_of(ask.text)})
    assert switched.status_code == 200 and "About you" in switched.text  # the second rater: no profile yet
    assert browser.post(f"/i/{first}", data={}).status_code == 403  # the switch needs the page's CSRF token

    admin = _admin(app)
    admin.get(f"/i/{first}")
    assert admin.get("/admin").status_code == 401  # a browser holds one role: the rater link ends the admin one


def _post_chunked(app: Any, path: str, chunks: int, chunk: bytes = b"&f=" + b"a" * 65533,
                  content_type: bytes = b"application/x-www-form-urlencoded") -> tuple[int, int]:
    """POST a body of ``chunks`` chunks without a Content-Length (Transfer-Encoding: chunked) straight to the ASGI
    app; returns (status, chunks the app read)."""
    import asyncio

    read, status = [0], [0]

    async def receive() -> dict[str, Any]:
        if read[0] >= chunks:
            return {"type": "http.disconnect"}
        read[0] += 1
        return {"type": "http.request", "body": chunk,
                "more_body": read[0] < chunks}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status[0] = message["status"]

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), (b"content-type", content_type),
                         (b"transfer-encoding", b"chunked")], "client": ("127.0.0.1", 5000),
             "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    return status[0], read[0]


def test_chunked_bodies_are_capped_while_they_are_read(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F5): a body without Content-Length (chunked) passed the size check
    and was parsed whole (~1 GB of form fields per anonymous request). Now every body is counted as it arrives and
    refused (413) past the route's limit, chunked or not: the app stops reading right after 1 MB (16 chunks of
    64 KiB)."""
    app, db = portal
    token = invite_tokens(db, 1)[0]
    for path in ("/admin/logout", "/admin/login", f"/i/{token}"):
        status, read = _post_chunked(app, path, chunks=1000)  # 64 MB
        assert (status, read) == (413, 17), path
    assert _post_chunked(app, "/admin/logout", chunks=15) == (403, 15)  # under 1 MB: read, then the CSRF check
