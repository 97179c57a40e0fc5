"""Bidi isolation: right-to-left text with a RIGHT-TO-LEFT OVERRIDE (U+202E) in any user- or model-controlled
field — track title, rater note, name and specialty, question id and text, option text, condition names, document
texts, reasons, proposals — is shown inside a ``<bdi>`` element or a block with ``dir="auto"``, so it cannot reorder
the page around it. (Inside ``<title>`` and ``<option>``, which take no markup, the Unicode isolates FSI … PDI do
the same; form fields isolate their own text.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN, csrf_of
from task_helpers import claim_task

from stableval.portal.admin.manage import create_invites, create_track, import_questions
from stableval.portal.web.app import create_app
from stableval.portal.work.question_queue import decide, propose

RLO, FSI, PDI = "\u202e", "\u2068", "\u2069"


def evil(tag: str) -> str:
    """Hebrew, then an override, then a tag that says which field this is (found again in the page)."""
    return f"\u05e9\u05dc\u05d5\u05dd {RLO}{tag}"


class _Isolation(HTMLParser):
    """Every text node holding U+202E, with whether it is isolated (a ``bdi`` or ``dir="auto"`` ancestor, a form
    field, or FSI … PDI inside ``title``/``option``)."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                      "track", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.found: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append((tag, tag in ("bdi", "textarea") or ("dir", "auto") in attrs))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if RLO not in data:
            return
        isolated = any(flag for _, flag in self.stack)
        if self.stack and self.stack[-1][0] in ("title", "option"):
            isolated = all(re.search(f"{FSI}[^{PDI}]*{RLO}", part) is not None for part in data.split(PDI)
                           if RLO in part)
        self.found.append((data.strip(), isolated))


def _check(html: str, *tags: str) -> None:
    """Each tag appears in the page, and every text with an override is isolated."""
    parser = _Isolation()
    parser.feed(html)
    leaks = [text for text, isolated in parser.found if not isolated]
    assert not leaks, f"not isolated: {leaks}"
    shown = " ".join(text for text, _ in parser.found).casefold()
    missing = [tag for tag in tags if f"{RLO}{tag}".casefold() not in shown]
    assert not missing, f"not on the page: {missing}"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Any, Any, TestClient, TestClient]]:
    """A pairwise, an mcq, a ddx and a rank-documents track full of RTL-override text, a rater who filled in
    their profile with such text, a pending and a rejected proposal; the rater's and the admin's clients."""
    app = create_app(f"sqlite:///{tmp_path / 'p.db'}", admin_token=ADMIN)
    db = app.state.portal.db
    create_track(db, "pw", title=evil("TRACK"), criteria=[evil("CRITERION")])  # key: criterion
    pd.DataFrame({"id": [evil("QID"), "q2"], "prompt": [evil("PROMPT")] * 2, "model_a": [evil("MODEL")] * 2,
                  "answer_a": [evil("ANSWER")] * 2, "model_b": ["GPT-4o"] * 2, "answer_b": ["B"] * 2,
                  "reference": [evil("REFERENCE")] * 2}).to_csv(tmp_path / "pw.csv", index=False)
    import_questions(db, "pw", tmp_path / "pw.csv")
    create_track(db, "mcq", title="MCQ", task="mcq")
    (tmp_path / "mcq.jsonl").write_text(json.dumps({"id": "m1", "prompt": "Which?", "answer_idx": "A", "options": {
        "A": evil("OPTION"), "B": "Beta"}}) + "\n")
    import_questions(db, "mcq", tmp_path / "mcq.jsonl")
    create_track(db, "ddx", title="DDx", task="ddx", conditions=[evil("CONDITION"), "Eczema", "Psoriasis"])
    pd.DataFrame({"id": ["c1"], "prompt": ["Rash?"]}).to_csv(tmp_path / "ddx.csv", index=False)
    import_questions(db, "ddx", tmp_path / "ddx.csv")
    create_track(db, "rank", title="Rank", task="rank-documents")
    (tmp_path / "rank.jsonl").write_text(json.dumps({"id": "r1", "prompt": "Treat?", "items": [
        {"id": "ans", "text": evil("DOCUMENT"), "kind": "answer"},
        {"id": "d1", "text": "Plain document", "kind": "document"}]}) + "\n")
    import_questions(db, "rank", tmp_path / "rank.jsonl")
    (invite,) = create_invites(db, [evil("NOTE")])
    rater = TestClient(app)
    page = rater.get(f"/i/{invite.token}")
    saved = rater.post("/profile", data={"csrf": csrf_of(page.text), "name": evil("NAME"),
                                         "email": "rtl@example.org", "specialty": evil("SPECIALTY"),
                                         "subspecialty": evil("SUBSPECIALTY"), "years": "4"})
    assert saved.status_code == 200, saved.text
    pending = propose(db, invite.rater_id, "pw", prompt=evil("PROPOSED"), specialty="")
    rejected = propose(db, invite.rater_id, "pw", prompt=evil("DECIDED"))
    decide(db, rejected, accept=False, reason=evil("REJECTED"))
    assert pending
    admin = TestClient(app)
    admin.post("/admin/login", data={"csrf": csrf_of(admin.get("/admin/login").text), "token": ADMIN})
    yield app, db, rater, admin
    db.dispose()


def test_rater_pages_isolate_rtl_text(world: tuple[Any, Any, TestClient, TestClient]) -> None:
    _, _, rater, _ = world
    _check(rater.get("/progress").text, "TRACK", "NAME", "SPECIALTY", "SUBSPECIALTY")
    claimed = rater.post("/tracks/pw/next", data={"csrf": csrf_of(rater.get("/progress").text)})
    _check(claimed.text, "TRACK", "QID", "PROMPT", "REFERENCE", "ANSWER", "CRITERION")
    assignment = re.search(r"/a/(\d+)/pairwise", str(claimed.url))
    assert assignment
    step = rater.post(f"/a/{assignment[1]}/pairwise", data={"csrf": csrf_of(claimed.text), "action": "next",
                                                            "pw-criterion": "a", "why-criterion": evil("REASON")})
    _check(step.text, "CRITERION")
    confirm = rater.post(f"/a/{assignment[1]}/rating", data={"csrf": csrf_of(step.text), "action": "next",
                                                             "ra-criterion": "4", "rb-criterion": "3"})
    assert "Check and submit" in confirm.text, confirm.text[-3000:]
    _check(confirm.text, "QID", "REASON", "CRITERION")
    claims = {}
    for track, tags in (("mcq", ("OPTION",)), ("ddx", ("CONDITION",)), ("rank", ("DOCUMENT",))):
        number, first = claim_task(rater, track)
        assert number, first.text
        _check(first.text, *tags)
        claims[track] = number, csrf_of(first.text)
    number, csrf = claims["ddx"]
    ddx = rater.post(f"/a/{number}/task/ddx", data={"csrf": csrf, "action": "next", "flag_reason": "",
                                                    "condition-0": evil("CONDITION")})
    assert "Check and submit" in ddx.text, ddx.text[:2000]
    _check(ddx.text, "CONDITION")
    number, csrf = claims["rank"]
    ranked = rater.post(f"/a/{number}/task/rank", data={"csrf": csrf, "action": "next", "flag_reason": ""})
    assert "Check and submit" in ranked.text
    _check(ranked.text, "DOCUMENT")
    flagged = rater.post(f"/a/{number}/task/rank", data={"csrf": csrf, "action": "next", "flag": "on",
                                                         "flag_reason": evil("FLAG")})
    _check(flagged.text, "FLAG")
    _check(rater.get("/propose").text, "TRACK")


def test_admin_pages_isolate_rtl_text(world: tuple[Any, Any, TestClient, TestClient]) -> None:
    _, _, _, admin = world
    _check(admin.get("/admin").text, "TRACK", "NOTE", "NAME", "SPECIALTY", "SUBSPECIALTY")
    _check(admin.get("/admin/tracks/pw").text, "TRACK", "QID")
    _check(admin.get("/admin/proposals").text, "NAME", "PROPOSED", "DECIDED", "REJECTED")
    _check(admin.get("/admin/tracks/pw/results").text, "TRACK")
    _check(admin.get("/admin/tracks/pw/routing").text, "TRACK")


def test_the_checker_sees_a_leak() -> None:
    """The check itself: bare RTL text fails, isolated text passes."""
    with pytest.raises(AssertionError, match="not isolated"):
        _check(f"<p>Track {evil('X')} (3 left)</p>", "X")
    _check(f'<p>Track <bdi>{evil("X")}</bdi></p><div dir="auto"><p>{evil("Y")}</p></div>'
           f"<title>{FSI}{evil('Z')}{PDI}</title>", "X", "Y", "Z")
    with pytest.raises(AssertionError, match="not isolated"):
        _check(f"<title>{evil('Z')}</title>", "Z")


def test_scale_levels_and_quoted_values_are_isolated(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F14): a single track's level names were bare in the rater's hint
    (every single-answer page and its error page), the admin track page's "Scale:" line and the results table's
    header; and the error messages quoting a typed ddx condition or typed rank numbers were bare, in the error
    summary and beside the field. Now each is isolated (and the quoted value inside its message too)."""
    app = create_app(f"sqlite:///{tmp_path / 'p.db'}", admin_token=ADMIN)
    db = app.state.portal.db
    create_track(db, "sg", title="Single", task="single", scale=f"low,{evil('LEVEL')}", criteria=["accuracy"])
    pd.DataFrame({"id": ["s1"], "prompt": ["P"], "model": ["M"], "answer": ["a"]}).to_csv(tmp_path / "s.csv",
                                                                                           index=False)
    import_questions(db, "sg", tmp_path / "s.csv")
    create_track(db, "ddx", title="DDx", task="ddx", conditions=["Eczema", "Psoriasis"])
    pd.DataFrame({"id": ["c1"], "prompt": ["Rash?"]}).to_csv(tmp_path / "ddx.csv", index=False)
    import_questions(db, "ddx", tmp_path / "ddx.csv")
    create_track(db, "rank", title="Rank", task="rank-documents")
    (tmp_path / "rank.jsonl").write_text(json.dumps({"id": "r1", "prompt": "Treat?", "items": [
        {"id": "ans", "text": "Answer", "kind": "answer"}, {"id": "d1", "text": "Document", "kind": "document"}]})
        + "\n")
    import_questions(db, "rank", tmp_path / "rank.jsonl")
    (invite,) = create_invites(db, ["r"])
    rater = TestClient(app)
    page = rater.get(f"/i/{invite.token}")
    rater.post("/profile", data={"csrf": csrf_of(page.text), "name": "R", "email": "r@example.org",
                                 "specialty": "x", "years": "4"})
    number, first = claim_task(rater, "sg")
    _check(first.text, "LEVEL")
    refused = rater.post(f"/a/{number}/task/single", data={"csrf": csrf_of(first.text), "action": "next",
                                                           "flag_reason": ""})
    assert refused.status_code == 422
    _check(refused.text, "LEVEL")
    level = evil("LEVEL").strip()
    confirm = rater.post(f"/a/{number}/task/single", data={"csrf": csrf_of(first.text), "action": "next",
                                                           "flag_reason": "", "level-accuracy": level})
    digest = re.search(r'name="digest" value="([^"]+)"', confirm.text)
    assert digest, confirm.text[-2000:]
    rater.post(f"/a/{number}/submit", data={"csrf": csrf_of(confirm.text), "digest": digest[1], "form_token":
                                            re.search(r'name="form_token" value="([^"]+)"', confirm.text)[1]})
    number, first = claim_task(rater, "ddx")
    typed = rater.post(f"/a/{number}/task/ddx", data={"csrf": csrf_of(first.text), "action": "next",
                                                      "flag_reason": "", "condition-0": evil("TYPED")})
    assert typed.status_code == 422 and "is not in the study" in typed.text
    _check(typed.text, "TYPED")
    number, first = claim_task(rater, "rank")
    fields = re.findall(r'name="(rank-[^"]+)"', first.text)
    numbers = rater.post(f"/a/{number}/task/rank", data={"csrf": csrf_of(first.text), "action": "save",
                                                         "flag_reason": "", fields[0]: evil("NUMBER"),
                                                         fields[1]: "1"})
    assert numbers.status_code == 422 and "The rank numbers" in numbers.text
    _check(numbers.text, "NUMBER")
    admin = TestClient(app, headers={"Authorization": f"Bearer {ADMIN}"})
    _check(admin.get("/admin/tracks/sg").text, "LEVEL")
    _check(admin.get("/admin/tracks/sg/results").text, "LEVEL")
    db.dispose()
