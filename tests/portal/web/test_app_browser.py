"""Browser tests in Debian's headless chromium (Playwright): a rater goes through two questions with the keyboard
only, hits a consistency error and fixes it, reloads mid-form without losing anything; an admin imports and
exports through the pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from portal_helpers import ADMIN, LiveServer, invite_tokens, questions_frame, seed_track, tab_to

from stableval.portal.store.db import Database


@pytest.fixture(scope="module")
def server(live_portal: Any) -> tuple[LiveServer, str]:
    """One live server for the module, through ``stableval serve`` (starting one costs seconds)."""
    def seed(db: Database, folder: Path) -> str:
        seed_track(db, folder, frame=questions_frame(2))
        return invite_tokens(db, 1)[0]

    live, _, token = live_portal(seed, cli=True)
    return live, token


def _choose(page: Any, name: str, steps: int) -> None:
    """Tab to a radio group, check its first option (Space), then move right ``steps`` options (arrow keys)."""
    tab_to(page, lambda f: f["name"] == name)
    page.keyboard.press("Space")
    for _ in range(steps):
        page.keyboard.press("ArrowRight")


def _press_button(page: Any, text: str) -> None:
    tab_to(page, lambda f: f["tag"] == "BUTTON" and f["text"].startswith(text))
    with page.expect_navigation():
        page.keyboard.press("Enter")


CRITERIA = ("problem_resolution", "helpfulness", "scientific_consensus", "accuracy", "completeness")


def test_rater_keyboard_path_error_fix_and_reload(browser: Any, server: tuple[LiveServer, str]) -> None:
    live, token = server
    page = browser.new_page()
    page.goto(f"{live.base}/i/{token}")
    for field, value in (("name", "Dr Key Board"), ("email", "kb@example.org"), ("specialty", "Cardiology"),
                         ("subspecialty", ""), ("years", "9")):
        tab_to(page, lambda f, field=field: f["id"] == field)
        page.keyboard.type(value)
    _press_button(page, "Save and continue")
    assert "2 questions remaining in track Main" in page.inner_text("main")
    for question in range(2):
        _press_button(page, "Next question")
        assert page.evaluate("window.scrollY") == 0
        assert page.get_by_role("radiogroup", name="Accuracy: which answer is better").count() == 1
        for position, key in enumerate(CRITERIA):
            if question == 0 and position == 2:  # reload mid-form: the autosave keeps what was chosen
                page.wait_for_load_state("networkidle")
                page.reload()
                assert page.is_checked("#pw-problem_resolution") and page.is_checked("#pw-helpfulness")
                tab_to(page, lambda f: f["name"] == "pw-helpfulness")
            _choose(page, f"pw-{key}", 0)  # "A is better"
        _press_button(page, "Next: rate each answer")
        assert "Step 2 of 2" in page.inner_text("h1")
        if question == 0:  # as a browser without the page's script (no live restriction): the server still refuses
            page.evaluate("document.querySelectorAll('fieldset[data-allowed]').forEach("
                          "f => f.replaceWith(f.cloneNode(true)))")
        for key in CRITERIA:
            bad = question == 0 and key == "accuracy"
            _choose(page, f"ra-{key}", 0 if bad else 4)  # A: 1 (inconsistent with "A is better") or 5
            _choose(page, f"rb-{key}", 2)  # B: 3
        _press_button(page, "Review and submit")
        if question == 0:
            summary = page.locator("#error-summary")
            assert summary.is_visible() and "Accuracy: you chose A as better" in summary.inner_text()
            assert page.evaluate("document.activeElement.id") == "error-summary"  # focus moved to the summary
            tab_to(page, lambda f: f["name"] == "ra-accuracy")
            for _ in range(3):  # 1 -> 3 -> 4 -> 5: the script skips 2, ruled out by B's 3
                page.keyboard.press("ArrowRight")
            _press_button(page, "Review and submit")
        assert "Check and submit" in page.inner_text("h1")
        _press_button(page, "Yes, submit")
    assert "Thank you!" in page.inner_text("h1")
    page.close()


def test_admin_imports_and_exports(browser: Any, server: tuple[LiveServer, str], tmp_path: Path) -> None:
    live, _ = server
    page = browser.new_page()
    page.goto(f"{live.base}/admin/login")
    page.fill("#token", ADMIN)
    page.click("text=Sign in")
    page.fill("#slug", "second")
    page.fill("#title", "Second track")
    page.click("text=Create track")
    assert "Track created" in page.inner_text("main")
    page.click("text=Second track")
    upload = tmp_path / "upload.csv"
    questions_frame(3, prefix="s", specialty="neurology").to_csv(upload, index=False)  # not for the rater above
    page.set_input_files("#file", str(upload))
    page.click("button:has-text('Import')")
    assert "Imported 3 questions" in page.inner_text("main") and "s2" in page.inner_text("main")
    with page.expect_download() as download:
        page.click("a[href$='kind=pairwise&format=csv']")
    saved = tmp_path / "export.csv"
    download.value.save_as(saved)
    frame = pd.read_csv(saved)
    assert list(frame.columns[:5]) == ["item", "agent_a", "agent_b", "rater", "winner"] and len(frame) == 0
    page.close()


def test_proxy_basic_auth_header_does_not_bypass_csrf(browser: Any, server: tuple[LiveServer, str],
                                                      tmp_path: Path) -> None:
    """Review finding F1 in Chromium: an admin whose browser sends a proxy's `Authorization: Basic` header opens a
    page on another port of the same host (same site, so the session cookie goes along) that auto-submits a
    form creating a track: refused (403), nothing created."""
    import functools
    import http.server
    import threading

    live, _ = server
    (tmp_path / "attack.html").write_text(
        f'<form method="post" action="{live.base}/admin/tracks"><input name="slug" value="csrf-demo"></form>'
        '<script>document.forms[0].submit()</script>')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    context = browser.new_context(extra_http_headers={"Authorization": "Basic Zm9vOmJhcg=="})
    try:
        page = context.new_page()
        page.goto(f"{live.base}/admin/login")
        page.fill("#token", ADMIN)
        page.click("text=Sign in")
        assert "New track" in page.inner_text("main")
        with page.expect_navigation(url=f"{live.base}/admin/tracks"):
            page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/attack.html")
        assert "did not come from this site" in page.inner_text("main")
        page.goto(f"{live.base}/admin")
        assert "csrf-demo" not in page.inner_text("main")
    finally:
        context.close()
        attacker.shutdown()
