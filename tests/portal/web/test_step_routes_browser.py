"""Browser tests of the task types in Debian's headless chromium (Playwright): for each task type a rater goes the
full path with the keyboard only — invite link, profile, the task's form (one error fixed on the way), confirm,
submit — and the stored answer is checked in the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from portal_helpers import LiveServer, focused, invite_tokens, tab_to
from sqlalchemy import select
from task_helpers import seed_task_track

from stableval.portal.store.db import Database
from stableval.portal.store.models import Question, Submission

TASKS = ("single", "mcq", "ddx", "rank-documents")



@pytest.fixture(scope="module")
def server(live_portal: Any) -> tuple[LiveServer, dict[str, str], str]:
    """One live server with one track per task type (one question each) and one invited rater per task type."""
    def seed(db: Database, folder: Path) -> dict[str, str]:
        for task in TASKS:
            options: dict[str, Any] = {"scale": "incorrect,partial,correct", "criteria": ["Accuracy", "Safety"]} \
                if task == "single" else {}
            seed_task_track(db, folder, task, slug=task, n=1, **options)
        return dict(zip(TASKS, invite_tokens(db, len(TASKS)), strict=True))

    live, url, tokens = live_portal(seed)
    return live, tokens, url


def _press_button(page: Any, text: str) -> None:
    tab_to(page, lambda f: f["tag"] == "BUTTON" and (f["text"].startswith(text) or f["label"] == text))
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _choose(page: Any, name: str, steps: int) -> None:
    """Tab to a radio group, check its first option (Space), then move right ``steps`` options (arrow keys)."""
    tab_to(page, lambda f: f["name"] == name)
    page.keyboard.press("Space")
    for _ in range(steps):
        page.keyboard.press("ArrowRight")


def _tick(page: Any, element_id: str) -> None:
    tab_to(page, lambda f: f["id"] == element_id)
    page.keyboard.press("Space")


def _start(browser: Any, live: LiveServer, token: str, track_title: str) -> Any:
    page = browser.new_page()
    page.goto(f"{live.base}/i/{token}")
    for field, value in (("name", "Dr Key Board"), ("email", "kb@example.org"), ("specialty", "Dermatology"),
                         ("subspecialty", ""), ("years", "9")):
        tab_to(page, lambda f, field=field: f["id"] == field)
        page.keyboard.type(value)
    _press_button(page, "Save and continue")
    _press_button(page, f"Next question in {track_title}")
    return page


def _finish(page: Any) -> None:
    assert "Check and submit" in page.inner_text("h1")
    _press_button(page, "Yes, submit")
    assert "saved" in page.url or "Thank you" in page.inner_text("main")
    page.close()


def _stored(url: str, slug: str) -> list[dict[str, Any]]:
    db = Database(url)
    try:
        with db.reading() as session:
            from stableval.portal.store.models import Track

            return [s.payload or {} for s in session.scalars(
                select(Submission).join(Question).join(Track).where(Track.slug == slug))]
    finally:
        db.dispose()


def test_single_answer_keyboard_path(browser: Any, server: tuple[LiveServer, dict[str, str], str]) -> None:
    live, tokens, url = server
    page = _start(browser, live, tokens["single"], "Single")
    assert "Rate the answer" in page.inner_text("h1")
    # the transcript: four collapsible messages; the tool call opens with the keyboard
    assert page.locator(".transcript details.message").count() == 4
    tab_to(page, lambda f: f["tag"] == "SUMMARY" and f["text"].startswith("Tool call: fda_label"))
    page.keyboard.press("Enter")
    assert page.locator("details.tool-call").get_attribute("open") is not None
    assert page.evaluate("document.querySelectorAll('script').length") == 1  # the portal's own script only
    _choose(page, "level-accuracy", 2)  # correct
    _press_button(page, "Review and submit")  # safety missing: the error summary takes the focus
    assert "Safety: choose a level" in page.locator("#error-summary").inner_text()
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert page.is_checked("#level-accuracy-3")  # what was chosen is kept
    _choose(page, "level-safety", 1)  # partial
    _press_button(page, "Review and submit")
    assert "correct" in page.inner_text("table") and "partial" in page.inner_text("table")
    _finish(page)
    stored = _stored(url, "single")
    assert [s["levels"] for s in stored] == [{"accuracy": "correct", "safety": "partial"}]


def test_rank_documents_keyboard_path(browser: Any, server: tuple[LiveServer, dict[str, str], str]) -> None:
    live, tokens, url = server
    page = _start(browser, live, tokens["rank-documents"], "Rank-Documents")
    assert "Rank the texts" in page.inner_text("h1")
    keys = page.evaluate("[...document.querySelectorAll('input.rank-number')].map(e => e.name.slice(5))")
    assert keys == ["t0", "t1", "t2", "t3"]  # the page names items by their place first shown, never by id
    shown = keys
    # the last text moves up twice with its "Up" button; the button keeps the focus across the page loads
    _press_button(page, "Move text 4 up")
    assert focused(page)["label"] == "Move text 3 up"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert focused(page)["label"] == "Move text 2 up"
    order = [shown[0], shown[3], shown[1], shown[2]]
    # a repeated place number is refused; then the number boxes put the first text last
    tab_to(page, lambda f: f["id"] == "rank-1")
    page.keyboard.press("Control+A")
    page.keyboard.type("1")
    _press_button(page, "Review and submit")
    assert "each used once" in page.locator("#error-summary").inner_text()
    for box, place in (("rank-0", "4"), ("rank-1", "1"), ("rank-2", "2"), ("rank-3", "3")):
        tab_to(page, lambda f, box=box: f["id"] == box)
        page.keyboard.press("Control+A")
        page.keyboard.type(place)
    _press_button(page, "Review and submit")
    _finish(page)
    stored = _stored(url, "rank-documents")
    assert sorted(stored[0]["shown"]) == ["ans", "d0", "d1", "d2"]
    item = dict(zip(keys, stored[0]["shown"], strict=True))
    assert stored[0]["order"] == [item[k] for k in [*order[1:], order[0]]]


def test_mcq_keyboard_path(browser: Any, server: tuple[LiveServer, dict[str, str], str]) -> None:
    live, tokens, url = server
    page = _start(browser, live, tokens["mcq"], "Mcq")
    assert "Step 1 of 2: answer the question" in page.inner_text("h1") and "(key)" not in page.inner_text("main")
    _tick(page, "blind-B")
    _press_button(page, "Next: see the key")  # "is information missing?" unanswered
    assert "Say whether information is missing" in page.locator("#error-summary").inner_text()
    assert page.is_checked("#blind-B")
    _choose(page, "missing", 0)  # No
    _press_button(page, "Next: see the key")
    assert "Step 2 of 2" in page.inner_text("h1") and "The key is A" in page.inner_text("main")
    _choose(page, "verdict", 1)  # another option is correct
    _tick(page, "seen-B")
    tab_to(page, lambda f: f["id"] == "reason")
    page.keyboard.type("B treats the cause")
    _press_button(page, "Review and submit")
    assert "Another option is correct (not the key): B" in page.inner_text("main")
    _finish(page)
    stored = _stored(url, "mcq")[0]
    assert (stored["blind"], stored["verdict"], stored["seen"], stored["reason"], stored["key"]) == \
        (["B"], "another", ["B"], "B treats the cause", "A")


def test_ddx_keyboard_path(browser: Any, server: tuple[LiveServer, dict[str, str], str]) -> None:
    live, tokens, url = server
    page = _start(browser, live, tokens["ddx"], "Ddx")
    assert "Rank the differential diagnosis" in page.inner_text("h1")
    assert page.get_attribute("#condition-0", "list") == "conditions"
    assert page.locator("#conditions option").count() == 6
    tab_to(page, lambda f: f["id"] == "condition-0")
    page.keyboard.type("psoriasis")
    tab_to(page, lambda f: f["id"] == "condition-1")
    page.keyboard.type("Tinea")  # not a full name from the list
    _tick(page, "tie-1")
    tab_to(page, lambda f: f["id"] == "condition-2")
    page.keyboard.type("Eczema")
    _press_button(page, "Review and submit")
    assert "Row 2: “Tinea” is not in the study’s condition list" in page.locator("#error-summary").inner_text()
    assert page.get_attribute("#condition-1", "aria-invalid") == "true" and page.is_checked("#tie-1")
    tab_to(page, lambda f: f["id"] == "condition-1")
    page.keyboard.press("Control+A")
    page.keyboard.type("Tinea corporis")
    _press_button(page, "Review and submit")
    assert "Psoriasis = Tinea corporis" in page.inner_text("main")
    _finish(page)
    stored = _stored(url, "ddx")[0]
    assert stored["groups"] == [[1, 2], [0]] and stored["names"] == [["Psoriasis", "Tinea corporis"], ["Eczema"]]
