"""Issue 31: step 2 restricts the rating options as the rater clicks (the consistency rules applied live in the
browser from the table the server derives, :func:`stableval.portal.tasks.rules.live_rules`), in Debian's headless
chromium; and the server still refuses an inconsistent rating posted directly."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from portal_helpers import LiveServer, invite_tokens, questions_frame, seed_track

from stableval.portal.store.db import Database

CRITERIA = ("problem_resolution", "helpfulness", "scientific_consensus", "accuracy", "completeness")


@pytest.fixture(scope="module")
def server(live_portal: Any) -> tuple[LiveServer, str]:
    def seed(db: Database, folder: Path) -> str:
        seed_track(db, folder, frame=questions_frame(1))
        return invite_tokens(db, 1)[0]

    live, _, token = live_portal(seed)
    return live, token


def _disabled(page: Any, name: str) -> list[str]:
    return page.evaluate(f"Array.from(document.querySelectorAll('input[name=\"{name}\"]'))"
                         ".filter(r => r.disabled).map(r => r.value)")


def test_step_two_restricts_the_ratings_as_the_rater_clicks(browser: Any, server: tuple[LiveServer, str]) -> None:
    live, token = server
    page = browser.new_page()
    page.goto(f"{live.base}/i/{token}")
    for field, value in (("name", "Dr Live"), ("email", "live@example.org"), ("specialty", "Cardiology"),
                         ("years", "4")):
        page.fill(f"#{field}", value)
    page.click("text=Save and continue")
    page.click("text=Next question")
    for key in CRITERIA:  # A is better on every criterion but helpfulness (a tie: any ratings)
        page.check(f"#pw-{key}" if key != "helpfulness" else "#pw-helpfulness-tie")
    page.click("text=Next: rate each answer")
    assert "Step 2 of 2" in page.inner_text("h1")
    assert _disabled(page, "ra-accuracy") == [] and _disabled(page, "rb-accuracy") == []  # nothing chosen yet

    page.check("#rb-accuracy-4")  # B 4: A must be at least 4
    assert _disabled(page, "ra-accuracy") == ["1", "2", "3"] and _disabled(page, "rb-accuracy") == []
    page.check("#ra-accuracy-4")  # A 4: B at most 4 (its 4 is kept)
    assert _disabled(page, "rb-accuracy") == ["5"] and _disabled(page, "ra-accuracy") == ["1", "2", "3"]
    page.check("#rb-accuracy-na")  # "unable to judge" satisfies every rule
    assert _disabled(page, "ra-accuracy") == []
    page.check("#rb-helpfulness-5")  # a tie allows any ratings
    assert _disabled(page, "ra-helpfulness") == []
    assert "ruled-out" in (page.get_attribute("label:has(#rb-accuracy-5)", "class") or "")

    # the server is still the authority: the same rule posted directly (not through the page) is refused
    assignment = re.search(r"/a/(\d+)/rating", page.url)
    assert assignment is not None, page.url
    csrf = page.get_attribute("input[name=csrf]", "value")
    form = {"csrf": csrf, "action": "next", **{f"ra-{c}": "2" for c in CRITERIA}, **{f"rb-{c}": "4" for c in CRITERIA}}
    refused = page.request.post(f"{live.base}/a/{assignment.group(1)}/rating", form=form)
    assert refused.status == 422
    assert "Accuracy: you chose A as better, so the rating of A must be at least the rating of B (got A 2, B 4)." \
        in refused.text()
    page.close()
