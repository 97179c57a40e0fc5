"""Gold questions of the task types other than pairwise answered through the rater pages, on SQLite and
PostgreSQL: the pages never say "gold", each answer is judged per task type, and a rater who fails the
qualification set is paused (403 on the next claim)."""

from __future__ import annotations

from pathlib import Path

import pytest
from planted_task_raters import TASKS, gold_answers, seed, track_of
from task_helpers import CONDITIONS

from stableval.portal.store.db import Database
from stableval.portal.work.quality import rater_quality


def _gold_form(task: str, html: str, gold: object, right: bool, fields: dict[str, str]
               ) -> tuple[str, dict[str, object]]:
    """The first step's form of a gold question answered through the pages (right or wrong); ``fields``: a
    rank-documents page's number boxes by item id (:func:`task_helpers.rank_fields`)."""
    import re

    from portal_helpers import csrf_of

    base: dict[str, object] = {"csrf": csrf_of(html), "action": "next", "flag_reason": ""}
    if task == "single":
        levels = dict(gold) if right else dict.fromkeys(gold, "incorrect")  # type: ignore[call-overload]
        return "single", {**base, **{f"level-{k}": v for k, v in levels.items()}}
    if task == "mcq":
        return "blind", {**base, "blind": [gold if right else "A"], "missing": "no"}
    if task == "ddx":
        return "ddx", {**base, "condition-0": CONDITIONS[gold] if right else CONDITIONS[0]}  # type: ignore[index]
    item_of = {name: item for item, name in fields.items()}
    shown = [item_of[name] for name in re.findall(r'name="(rank-[^"]+)" value="\d+"', html)]
    best = gold[0] if right else "ans"  # type: ignore[index]
    order = [best] + [item for item in shown if item != best]
    return "rank", {**base, **{fields[item]: str(order.index(item) + 1) for item in shown}}


@pytest.mark.parametrize("task", TASKS)
def test_gold_questions_through_the_pages(portal: tuple[object, Database], tmp_path: Path, task: str) -> None:
    """A rater answers the qualification set through the rater pages: the pages never say "gold", the answers are
    judged per task type, and a rater who gets it wrong is paused (403 on the next claim)."""
    from fastapi.testclient import TestClient
    from portal_helpers import csrf_of, invite_tokens, start_rater
    from task_helpers import claim_task, rank_fields, submit_confirm

    app, db = portal
    seed(db, tmp_path, task, regular=2, gold=2, k=2, qualification=2, qc_min_gold=2, qc_threshold=0.7)
    golds = gold_answers(task, 2)
    stored = [CONDITIONS.index(g) for g in golds] if task == "ddx" else golds
    for right, token in zip((True, False), invite_tokens(db, 2), strict=True):
        client = TestClient(app)
        start_rater(client, token)
        for number in range(2):
            assignment, first = claim_task(client)
            assert assignment, first.text
            assert "gold" not in first.text.lower()
            step, form = _gold_form(task, first.text, stored[number], right, rank_fields(db, assignment))
            answer = client.post(f"/a/{assignment}/task/{step}", data=form)
            assert answer.status_code == 200, answer.text
            if task == "mcq":  # then the key: judged on the blind answer whatever the verdict
                answer = client.post(f"/a/{assignment}/task/seen", data={"csrf": csrf_of(answer.text),
                                                                         "action": "next", "verdict": "correct"})
            assert "gold" not in answer.text.lower() and "Check and submit" in answer.text, answer.text
            assert submit_confirm(client, assignment, answer.text).status_code == 200
        page = client.get("/progress")
        nxt = client.post("/tracks/t/next", data={"csrf": csrf_of(page.text)})
        if right:
            assert nxt.status_code == 200 and "/task/" in str(nxt.url)  # qualified: a regular question
        else:
            assert nxt.status_code == 403 and "paused for a quality review" in nxt.text
    with db.reading() as session:
        quality = rater_quality(session, track_of(db))
    per_gold = 2 if task == "single" else 1
    assert [(q.gold_answered, q.correct, q.judgments, q.paused) for _, q in sorted(quality.items())] == [
        (2, 2 * per_gold, 2 * per_gold, False), (2, 0, 2 * per_gold, True)]
