"""The "New track" form in Debian's headless chromium (Playwright): an admin creates one track of each task type
other than pairwise (the ddx condition list uploaded as a file), fixing one error on the way, and each track is
checked in the database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from portal_helpers import ADMIN, LiveServer
from sqlalchemy import select
from task_helpers import CONDITIONS

from stableval.portal.store.db import Database
from stableval.portal.store.models import Track


@pytest.fixture(scope="module")
def server(live_portal: Any) -> tuple[LiveServer, str]:
    live, url, _ = live_portal()
    return live, url


def _create(page: Any, base: str, fields: dict[str, str], *, task: str, upload: Path | None = None) -> None:
    page.goto(f"{base}/admin")
    for name, value in fields.items():
        page.fill(f"#{name}", value)
    page.select_option("#task", task)
    if upload is not None:
        page.set_input_files("#conditions_file", str(upload))
    with page.expect_navigation():
        page.click("text=Create track")


def test_admin_creates_each_task_type_in_the_browser(browser: Any, server: tuple[LiveServer, str],
                                                      tmp_path: Path) -> None:
    live, url = server
    page = browser.new_page()
    page.goto(f"{live.base}/admin/login")
    page.fill("#token", ADMIN)
    page.click("text=Sign in")
    # a scale of one level is refused: the summary takes the focus and the field is marked; the values stay
    _create(page, live.base, {"slug": "grading", "title": "Grading", "scale": "pass"}, task="single")
    assert "Track not created" in page.inner_text("main")
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert "Scale: bad scale" in page.locator("#error-summary").inner_text()
    assert page.get_attribute("#scale", "aria-invalid") == "true"
    assert page.input_value("#title") == "Grading" and page.input_value("#task") == "single"
    page.fill("#scale", "fail,pass,distinction")
    with page.expect_navigation():
        page.click("text=Create track")
    assert "Track created" in page.inner_text("main")
    _create(page, live.base, {"slug": "medqa", "title": "MedQA relabel", "gold_rate": "0.1"}, task="mcq")
    listing = tmp_path / "conditions.txt"
    listing.write_text("\n".join(CONDITIONS) + "\n")
    _create(page, live.base, {"slug": "derm", "title": "Derm DDx", "max_conditions": "4"}, task="ddx",
            upload=listing)
    _create(page, live.base, {"slug": "nrp", "title": "NRP experts", "k": "2", "specialties": "oncology"},
            task="rank-documents")
    assert "Track created" in page.inner_text("main")
    for title in ("Grading", "MedQA relabel", "Derm DDx", "NRP experts"):
        assert page.locator(f"table a:has-text('{title}')").count() == 1
    page.close()
    db = Database(url)
    try:
        with db.reading() as session:
            tracks = {t.slug: t for t in session.scalars(select(Track))}
    finally:
        db.dispose()
    assert {slug: t.task_type for slug, t in tracks.items()} == \
        {"grading": "single", "medqa": "mcq", "derm": "ddx", "nrp": "rank-documents"}
    assert tracks["grading"].scale == ["fail", "pass", "distinction"]
    assert tracks["medqa"].gold_rate == 0.1
    assert tracks["derm"].task_options == {"conditions": CONDITIONS, "max_conditions": 4}
    assert (tracks["nrp"].k, tracks["nrp"].specialties) == (2, ["oncology"])
