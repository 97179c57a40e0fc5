"""The admin routes' credential checks: one limit on failed admin credentials (the sign-in form and
``Authorization: Bearer`` alike), per client, with a cap on everyone together; browsers that signed in before keep
their own allowance, so a guesser cannot lock the admin out (each regression of the security reviews says so in
its docstring)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of

from stableval.portal.web.common import LOGIN_RATE, LOGIN_RATE_ALL


def _sign_in(client: TestClient, token: str) -> int:
    csrf = csrf_of(client.get("/admin/login").text)
    return client.post("/admin/login", data={"csrf": csrf, "token": token}, follow_redirects=False).status_code


def test_bearer_guesses_share_the_sign_in_limit(portal: tuple[Any, Any]) -> None:
    """Regression (issue 26, security review 3, F6): wrong ``Authorization: Bearer`` tokens were not limited at all
    (hundreds of guesses a second), while the form allowed 10 a minute. Now both count against one limit of failed
    admin credentials per client: past it, a Bearer token is refused unchecked (429), the right one too."""
    app, _ = portal
    guesser = TestClient(app, client=("203.0.113.7", 4000))
    codes = [guesser.get("/admin/tracks/x/export", headers={"Authorization": f"Bearer guess-{i:04d}-xxxx"}
                         ).status_code for i in range(LOGIN_RATE + 2)]
    assert codes == [401] * LOGIN_RATE + [429, 429]
    assert guesser.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 429
    assert _sign_in(guesser, ADMIN) == 429  # the form shares the limit
    other = TestClient(app, client=("203.0.113.8", 4000))  # another client is not limited by this one
    assert other.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200
    assert other.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 200  # rights: free


def test_a_guesser_cannot_lock_the_admin_out(portal: tuple[Any, Any]) -> None:
    """Regression (issue 26, security review 3, F6): 10 wrong sign-ins a minute from the admin's address (a shared
    proxy, an office NAT) locked the real admin out of the form. Now a browser that signed in before keeps its own
    allowance, also when failures from every address together reach the global cap, which stops everyone else."""
    app, _ = portal
    admin = TestClient(app, client=("198.51.100.1", 4000))
    assert _sign_in(admin, ADMIN) == 303
    admin.post("/admin/logout", data={"csrf": csrf_of(admin.get("/admin").text)})
    assert admin.get("/admin").status_code == 401
    same_address = TestClient(app, client=("198.51.100.1", 4001))
    assert [_sign_in(same_address, f"wrong-{i:04d}-token") for i in range(LOGIN_RATE + 1)][-2:] == [401, 429]
    for number in range(LOGIN_RATE_ALL // LOGIN_RATE):  # failures from many addresses up to the global cap
        crowd = TestClient(app, client=(f"192.0.2.{number + 1}", 4000))
        assert {_sign_in(crowd, f"wrong-{i:04d}-token") for i in range(LOGIN_RATE)} <= {401, 429}
    newcomer = TestClient(app, client=("192.0.2.250", 4000))
    assert _sign_in(newcomer, f"wrong-{0:04d}-token") == 429  # the cap: refused unchecked
    assert _sign_in(admin, ADMIN) == 303 and admin.get("/admin").status_code == 200


def test_admin_sign_in_ends_the_rater_session(portal: tuple[Any, Any], tmp_path: Any) -> None:
    """Regression (issue 26, security review 3, F16): a rater who signed in at ``/admin/login`` kept the rater role
    beside the admin one (one cookie, both roles). Now a browser holds one role, both ways."""
    from portal_helpers import invite_tokens, seed_track, start_rater

    app, db = portal
    seed_track(db, tmp_path)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    assert client.get("/progress").status_code == 200
    assert _sign_in(client, ADMIN) == 303
    assert client.get("/admin").status_code == 200 and client.get("/progress").status_code == 401


def test_an_upload_with_an_unknown_or_long_suffix_is_refused(portal: tuple[Any, Any], tmp_path: Any) -> None:
    """Regression (issue 26, security review 3, F12): the upload was written to a temporary file named with the
    client's suffix, so a 300-character suffix answered 500 (file name too long). Now only the known suffixes are
    accepted (422 otherwise, naming them), and the temporary file is named from the format."""
    from stableval.portal.admin.manage import create_track

    app, db = portal
    create_track(db, "p", k=1)
    admin = TestClient(app, raise_server_exceptions=False, headers={"Authorization": f"Bearer {ADMIN}"})
    rows = b"id,prompt,model_a,answer_a,model_b,answer_b\nq1,P,A,a,B,b\n"
    for name in ("q." + "c" * 300, "q.exe", "q"):
        refused = admin.post("/admin/tracks/p/import", files={"file": (name, rows)})
        assert refused.status_code == 422 and ".csv" in refused.text and ".parquet" in refused.text, name
        refused = admin.post("/admin/invites", files={"file": (name, b"name\nx\n")})
        assert refused.status_code == 422 and ".csv" in refused.text, name
    assert admin.post("/admin/tracks/p/import", files={"file": ("Q.CSV", rows)}, follow_redirects=False
                      ).status_code == 303
    assert "/i/" in admin.post("/admin/invites", files={"file": ("people.csv", b"name\nx\n")}).text


def test_a_status_notice_is_never_text_from_the_address(portal: tuple[Any, Any], tmp_path: Any) -> None:
    """Regression (issue 26, security review 3, F18): ``?m=`` on the admin pages was shown as the page's status
    notice, so a link could put any sentence ("Your session expired: sign in again at https://evil.example/") in
    the portal's own notice box. Now ``m`` names one of the portal's notices (with a number at most)."""
    from portal_helpers import seed_track

    app, db = portal
    seed_track(db, tmp_path)
    admin = TestClient(app, headers={"Authorization": f"Bearer {ADMIN}"})
    spoof = "Your session expired: sign in again at https://evil.example/"
    for page in ("/admin", "/admin/tracks/main", "/admin/tracks/main/routing", "/admin/proposals"):
        shown = admin.get(page, params={"m": spoof})
        assert shown.status_code == 200 and "evil.example" not in shown.text and 'class="notice"' not in shown.text
    assert "Track created" in admin.get("/admin", params={"m": "track-created"}).text
    imported = admin.get("/admin/tracks/main", params={"m": "imported", "n": "7"})
    assert "Imported 7 questions" in imported.text
    assert 'class="notice"' not in admin.get("/admin/tracks/main", params={"m": "imported", "n": "7 (evil)"}).text
