"""A hypothesis fuzz of the portal, for every registered task type (parametrized from
:data:`~stableval.portal.tasks.registry.TASKS`, so a new type is fuzzed with no edit) on SQLite and PostgreSQL.

Raters (one per example, on a track of regular and gold questions) do random things: claim, open any step in any
order (their own type's steps, another type's, the confirm page), post steps with the type's example answer mixed
with random values, junk fields, random buttons (next, save, back, move), flags with random reasons, autosaves with
any revision, and submits with the right, a stale or a forged form (sometimes twice). The admin imports random
question files (the example question with fields dropped, replaced by random JSON, added, or named twice). After
every response the invariants of the security reviews are checked:

* no server error (no 5xx);
* gold never leaks: no rater page says "gold", and a rater's counts cannot tell gold questions apart (a claim
  leaves "remaining" and "done" as they were; a stored submission lowers "remaining" by one, or it stays at 1, and
  raises "done" by one, whatever the question);
* blind answers never follow a key view (``mcq``): a page shows the key only once the draft's blind answer is
  complete, and from the first key view on the blind answer never changes, in the draft or as stored (and no
  answer is stored without its key view);
* every acknowledged submit is stored exactly once, and nothing unacknowledged is stored (a pairwise answer with
  its judgments);
* an import is all or nothing: 303 with every row stored, or 422 with none.

Bounded for CI (a few seconds per task type and database; ``derandomize``: the same cases every run, as
``tests/test_fuzz.py`` does).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings, strategies as st
from portal_helpers import ADMIN, csrf_of, invite_tokens
from sqlalchemy import func, select

from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database
from stableval.portal.store.models import Judgment, Question, Rater as RaterRow, Submission
from stableval.portal.tasks.registry import TASKS
from stableval.portal.web.app import create_app
from stableval.portal.work.assignment import progress_for
from stableval.portal.work.flow import open_assignment

RATER_RUNS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
IMPORTS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow])
#: Regular and gold questions of the fuzzed track (gold: the last ones).
REGULAR, GOLD = 5, 3
#: What a page shows once the mcq key is shown.
KEY_SHOWN = ("The key is <strong>", "(key)")
#: Random text: any character, control characters and right-to-left overrides included, never the word "gold"
#: (the leak check looks for it).
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).filter(
    lambda text: "gold" not in text.casefold())
JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10**12) | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=6)


def _all_steps() -> list[tuple[str, str]]:
    """Every (address part, step) of every type: a rater may open any of them."""
    return sorted({(task.step_path, step) for task in TASKS.values() for step in (*task.steps, "confirm")})


class World:
    """A portal with one track of the task type: its app, database, the admin's client and what the checks
    remember across examples (they share the database: each example is a new rater)."""

    def __init__(self, url: str, tmp_path: Path, name: str) -> None:
        self.name, self.task = name, TASKS[name]
        self.app = create_app(url, admin_token=ADMIN)
        self.db: Database = self.app.state.portal.db
        create_track(self.db, "imports", task=name, **self.task.example_settings)
        records = [{**self.task.example_question(n), **({"gold": self.task.example_gold(n)} if n >= REGULAR else {})}
                   for n in range(REGULAR + GOLD)]
        self.questions = tmp_path / "questions.jsonl"
        self.questions.write_text("".join(json.dumps(record) + "\n" for record in records))
        self.tracks = self.browsers = 0
        self.admin = TestClient(self.app, raise_server_exceptions=False,
                                headers={"Authorization": f"Bearer {ADMIN}"})

    def new_track(self) -> str:
        """A new track of the type with its regular and gold questions (each example's rater gets one: the
        questions of earlier examples are used up); its name."""
        self.tracks += 1
        slug = f"t{self.tracks}"
        create_track(self.db, slug, task=self.name, k=2, flag_limit=2, gold_rate=0.4, qc_min_gold=2,
                     **self.task.example_settings)
        import_questions(self.db, slug, self.questions)
        return slug

    def close(self) -> None:
        self.db.dispose()


@pytest.fixture(params=list(TASKS))
def world(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Any:
    found = World(db_url, tmp_path, request.param)
    yield found
    found.close()


class Browser:
    """One rater's browser, the pages it saw, and what the invariants need to remember."""

    def __init__(self, world: World, specialty: str, subspecialty: str) -> None:
        self.world, self.slug = world, world.new_track()
        world.browsers += 1  # an address of its own: the invite links' rate limit is per address
        self.client = TestClient(world.app, raise_server_exceptions=False,
                                 client=(f"10.0.{world.browsers // 250}.{world.browsers % 250 + 1}", 5000))
        page = self.client.get(f"/i/{invite_tokens(world.db, 1)[0]}")
        self.csrf = csrf_of(page.text)
        saved = self.post("/profile", {"name": "R", "email": "r@example.org", "specialty": specialty or "x",
                                       "subspecialty": subspecialty, "years": "3"})
        assert saved.status_code in (200, 422), saved.status_code
        with world.db.reading() as session:
            self.id = int(session.scalars(select(RaterRow.id).order_by(RaterRow.id.desc())).first() or 0)
        self.assignment = 0
        self.confirm = ""  # the last confirm page seen
        self.acknowledged: set[int] = set()
        self.key_views: dict[int, tuple[Any, ...]] = {}  # mcq: assignment -> blind answer at the first key view

    # ------------------------------------------------------------------------------------------ requests
    def checked(self, response: Any) -> Any:
        """Every rater response: no server error, no gold; key views recorded (mcq); CSRF token kept fresh."""
        assert response.status_code < 500, (response.status_code, response.text[-600:])
        text = response.text
        assert "gold" not in text.casefold(), text[-600:]
        found = re.search(r'name="csrf" value="([^"]+)"', text)
        if found:
            self.csrf = found.group(1)
        if "Check and submit" in text:
            self.confirm = text
        if any(mark in text for mark in KEY_SHOWN):
            self.key_view(response)
        return response

    def get(self, path: str) -> Any:
        return self.checked(self.client.get(path))

    def post(self, path: str, data: dict[str, Any]) -> Any:
        return self.checked(self.client.post(path, data={"csrf": self.csrf, **data}))

    def counts(self) -> tuple[int, int]:
        """The rater's (remaining, done) in the track, as the progress page shows them."""
        with self.world.db.reading() as session:
            rater = session.get(RaterRow, self.id)
            if rater is None or rater.profile_at is None:
                return 0, 0
            lines = [line for line in progress_for(session, rater) if line.slug == self.slug]
        return (lines[0].remaining, lines[0].submitted) if lines else (0, 0)

    # ------------------------------------------------------------------------------------------ mcq: the key
    def blind(self, assignment: int) -> tuple[Any, ...] | None:
        opened = open_assignment(self.world.db, assignment, self.id)
        if opened is None or opened.assignment.status != "open":
            return None
        task = opened.draft.get("task") or {}
        return tuple(task.get("blind") or ()), bool(task.get("blind_none")), task.get("missing")

    def key_view(self, response: Any) -> None:
        """A page showed the key: the blind answer must be complete, and stays what it is now."""
        found = re.search(r"/a/(\d+)/", str(response.url))
        assert found, str(response.url)
        assignment = int(found.group(1))
        opened = open_assignment(self.world.db, assignment, self.id)
        assert opened is not None
        task = opened.draft.get("task") or {}
        assert (task.get("blind") or task.get("blind_none")) and task.get("missing"), \
            f"the key was shown before the blind answer was complete: {task}"
        self.key_views.setdefault(assignment, self.blind(assignment) or ())

    def blind_unchanged(self) -> None:
        for assignment, seen in self.key_views.items():
            now = self.blind(assignment)
            assert now is None or now == seen, f"blind answer changed after the key: {seen} -> {now}"


#: Field names a form may carry besides its own (another type's, a hidden one, junk) and values they may take.
FIELDS = ("blind", "seen", "verdict", "reason", "missing", "blind_none", "condition-0", "tie-1", "rank-t0",
          "rank-t1", "pw-accuracy", "ra-accuracy", "why-accuracy", "level-accuracy", "rev", "junk")
VALUES = TEXT | st.sampled_from(["A", "B", "C", "on", "no", "correct", "another", "1", "2", "5", "a"])
#: A step's form as changes to the type's example answer (drawn before the page is known, so every example draws
#: the same way whatever the portal answers: hypothesis can replay it).
FORM = st.fixed_dictionaries({
    "changes": st.lists(st.integers(0, 11), min_size=8, max_size=8),  # per field: 0 drop, 1 random text, else keep
    "texts": st.lists(TEXT, min_size=8, max_size=8),
    "button": st.sampled_from(["next", "next", "next", "next", "save", "back", "up", "down", "x:y"]),
    "key": st.integers(0, 3),
    "flag": st.sampled_from(["", "", "", "off", "on"]),
    "reason": TEXT,
    "extra": st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), max_size=2)})
ACTION = st.fixed_dictionaries({
    "what": st.sampled_from(["claim", "claim", "open", "open", "post", "post", "post", "post", "autosave",
                             "submit", "submit", "progress", "elsewhere"]),
    "address": st.sampled_from(_all_steps()),
    "step": st.integers(0, 7),
    "form": FORM,
    "rev": st.sampled_from(["0", "1", "99", "x"]),
    "forge": st.integers(0, 4),  # 0: a forged submit form, else the last confirm page's
    "token": TEXT, "digest": TEXT,
    "clicks": st.integers(1, 2),  # 2: a double click
    "other": st.tuples(st.integers(0, 10**6), st.sampled_from(["task/", ""]),
                       st.sampled_from(["confirm", "blind", "seen", "pairwise", "x"]))})


def _form(rater: Browser, step: str, drawn: dict[str, Any]) -> dict[str, Any]:
    """A step's form: the type's example answer for the question, changed as ``drawn`` says."""
    world = rater.world
    opened = open_assignment(world.db, rater.assignment, rater.id)
    form: dict[str, Any] = {}
    if opened is not None and step in world.task.steps:
        form = dict(world.task.example_answer(opened.track, opened.question, step))
    for number, name in enumerate(list(form)):
        change = drawn["changes"][number % 8]
        if change == 0:
            del form[name]
        elif change == 1:
            form[name] = drawn["texts"][number % 8]
    button = drawn["button"]
    form["action"] = f"{button}:t{drawn['key']}" if button in ("up", "down") else button
    if drawn["flag"]:
        form["flag_reason"] = drawn["reason"]
        if drawn["flag"] == "on":
            form["flag"] = "on"
    form.update(dict(drawn["extra"]))
    return form


def _claim(rater: Browser) -> None:
    before = rater.counts()
    response = rater.post(f"/tracks/{rater.slug}/next", {})
    found = re.search(r"/a/(\d+)/", str(response.url))
    if found:
        rater.assignment = int(found.group(1))
    assert rater.counts() == before, "a claim changed the rater's counts"


def _submit(rater: Browser, drawn: dict[str, Any]) -> None:
    token = re.search(r'name="form_token" value="([^"]+)"', rater.confirm)
    digest = re.search(r'name="digest" value="([^"]+)"', rater.confirm)
    action = re.search(r'action="/a/(\d+)/submit"', rater.confirm)
    if token and digest and action and drawn["forge"] > 0:
        form, target = {"form_token": token.group(1), "digest": digest.group(1)}, int(action.group(1))
    else:
        form, target = {"form_token": drawn["token"], "digest": drawn["digest"]}, rater.assignment
    for _ in range(drawn["clicks"]):
        before, stored = rater.counts(), _stored(rater, target)
        response = rater.post(f"/a/{target}/submit", form)
        if str(response.url).endswith("/progress?saved=1") and response.status_code == 200:
            rater.acknowledged.add(target)
        if _stored(rater, target) > stored:  # a new submission: the counts move by exactly one, gold or not
            remaining, done = rater.counts()
            assert done == before[1] + 1 and (remaining == before[0] - 1 or before[0] <= 1), (before, remaining)
        else:
            assert rater.counts() == before


def _stored(rater: Browser, assignment: int) -> int:
    with rater.world.db.reading() as session:
        return int(session.scalar(select(func.count(Submission.id)).where(
            Submission.assignment_id == assignment)) or 0)


def _act(rater: Browser, drawn: dict[str, Any]) -> None:
    """One random thing a rater does."""
    task, a, what = rater.world.task, rater.assignment, drawn["what"]
    steps = [*task.steps, *task.steps, *task.steps, "seen", "blind", "rating", "confirm"]
    if what == "claim" or (not a and what in ("open", "post", "autosave")):
        _claim(rater)
    elif what == "open":
        path, step = drawn["address"]
        rater.get(f"/a/{a}/{path}{step}")
    elif what == "post":
        step = steps[drawn["step"] % len(steps)]
        rater.post(f"/a/{a}/{task.step_path}{step}", _form(rater, step, drawn["form"]))
    elif what == "autosave":
        step = steps[drawn["step"] % len(steps)]
        rater.post(f"/a/{a}/{task.step_path}draft", {**_form(rater, step, drawn["form"]), "step": step,
                                                     "rev": drawn["rev"]})
    elif what == "submit":
        _submit(rater, drawn)
    elif what == "progress":
        rater.get("/progress")
    else:  # someone else's assignment, or none, at any address
        number, path, step = drawn["other"]
        rater.get(f"/a/{number}/{path}{step}")
    rater.blind_unchanged()


def test_raters_doing_anything_keep_every_invariant(world: World) -> None:
    @RATER_RUNS
    @given(plan=st.lists(ACTION, min_size=4, max_size=24), specialty=st.sampled_from(["general", "cardiology", ""]),
           subspecialty=st.sampled_from(["", "breast cancer"]), finish=st.booleans())
    def run(plan: list[dict[str, Any]], specialty: str, subspecialty: str, finish: bool) -> None:
        rater = Browser(world, specialty, subspecialty)
        for drawn in plan:
            _act(rater, drawn)
        if rater.assignment and finish:  # often enough, the honest path to the end
            _finish(rater)
        _check_stored(rater)

    run()


def _finish(rater: Browser) -> None:
    """Answer every step of the current assignment with the example answer, then submit."""
    task = rater.world.task
    for step in task.steps:
        opened = open_assignment(rater.world.db, rater.assignment, rater.id)
        if opened is None or opened.assignment.status != "open":
            return
        answer = dict(task.example_answer(opened.track, opened.question, step))
        rater.post(f"/a/{rater.assignment}/{task.step_path}{step}", {**answer, "action": "next",
                                                                      "flag_reason": ""})
    rater.confirm = rater.get(f"/a/{rater.assignment}/{task.step_path}confirm").text
    for _ in range(2):
        action = re.search(r'action="/a/(\d+)/submit"', rater.confirm)
        token = re.search(r'name="form_token" value="([^"]+)"', rater.confirm)
        digest = re.search(r'name="digest" value="([^"]+)"', rater.confirm)
        if not (action and token and digest):
            return
        response = rater.post(f"/a/{action.group(1)}/submit", {"form_token": token.group(1),
                                                               "digest": digest.group(1)})
        if str(response.url).endswith("/progress?saved=1"):
            rater.acknowledged.add(int(action.group(1)))


def _check_stored(rater: Browser) -> None:
    """Every acknowledged submit stored exactly once, nothing else; a blind answer as it was at the key view."""
    world = rater.world
    with world.db.reading() as session:
        rows = session.execute(select(Submission.assignment_id, Submission.flagged, Submission.payload,
                                      Submission.id).where(Submission.rater_id == rater.id)).all()
        judgments = {row[3]: int(session.scalar(select(func.count(Judgment.id)).where(
            Judgment.submission_id == row[3])) or 0) for row in rows}
        criteria = len(_criteria(session, rater.slug))
    stored = [row[0] for row in rows]
    assert sorted(stored) == sorted(rater.acknowledged) and len(set(stored)) == len(stored), \
        (stored, rater.acknowledged)
    for assignment, flagged, payload, submission in rows:
        if world.name == "pairwise":
            assert judgments[submission] == (0 if flagged else criteria)
        if world.name == "mcq" and not flagged:
            assert assignment in rater.key_views, "an mcq answer stored without its key ever shown"
            blind, none, missing = rater.key_views[assignment]
            assert (tuple(payload["blind"]), payload["missing"]) == (blind, missing) and bool(none) == (not blind)


def _criteria(session: Any, slug: str) -> list[Any]:
    from stableval.portal.store.models import Track

    track = session.scalar(select(Track).where(Track.slug == slug))
    return list(track.criteria)


def _record(data: st.DataObject, task: Any, number: int) -> dict[str, Any]:
    """The example question ``number``, mutated: fields dropped, replaced by random JSON, added, named twice."""
    record: dict[str, Any] = dict(task.example_question(number))
    for name in list(record):
        choice = data.draw(st.integers(0, 15))
        if choice == 0:
            del record[name]
        elif choice == 1:
            record[name] = data.draw(JSON)
        elif choice == 2:
            record[name.upper()] = record[name]  # the same column twice
    for _ in range(data.draw(st.integers(0, 2))):
        record[data.draw(st.sampled_from(["gold", "specialty", "subspecialty", "reference", "extra"]))] = \
            data.draw(JSON | st.just(task.example_gold(number)))
    return record


def test_imports_are_all_or_nothing(world: World) -> None:
    """Random question files, posted by the admin: 303 with every row stored, or 422 naming the problem with
    nothing stored; never a server error."""
    ids = iter(range(10**6))

    @IMPORTS
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        numbers = [next(ids) for _ in range(data.draw(st.integers(1, 3)))]
        records = [_record(data, world.task, n) for n in numbers]
        ending = data.draw(st.sampled_from(["\n", "\r\n"]))
        body = "".join(json.dumps(r, ensure_ascii=data.draw(st.booleans())) + ending for r in records)
        name = data.draw(st.sampled_from(["q.jsonl", "q.ndjson", "Q.JSONL", "q.txt", "q." + "l" * 300]))
        with world.db.reading() as session:
            before = int(session.scalar(select(func.count(Question.id))) or 0)
        answer = world.admin.post("/admin/tracks/imports/import", files={"file": (name, body.encode())},
                                  follow_redirects=False)
        with world.db.reading() as session:
            after = int(session.scalar(select(func.count(Question.id))) or 0)
        assert answer.status_code in (303, 422), (answer.status_code, answer.text[-600:])
        assert after - before == (len(records) if answer.status_code == 303 else 0)

    run()
