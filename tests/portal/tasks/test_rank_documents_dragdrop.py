"""Drag and drop on the rank-documents form in Debian's headless chromium (Playwright): a text dragged by its
handle moves, the place numbers follow, and the submitted ranking is the dragged order; without JavaScript the form
is unchanged (no handles, the buttons still move texts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from portal_helpers import LiveServer, invite_tokens
from sqlalchemy import select
from task_helpers import seed_task_track

from stableval.portal.store.db import Database
from stableval.portal.store.models import Submission


@pytest.fixture(scope="module")
def server(live_portal: Any) -> tuple[LiveServer, list[str], str]:
    """A live server with a rank-documents track of two questions (four texts each) and two invited raters."""
    def seed(db: Database, folder: Path) -> list[str]:
        seed_task_track(db, folder, "rank-documents", slug="nrp", n=2)
        return invite_tokens(db, 2)

    live, url, tokens = live_portal(seed)
    return live, tokens, url


def _rank_page(page: Any, live: LiveServer, token: str) -> None:
    page.goto(f"{live.base}/i/{token}")
    for field, value in (("name", "Dr Drag"), ("email", "drag@example.org"), ("specialty", "oncology"),
                         ("years", "5")):
        page.fill(f"#{field}", value)
    with page.expect_navigation():
        page.click("text=Save and continue")
    with page.expect_navigation():
        page.click("text=Next question in Nrp")
    assert "Rank the texts" in page.inner_text("h1")


def _order(page: Any) -> list[str]:
    """The items in the order on screen, as the page names them (the number boxes' names: rank-t<k>, k the
    item's place in the order first shown; the page never names an item id)."""
    return list(page.evaluate("[...document.querySelectorAll('li.rank-item input.rank-number')]"
                              ".map(e => e.name.slice(5))"))


def test_drag_a_text_to_the_top_and_submit(browser: Any, server: tuple[LiveServer, list[str], str]) -> None:
    live, tokens, url = server
    page = browser.new_page(viewport={"width": 1200, "height": 2400})  # every text on screen: no scrolling mid-drag
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text
            else None)
    _rank_page(page, live, tokens[0])
    assert page.locator(".drag-handle").count() == 4 and "drag a text" in page.inner_text("#rank-hint")
    scripts = page.evaluate("[...document.scripts].map(s => [new URL(s.src).pathname, s.textContent.trim()])")
    assert scripts == [["/static/portal.js", ""], ["/static/rank_drag.js", ""]]  # no inline script (CSP)
    shown = _order(page)
    page.drag_and_drop("li.rank-item:nth-child(4) .drag-handle", "li.rank-item:nth-child(1)",
                       target_position={"x": 20, "y": 5})  # the top half of the first text: goes before it
    dragged = [shown[3], *shown[:3]]
    assert _order(page) == dragged
    boxes = page.locator("input.rank-number")
    assert [boxes.nth(i).input_value() for i in range(4)] == ["1", "2", "3", "4"]  # numbers follow the screen
    assert page.get_attribute("li.rank-item:nth-child(1) button[value^='up:']", "disabled") is not None
    assert page.get_attribute("li.rank-item:nth-child(4) button[value^='down:']", "disabled") is not None
    assert page.get_attribute("li.rank-item:nth-child(4) button[value^='down:']", "aria-label") == \
        "Move text 4 down"
    assert "Moved to place 1 of 4" in page.inner_text("[role=status]")
    page.drag_and_drop("li.rank-item:nth-child(2) .drag-handle", "li.rank-item:nth-child(3)",
                       target_position={"x": 20, "y": 60})  # the lower half of the third text: goes after it
    dragged = [dragged[0], dragged[2], dragged[1], dragged[3]]
    assert _order(page) == dragged
    with page.expect_navigation():
        page.click("button:has-text('Review and submit')")
    assert "Check and submit" in page.inner_text("h1")
    with page.expect_navigation():
        page.click("button:has-text('Yes, submit')")
    page.close()
    assert refused == []  # the script ran under the portal's Content-Security-Policy without a violation
    db = Database(url)
    try:
        with db.reading() as session:
            stored = [s.payload for s in session.scalars(select(Submission))]
    finally:
        db.dispose()
    assert len(stored) == 1 and stored[0] and [f"t{k}" for k in range(4)] == shown  # first shown: t0 ... t3
    item = dict(zip(shown, stored[0]["shown"], strict=True))
    assert stored[0]["order"] == [item[key] for key in dragged]


def test_without_javascript_the_buttons_still_work(browser: Any, server: tuple[LiveServer, list[str], str]) -> None:
    live, tokens, _ = server
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        _rank_page(page, live, tokens[1])
        assert page.locator(".drag-handle").count() == 0
        shown = _order(page)
        with page.expect_navigation():
            page.click("button[aria-label='Move text 2 up']")
        assert _order(page) == [shown[1], shown[0], *shown[2:]]
    finally:
        context.close()
