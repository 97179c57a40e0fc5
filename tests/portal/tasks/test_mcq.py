"""Multiple choice, blind then seen (``--task mcq``, the Relabeled MedQA protocol): import checks, the two steps
(the key hidden until the blind answer is final), validation, and the export read by ``stableval medqa``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from portal_helpers import ADMIN, csrf_of, invite_tokens, start_rater
from task_helpers import claim_task, seed_task_track, submit_confirm, task_rater, write_mcq
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.datasets.medqa import REQUIRED, load_medqa
from stableval.errors import InputError
from stableval.portal.admin.export import export_task
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.tasks.mcq import medqa_row
from stableval.portal.web.app import create_app

runner = CliRunner()


def _blind(html: str, *letters: str, missing: str = "no", none: bool = False) -> dict[str, Any]:
    form: dict[str, Any] = {"csrf": csrf_of(html), "action": "next", "blind": list(letters), "missing": missing,
                            "flag_reason": ""}
    if none:
        form["blind_none"] = "on"
    return form


def _seen(html: str, verdict: str, *letters: str, reason: str = "") -> dict[str, Any]:
    return {"csrf": csrf_of(html), "action": "next", "verdict": verdict, "seen": list(letters), "reason": reason}


@pytest.mark.parametrize(("record", "problem", "column"), [
    ({"options": {"A": "x", "C": "y"}}, "options must be A, B[, C, D] in order", "options"),
    ({"options": {"A": "x", "B": " "}}, "option B is empty", "options"),
    ({"answer_idx": "E"}, "the key is not one of the options", "answer_idx"),
    ({"options": "not json"}, "options is not a JSON object", "options"),
])
def test_mcq_import_errors_name_row_and_column(tmp_path: Path, record: dict[str, Any], problem: str, column: str
                                               ) -> None:
    from stableval.portal.store.db import Database

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "m", task="mcq")
    path = write_mcq(tmp_path / "m.jsonl", n=3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[2].update(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as caught:
        import_questions(db, "m", path)
    assert (caught.value.row, caught.value.column) == (3, column) and problem in caught.value.problem
    # the same questions as CSV with one column per option
    (tmp_path / "m.csv").write_text("id,prompt,A,B,C,D,answer_idx\n1,Q?,a,b,c,d,B\n2,Q?,a,b,,,A\n")
    assert import_questions(db, "m", tmp_path / "m.csv") == 2
    db.dispose()


def test_mcq_blind_then_seen_flow(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    client = task_rater(app, db, tmp_path, "mcq", n=1)
    assignment, first = claim_task(client)
    assert str(first.url).endswith("/task/blind") and "Step 1 of 2" in first.text
    assert "(key)" not in first.text and "The key is <strong>" not in first.text  # not before the blind answer
    # the seen step is not reachable before the blind answer
    assert str(client.get(f"/a/{assignment}/task/seen").url).endswith("/task/blind")
    missing = client.post(f"/a/{assignment}/task/blind", data={**_blind(first.text, "B"), "missing": ""})
    assert missing.status_code == 422 and "Say whether information is missing" in missing.text
    assert 'id="blind-B" checked' in missing.text  # what was ticked is kept
    both = client.post(f"/a/{assignment}/task/blind", data=_blind(first.text, "B", none=True))
    assert both.status_code == 422 and "untick one" in both.text and 'href="#blind-A"' in both.text
    seen = client.post(f"/a/{assignment}/task/blind", data=_blind(first.text, "B", "C", missing="minor"))
    assert str(seen.url).endswith("/task/seen") and "The key is <strong>A</strong>" in seen.text
    # the blind answer is final once the key was shown: a late change is ignored
    late = client.post(f"/a/{assignment}/task/blind", data=_blind(seen.text, "A"))
    assert str(late.url).endswith("/task/seen") and "You answered B, C." in late.text
    for form, message in ((_seen(seen.text, "another", "A", reason="r"), "Tick the one option that is correct"),
                          (_seen(seen.text, "several", "B", reason="r"), "at least two"),
                          (_seen(seen.text, "correct", "B"), "Untick the options"),
                          (_seen(seen.text, "another", "B"), "Give a reason")):
        refused = client.post(f"/a/{assignment}/task/seen", data=form)
        assert refused.status_code == 422 and message in refused.text, message
    confirm = client.post(f"/a/{assignment}/task/seen", data=_seen(seen.text, "several", "B", "C",
                                                                   reason="B and C both work"))
    assert "Check and submit" in confirm.text and "Several options are correct: B, C" in confirm.text
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    frame = export_task(db, "t").frame
    row = frame.iloc[0].to_dict()
    assert row["qid"] == "1" and row["answer_idx"] == "A" and row["blind_answers"] == "['B', 'C']"
    assert (row["seen_change"], row["seen_answers"], row["info_missing"], row["important_info_missing"]) == \
        ("FALSE", "", "TRUE", "FALSE")
    assert row["verdict"] == "several" and row["reason"] == "B and C both work"
    assert row["options_shown"] == "A,B,C,D"


@pytest.mark.parametrize(("answer", "final", "flags"), [
    ({"blind": ["B"], "verdict": "correct", "seen": []}, ["A"], [0, 0, 0]),      # convinced by the key
    ({"blind": ["A"], "verdict": "correct", "seen": []}, ["A"], [0, 0, 0]),      # right blind
    ({"blind": ["A"], "verdict": "another", "seen": ["C"]}, ["C"], [0, 1, 0]),   # a label error
    ({"blind": ["C"], "verdict": "another", "seen": ["C"]}, ["C"], [0, 1, 0]),
    ({"blind": ["A"], "verdict": "several", "seen": ["A", "D"]}, ["A", "D"], [0, 0, 1]),
    ({"blind": [], "verdict": "missing", "seen": []}, [], [1, 1, 0]),            # no blind answer: rejects the key
    ({"blind": ["A"], "verdict": "missing", "seen": []}, ["A"], [1, 0, 0]),
])
def test_medqa_columns_give_the_loaders_flags(tmp_path: Path, answer: dict[str, Any], final: list[str],
                                              flags: list[int]) -> None:
    """Each verdict, written as medqa_relabelling.csv columns, reads back (stableval.datasets.medqa) as the
    final answers and flags the protocol defines."""
    row = medqa_row({"key": "A", "missing": "no", "reason": "", "options_shown": ["A", "B", "C", "D"], **answer})
    import pandas as pd

    path = tmp_path / "one.csv"
    pd.DataFrame([{"qid": "1", "worker_id": "r", "answer_idx": "A", **row}]).to_csv(path, index=False)
    loaded = load_medqa(path)
    assert [letter for letter, on in zip("ABCD", loaded.final_answers[0], strict=True) if on] == final
    assert loaded.flags[0].astype(int).tolist() == flags


def test_mcq_export_feeds_stableval_medqa(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    db = app.state.portal.db
    seed_task_track(db, tmp_path, "mcq", n=3)  # keys: question 1 A, 2 B, 3 C
    # every rater: 1 correct; 2 a label error (C, not B); 3 several correct (C and D); rater 3 also says
    # important information is missing from question 3
    plan = {"1": (["A"], "correct", [], "no"), "2": (["C"], "another", ["C"], "no"),
            "3": (["C", "D"], "several", ["C", "D"], "no")}
    from fastapi.testclient import TestClient

    for r, token in enumerate(invite_tokens(db, 3)):
        client = TestClient(app)
        start_rater(client, token)
        for _ in range(3):
            assignment, page = claim_task(client)
            qid = re.search(r"item <bdi>(\d)</bdi>\)", page.text)
            assert assignment and qid
            blind, verdict, seen, missing = plan[qid[1]]
            missing = "important" if (r == 2 and qid[1] == "3") else missing
            step = client.post(f"/a/{assignment}/task/blind", data=_blind(page.text, *blind, missing=missing))
            confirm = client.post(f"/a/{assignment}/task/seen", data=_seen(step.text, verdict, *seen, reason="why"))
            assert submit_confirm(client, assignment, confirm.text).status_code == 200
    out = tmp_path / "medqa.csv"
    exported = runner.invoke(cli_app, ["portal", "export", "t", "-o", str(out), "--database-url", url])
    assert exported.exit_code == 0 and f"analyse with: stableval medqa {out}" in exported.output
    import pandas as pd

    assert set(REQUIRED) <= set(pd.read_csv(out).columns)
    loaded = load_medqa(out)
    assert loaded.flag_counts()[["missing_info", "label_error", "multiple_answers"]].values.tolist() == \
        [[0, 0, 0], [0, 3, 0], [1, 0, 3]]
    result = runner.invoke(cli_app, ["medqa", str(out), "--draws", "200", "--format", "json"])
    assert result.exit_code == 0, result.output
    exclusions = {row["filter"]: row for row in json.loads(result.stdout[result.stdout.index("{"):])["exclusions"]}
    # unanimous vote of 3 raters drawn with replacement: question 2 is a label error and question 3 has multiple
    # answers in every draw; question 3 is missing information only when all three draws are rater 3 (1/27)
    assert exclusions["label_error"]["share"] == pytest.approx(1 / 3)
    assert exclusions["multiple_answers"]["share"] == pytest.approx(1 / 3)
    assert 0 < exclusions["missing_info"]["share"] < 0.1
    assert np.isclose(exclusions["missing_info"]["share"] * 3 * 200 % 1, 0)  # whole questions per draw
    app.state.portal.db.dispose()


KEY_SHOWN = ("The key is <strong>", "(key)")


def _shows_key(response: Any) -> bool:
    return any(mark in response.text for mark in KEY_SHOWN)


def _gold_mcq(db: Any, tmp_path: Path) -> None:
    """Track 't': a gold mcq question whose key and gold answer are C (the first claim), and a regular one."""
    create_track(db, "t", task="mcq", qualification=1, qc_min_gold=1)
    options = {"A": "a", "B": "b", "C": "c"}
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({"id": "m1", "prompt": "Which?", "options": options, "answer_idx": "C", "gold": "C"})
                    + "\n" + json.dumps({"id": "m2", "prompt": "And?", "options": options, "answer_idx": "A"}) + "\n")
    import_questions(db, "t", path)


def test_the_key_never_comes_before_the_blind_answer(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F1, high): a flagged blind step led to the confirm page, whose
    "Go back and change" opened step 2 with the key; step 2 posted first showed the key in its 422 page; and a
    flagged (then unflagged) blind post changed the blind answer after the key was shown, which the gold check then
    counted as a blind answer. Now no page shows the key before the blind answer is final (locked by step 1's
    Next), whatever the flag, and the locked blind answer never changes."""
    from fastapi.testclient import TestClient

    from stableval.portal.work.flow import open_assignment
    from stableval.portal.work.quality import track_quality

    app, db = portal
    _gold_mcq(db, tmp_path)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    assignment, first = claim_task(client)
    assert assignment and not _shows_key(first)
    csrf = csrf_of(first.text)
    # path 1: flag on step 1, Next -> the confirm page; its "Go back and change" must lead to step 1
    flagged = client.post(f"/a/{assignment}/task/blind", data={**_blind(first.text, "B"), "flag": "on",
                                                               "flag_reason": "unclear"})
    assert str(flagged.url).endswith("/task/confirm") and not _shows_key(flagged)
    back = re.search(r'href="([^"]+)">Go back and change', flagged.text)
    assert back and back.group(1).endswith("/task/blind")
    for response in (client.get(back.group(1)), client.get(f"/a/{assignment}/task/seen")):
        assert not _shows_key(response) and str(response.url).endswith("/task/blind")
    # path 2: step 2 posted before step 1 is final: no 422 page with the key, no redirect loop
    early = client.post(f"/a/{assignment}/task/seen", data={"csrf": csrf, "action": "next"})
    assert not _shows_key(early) and str(early.url).endswith("/task/blind")
    assert client.get(f"/a/{assignment}/task/blind").status_code == 200
    # the honest path: unflag, answer B blind, Next: now the key is shown
    seen = client.post(f"/a/{assignment}/task/blind", data=_blind(first.text, "B"))
    assert str(seen.url).endswith("/task/seen") and _shows_key(seen)
    # path 3: after the key, a flagged step-1 post (and an unflagged one) cannot change the blind answer
    for form in ({**_blind(first.text, "C"), "flag": "on", "flag_reason": "x"}, _blind(first.text, "C")):
        client.post(f"/a/{assignment}/task/blind", data=form)
        assert open_assignment(db, assignment, 1).draft["task"]["blind"] == ["B"]  # type: ignore[union-attr]
    client.post(f"/a/{assignment}/task/draft", data={**_blind(first.text, "C"), "step": "blind", "rev": "99"})
    assert open_assignment(db, assignment, 1).draft["task"]["blind"] == ["B"]  # type: ignore[union-attr]
    confirm = client.post(f"/a/{assignment}/task/seen", data=_seen(seen.text, "correct"))
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    ((_, quality),) = track_quality(db, "t")
    assert (quality.judgments, quality.correct) == (1, 0)  # B, given blind: wrong; never the key's C


def test_step_two_first_leaves_no_redirect_loop(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F9): step 2 posted before step 1 marked it opened, and from then on
    step 1 redirected to step 2 and step 2 back to step 1 ("too many redirects"). Now step 1 stays reachable."""
    app, db = portal
    client = task_rater(app, db, tmp_path, "mcq", n=1)
    assignment, first = claim_task(client)
    client.post(f"/a/{assignment}/task/seen", data={"csrf": csrf_of(first.text), "action": "next"})
    blind = client.get(f"/a/{assignment}/task/blind", follow_redirects=False)
    assert blind.status_code == 200 and "Step 1 of 2" in blind.text
    assert client.get(f"/a/{assignment}/task/seen", follow_redirects=False).headers["location"].endswith("/blind")


def test_opening_step_two_by_a_link_does_not_finalise_the_blind_answer(portal: tuple[Any, Any], tmp_path: Path
                                                                       ) -> None:
    """Regression (issue 26, security review 3, F10): the first GET of step 2 made a saved blind draft final (a
    state change on GET, reachable by any link). Now only step 1's Next does: the later step-1 post counts."""
    app, db = portal
    client = task_rater(app, db, tmp_path, "mcq", n=1)
    assignment, first = claim_task(client)
    client.post(f"/a/{assignment}/task/blind", data={**_blind(first.text, "B"), "action": "save"})
    opened = client.get(f"/a/{assignment}/task/seen")
    assert str(opened.url).endswith("/task/blind") and not _shows_key(opened)
    seen = client.post(f"/a/{assignment}/task/blind", data=_blind(first.text, "C"))
    assert str(seen.url).endswith("/task/seen") and "You answered C." in seen.text
