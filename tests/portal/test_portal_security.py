"""Security: hashed invite tokens, admin credential, CSRF, signed cookies, rate limit, escaping, isolation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from portal_helpers import (
    ADMIN,
    claim,
    complete_one,
    csrf_of,
    invite_tokens,
    pairwise_form,
    questions_frame,
    seed_track,
    signed_in_rater,
    start_rater,
)
from sqlalchemy import select

from stableval.portal.store.models import Rater
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
    login = client.get("/admin/login")
    admin = client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    csrf = csrf_of(admin.text)  # signing in renews the session nonce, hence the CSRF token
    notes = client.post("/admin/invites", data={"csrf": csrf, "notes": ATTACKS[0]})
    assert notes.status_code == 200 and _bad(notes.text) == []
    assert _bad(client.get("/admin").text) == [] and _bad(client.get("/admin/tracks/main").text) == []
    bad_profile = client.post("/profile", data={"csrf": csrf, "name": ATTACKS[1],
                                                "email": ATTACKS[3], "specialty": "x", "years": "1"})
    assert bad_profile.status_code == 422 and _bad(bad_profile.text) == []
