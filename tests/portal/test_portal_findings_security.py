"""Regression tests for the security review's findings (../shared/reviews/portal-security.md): F1 CSRF with a
proxy's Authorization header, F3 revocation, F6 sign-in rate limit, F7 500s on odd input, F8 bodies read before
any check, F15/F16 identity and addresses. Each failed on main at 0f27c79."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from portal_helpers import (
    ADMIN,
    claim,
    csrf_of,
    invite_tokens,
    seed_track,
    signed_in_rater,
    start_rater,
)
from sqlalchemy import func, select

from stableval.portal.store.models import Assignment, Track
from stableval.portal.web.app import COOKIE, create_app


def _admin(app: Any) -> TestClient:
    client = TestClient(app, raise_server_exceptions=False)
    login = client.get("/admin/login")
    answer = client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    assert answer.status_code == 200 and "New track" in answer.text
    return client


def _tracks(db: Any) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count(Track.id))) or 0)


def test_f1_csrf_is_skipped_only_for_the_valid_bearer_token(portal: tuple[Any, Any]) -> None:
    app, db = portal
    admin = _admin(app)
    basic = admin.post("/admin/tracks", data={"slug": "csrf-demo"}, headers={"Authorization": "Basic Zm9vOmJhcg=="})
    assert basic.status_code == 403 and _tracks(db) == 0  # a proxy's Basic header is no reason to skip CSRF
    wrong = admin.post("/admin/tracks", data={"slug": "csrf-demo"}, headers={"Authorization": "Bearer wrong-one"})
    assert wrong.status_code == 403 and _tracks(db) == 0
    script = TestClient(app).post("/admin/tracks", data={"slug": "by-script"},
                                  headers={"Authorization": f"Bearer {ADMIN}"}, follow_redirects=False)
    assert script.status_code == 303 and _tracks(db) == 1  # scripts with the token itself need no CSRF field


def test_f3_admin_sign_out_and_token_change_end_admin_sessions(tmp_path: Path) -> None:
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


def test_f3_raters_and_invites_can_be_revoked(portal: tuple[Any, Any], tmp_path: Path) -> None:
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


def test_f3_admin_page_revokes_a_rater(portal: tuple[Any, Any], tmp_path: Path) -> None:
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


def test_f6_admin_sign_in_is_rate_limited(portal: tuple[Any, Any]) -> None:
    app, _ = portal
    client = TestClient(app)
    csrf = csrf_of(client.get("/admin/login").text)
    codes = [client.post("/admin/login", data={"csrf": csrf, "token": f"guess-{i:04d}-xx"}).status_code
             for i in range(12)]
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    assert client.post("/admin/login", data={"csrf": csrf, "token": ADMIN}).status_code == 429  # even the right one


def test_f7_non_ascii_credentials_and_huge_numbers_are_refused_not_500(portal: tuple[Any, Any],
                                                                      tmp_path: Path) -> None:
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


def test_f8_bodies_are_checked_before_they_are_read(portal: tuple[Any, Any]) -> None:
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


def test_f16_another_invite_link_asks_before_switching(portal: tuple[Any, Any], tmp_path: Path) -> None:
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
