"""Assignment: k per item, never twice, subspecialty → specialty → general routing, leases, flag retirement,
and many threads claiming and submitting at once (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
from portal_helpers import CRITERIA, PATIENCE, questions_frame, seed_track
from sqlalchemy import func, select

from stableval.portal.admin.manage import create_invites, set_retired
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, Submission, utcnow
from stableval.portal.work.assignment import Claim, claim_next, progress_for
from stableval.portal.work.flow import empty_draft, save_draft, submit


def _raters(db: Database, n: int, specialty: str = "", subspecialty: str = "") -> list[int]:
    ids = [invite.rater_id for invite in create_invites(db, [f"r{i}" for i in range(n)])]
    with db.writing() as session:
        for rater in session.scalars(select(Rater).where(Rater.id.in_(ids))):
            rater.specialty, rater.subspecialty, rater.profile_at = specialty, subspecialty, utcnow()
    return ids


def _answer(db: Database, assignment_id: int, *, flag: bool = False) -> str:
    draft = empty_draft()
    draft["pairwise"] = dict.fromkeys(CRITERIA, "a")
    draft["ratings_a"] = dict.fromkeys(CRITERIA, "5")
    draft["ratings_b"] = dict.fromkeys(CRITERIA, "3")
    draft["flag"], draft["flag_reason"] = flag, "nonsense" if flag else ""
    with db.writing() as session:
        save_draft(session, assignment_id, draft)
        token = session.get(Assignment, assignment_id).form_token
    return token


def _do(db: Database, rater: int, slug: str = "main", *, flag: bool = False, now: datetime | None = None
        ) -> str | None:
    claim = claim_next(db, rater, slug, now=now)
    if claim.assignment_id is None:
        return None
    with db.reading() as session:
        item = session.get(Question, session.get(Assignment, claim.assignment_id).question_id).external_id
    result = submit(db, rater, claim.assignment_id, _answer(db, claim.assignment_id, flag=flag), now=now)
    assert result.status == "created", result
    return item


def test_k_per_item_and_never_twice(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(3), k=2)
    raters = _raters(db, 3)
    done: dict[int, list[str]] = {r: [] for r in raters}
    for _round in range(4):
        for rater in raters:
            item = _do(db, rater)
            if item is not None:
                done[rater].append(item)
    assert sum(len(v) for v in done.values()) == 3 * 2  # every item got exactly k=2
    assert all(len(set(v)) == len(v) for v in done.values())  # nobody saw an item twice
    with db.reading() as session:
        per_item = session.execute(select(Submission.question_id, func.count()).group_by(Submission.question_id)
                                   ).all()
        progress = progress_for(session, session.get(Rater, raters[0]))
    assert sorted(n for _, n in per_item) == [2, 2, 2]
    assert progress[0].remaining == 0
    db.dispose()


def test_routing_subspecialty_then_specialty_then_general(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    frame = pd.concat([questions_frame(1, prefix="gen"), questions_frame(1, specialty="Cardiology", prefix="spec"),
                       questions_frame(1, specialty="cardiology", subspecialty="Heart Failure", prefix="sub"),
                       questions_frame(1, specialty="neurology", prefix="neuro")], ignore_index=True)
    seed_track(db, tmp_path, frame=frame)
    cardio = _raters(db, 1, "cardiology", "heart failure")[0]
    order = [_do(db, cardio) for _ in range(4)]
    assert order == ["sub0", "spec0", "gen0", None]  # never the neurology question
    nobody = _raters(db, 1, "dermatology")[0]
    assert [_do(db, nobody) for _ in range(2)] == ["gen0", None]
    db.dispose()


def test_leases_expire_and_only_confirmed_count(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=1, lease_hours=1)
    first, second = _raters(db, 2)
    start = utcnow()
    held = claim_next(db, first, "main", now=start)
    assert held.assignment_id is not None
    assert claim_next(db, second, "main", now=start + timedelta(minutes=30)).assignment_id is None  # reserved
    assert claim_next(db, first, "main", now=start + timedelta(minutes=30)) == held  # own lease comes back
    taken = claim_next(db, second, "main", now=start + timedelta(hours=2))  # abandoned: back in the pool
    assert taken.assignment_id is not None and taken != held
    late = submit(db, second, taken.assignment_id, _answer(db, taken.assignment_id), now=start + timedelta(hours=2))
    assert late.status == "created"
    too_late = submit(db, first, held.assignment_id, _answer(db, held.assignment_id),
                      now=start + timedelta(hours=3))
    assert too_late.status == "full"  # k already reached: the item never exceeds k
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Submission)) == 1
    db.dispose()


def test_flags_retire_items_and_admin_can_restore(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    seed_track(db, tmp_path, frame=questions_frame(1), k=3, flag_limit=2)
    raters = _raters(db, 4)
    assert _do(db, raters[0], flag=True) == "q0"
    assert _do(db, raters[1], flag=True) == "q0"
    assert _do(db, raters[2]) is None  # flagged by 2 raters: out of the pool
    with db.reading() as session:
        question_id = session.scalars(select(Question.id)).one()
    set_retired(db, question_id, True)
    assert _do(db, raters[3]) is None  # retired
    set_retired(db, question_id, False)
    assert _do(db, raters[3]) is None  # still flagged out
    db.dispose()


def test_many_threads_claim_and_submit_at_once(db_url: str, tmp_path: Path) -> None:
    db = Database(db_url)
    db.upgrade()
    n_items, k, n_raters = 8, 3, 12
    seed_track(db, tmp_path, frame=questions_frame(n_items), k=k)
    raters = _raters(db, n_raters)
    acknowledged: list[tuple[int, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(n_raters)

    def work(rater: int) -> None:
        try:
            barrier.wait()
            while True:
                item = _do(db, rater)
                if item is None:
                    return
                with lock:
                    acknowledged.append((rater, item))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(r,)) for r in raters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=PATIENCE)
    assert not errors, errors
    with db.reading() as session:
        rows = session.execute(select(Submission.rater_id, Question.external_id).join(Question)).all()
    stored = sorted((r, i) for r, i in rows)
    assert stored == sorted(acknowledged)  # nothing lost, nothing duplicated
    per_item = pd.Series([i for _, i in stored]).value_counts()
    assert len(per_item) == n_items and (per_item == k).all()  # no item exceeds k, all filled
    assert len(set(stored)) == len(stored)
    db.dispose()


def test_progress_counts_do_not_tell_gold_questions_apart(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F2): "remaining" went up by one while a gold question was held and
    did not go down after it was submitted, so a rater could tell the attention checks apart. Now every claim
    leaves the counts as they were and every submission lowers "remaining" and raises "done" by one, gold or
    not."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    frame = questions_frame(12)
    frame["gold"] = ["a", "b"] + [""] * 10
    seed_track(db, tmp_path, frame=frame, gold_rate=0.5)
    (rater,) = _raters(db, 1)

    def counts() -> tuple[int, int]:
        with db.reading() as session:
            (line,) = progress_for(session, session.get(Rater, rater))
        return line.remaining, line.submitted

    kinds = []
    for _ in range(6):
        before = counts()
        claim = claim_next(db, rater, "main")
        assert claim.assignment_id is not None
        during = counts()
        assert submit(db, rater, claim.assignment_id, _answer(db, claim.assignment_id)).status == "created"
        with db.reading() as session:
            kinds.append(bool(session.scalar(select(Question.gold).join(Assignment).where(
                Assignment.id == claim.assignment_id))))
        assert during == before and counts() == (before[0] - 1, before[1] + 1), (kinds, before, during, counts())
    assert any(kinds) and not all(kinds)  # both kinds were claimed
    db.dispose()


def test_a_subspecialty_matches_only_within_the_specialty(tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F8): a question tagged with a subspecialty went first to any rater
    of that (free-text) subspecialty, whatever their specialty: a cardiologist who typed "Breast cancer" got the
    oncology question first, on a track that never offers another specialty's questions. Now a subspecialty
    matches only within the question's specialty (or an untagged one)."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    frame = pd.concat([questions_frame(1, specialty="oncology", subspecialty="breast cancer", prefix="onc"),
                       questions_frame(1, specialty="cardiology", prefix="card"),
                       questions_frame(1, subspecialty="breast cancer", prefix="any")], ignore_index=True)
    seed_track(db, tmp_path, frame=frame, k=2, specialties="cardiology,oncology", fallback="specialty")
    (cardiologist,) = _raters(db, 1, specialty="cardiology", subspecialty="breast cancer")
    (oncologist,) = _raters(db, 1, specialty="oncology", subspecialty="breast cancer")

    def offered(rater: int) -> list[str]:
        items = []
        while (claim := claim_next(db, rater, "main")).assignment_id is not None:
            assert submit(db, rater, claim.assignment_id, _answer(db, claim.assignment_id)).status == "created"
            with db.reading() as session:
                items.append(session.scalar(select(Question.external_id).join(Assignment).where(
                    Assignment.id == claim.assignment_id)))
        return items

    assert offered(cardiologist) == ["any0", "card0"]  # the untagged specialty's subspecialty, then cardiology
    assert offered(oncologist) == ["any0", "onc0"]  # both match: the one closer to k first
    db.dispose()


def test_gold_questions_never_outlast_the_regular_ones(tmp_path: Path) -> None:
    """Regression (issue 26, F2, found by the portal fuzz test): once no regular question was left for a rater
    (their page said "0 remaining", no button), a crafted "Next question" still gave them a gold question, which
    it could then only be. Now a claim gives a gold question only while a regular one is left for the rater."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    frame = questions_frame(3)
    frame["gold"] = ["a", "b", ""]
    seed_track(db, tmp_path, frame=frame, k=1, gold_rate=1.0)
    first, second = _raters(db, 2)
    claim = claim_next(db, first, "main")  # gold (rate 1), while q2 is still there
    assert claim.assignment_id is not None
    assert submit(db, first, claim.assignment_id, _answer(db, claim.assignment_id)).status == "created"
    while (claim := claim_next(db, second, "main")).assignment_id is not None:  # the other rater takes q2 (k = 1)
        assert submit(db, second, claim.assignment_id, _answer(db, claim.assignment_id)).status == "created"
    with db.reading() as session:
        assert [line.remaining for line in progress_for(session, session.get(Rater, first))] == [0]
    assert claim_next(db, first, "main") == Claim(None, "none")  # a gold question is left, but not offered
    db.dispose()
