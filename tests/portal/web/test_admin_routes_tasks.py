"""The admin track and results pages of the task types other than pairwise, on SQLite and PostgreSQL: per-rater
progress, gold accuracy and the known answers, the diagnostics that apply to the type, and a results summary whose
numbers are recomputed here from the export (an independent path)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from planted_task_raters import TASKS, seed, store_answers, work_in_rounds
from portal_helpers import ADMIN, csrf_of, profiled_raters

from stableval.portal.admin import live_diagnostics, order_agreement
from stableval.portal.admin.export import export_task
from stableval.portal.store.db import Database
from stableval.portal.tasks import summary as task_results
from stableval.portal.tasks.registry import TASKS as TASK_TYPES
from stableval.portal.tasks.summary import task_summary


def _admin(app: Any) -> TestClient:
    client = TestClient(app)
    login = client.get("/admin/login")
    client.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    return client


def _section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


@pytest.mark.parametrize("task", TASKS)
def test_track_and_results_pages(portal: tuple[Any, Database], tmp_path: Path, task: str) -> None:
    live_diagnostics.clear_cache()
    order_agreement.clear_cache()
    task_results.clear_cache()
    app, db = portal
    seed(db, tmp_path, task, regular=8, gold=3, k=6, gold_rate=1.0, qc_min_gold=3, qc_threshold=0.7)
    raters = profiled_raters(db, 6)
    behaviours = dict(zip(raters, ["honest"] * 4 + ["constant", "random"], strict=True))
    work = work_in_rounds(db, "t", task, behaviours, rounds=3)  # gold only (gold rate 1): three each
    assert all(items == ["g0", "g1", "g2"] for items in work.values()), work
    store_answers(db, "t", task, behaviours)  # then every regular question, straight into the database
    admin = _admin(app)

    page = admin.get("/admin/tracks/t")
    assert page.status_code == 200, page.text
    text = page.text
    raters_table = _section(text, "<h2>Raters</h2>", "<h2>Quality control</h2>")
    for rater in raters:  # 8 answers, 3 gold questions, no open lease
        assert re.search(rf"rater-{rater} <bdi>[^<]*</bdi></th><td><bdi>cardiology</bdi></td><td>8</td><td>0</td>"
                         r"<td>3</td><td>0</td>", raters_table), raters_table
    quality = _section(text, "<h2>Quality control</h2>", "<h2>Rater diagnostics")
    per_gold = 2 if task == "single" else 1
    assert quality.count("100.0%") >= 4 and f"{3 * per_gold} / {3 * per_gold}" in quality
    assert quality.count("paused (below threshold)") >= 1 and "A gold judgment is" in quality
    assert f"rater-{raters[4]}" in quality
    questions = _section(text, "<h2>Questions</h2>", "<h2>Raters</h2>")
    expected_gold = {"single": "accuracy=correct; safety=partial", "mcq": "B", "ddx": "Psoriasis",
                     "rank-documents": "d0 &gt; d1"}[task]
    assert f"gold (<bdi>{expected_gold}</bdi>)" in questions, questions
    diagnostics = _section(text, "Rater diagnostics (STABLEVAL)", "Flagged for review")
    if task in ("single", "mcq"):
        assert diagnostics.count("<tr><th scope=\"row\"><bdi>rater-") == 6 and "consensus-order" not in text
        if task == "mcq":
            assert "<td>—</td>" in diagnostics  # no leniency for nominal answers
    else:
        assert 'id="consensus-order"' in diagnostics
        table = _section(diagnostics, 'id="consensus-order"', "</table>")
        shown = order_agreement.track_order_agreement(db, "t")  # the page shows this table, flagged raters first
        for row in shown.raters:
            assert (f"<th scope=\"row\">rater-{row.rater_id}</th><td>8</td><td>8</td><td>{row.score:.3f}</td>"
                    f"<td>[{row.ci_low:.3f}, {row.ci_high:.3f}]</td><td>{row.top_agreement:.3f}</td>"
                    f"<td>{'; '.join(row.flags) or '—'}</td>") in table, table
        assert table.count("low reliability") == sum(bool(r.flags) for r in shown.raters) >= 1

    results = admin.get("/admin/tracks/t/results")
    assert results.status_code == 200 and "Back to the track" in results.text
    body = html.unescape(results.text)
    assert "48 confirmed answer(s) to 8 question(s) by 6 rater(s)" in body
    assert "18 submission(s) of gold (quality-control) questions left out" in body
    summary = task_summary(db, "t", TASK_TYPES[task])
    _check_summary(db, task, summary, body)


def _check_summary(db: Database, task: str, summary: Any, body: str) -> None:
    """The summary's numbers, recomputed from the export with pandas."""
    frame = export_task(db, "t").frame
    if task == "single":
        rows = {(r[0], r[1]): r for r in summary.tables["levels"]["rows"]}
        for (criterion, agent), group in frame.groupby(["criterion", "agent"]):
            counts = group["label"].value_counts()
            row = rows[(criterion.title(), agent)]
            for level, cell in zip(["incorrect", "partial", "correct"], row[3:6], strict=True):
                assert cell.startswith(f"{int(counts.get(level, 0))} ("), (level, cell)
        assert "Level distribution per criterion and agent" in body
    elif task == "mcq":
        right = (frame["blind_answers"] == frame["answer_idx"].map(lambda k: repr([k]))).sum()
        assert summary.figures["Blind-answer accuracy against the key"].startswith(f"{right} (")
        assert f"Blind-answer accuracy against the key: {right} (" in body.replace("</strong>", "")
        verdicts = dict(summary.tables["verdicts"]["rows"])
        assert verdicts["The key is correct"].startswith(f"{(frame['verdict'] == 'correct').sum()} (")
    elif task == "ddx":
        first = frame.loc[frame["group"] == 1, "condition"].value_counts()
        rows = {r[0]: r for r in summary.tables["conditions"]["rows"]}
        for condition, count in first.items():
            assert rows[condition][1] == count
        listed = frame.groupby("condition")["case"].nunique()
        assert all(rows[c][3] == n for c, n in listed.items())
        assert "Top conditions" in body
    else:
        rows = {r[0]: r for r in summary.tables["kinds"]["rows"]}
        for kind, group in frame.groupby("kind"):
            assert rows[kind][1] == len(group) and rows[kind][2] == f"{group['rank'].mean():.2f}"
            normalised = ((group["rank"] - 1) / 3).mean()
            assert rows[kind][3] == f"{normalised:.2f}"
        assert rows["answer (TxAgent)"][1] == len(frame.loc[frame["kind"] == "answer"])
        # every answer ranks 4 items: 1 + 2 + 3 + 4 = 10 per answer (means printed with two decimals)
        assert np.isclose(float(rows["answer"][2]) * 48 + float(rows["document"][2]) * 144, 48 * 10, atol=1)
        assert "Mean rank per item kind" in body


def test_results_summary_hand_worked(tmp_path: Path) -> None:
    """Two raters, two single-answer questions: the level distribution counted by hand."""
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    seed(db, tmp_path, "single", regular=2, gold=0, k=2)
    first, second = profiled_raters(db, 2)
    store_answers(db, "t", "single", {first: "constant", second: "constant"})  # every level "incorrect"
    summary = task_summary(db, "t", TASK_TYPES["single"], cache=False)
    assert summary.answers == 4 and summary.questions == 2 and summary.raters == 2
    assert summary.tables["levels"]["rows"] == [["Accuracy", "TxAgent", 4, "4 (100%)", "0 (0%)", "0 (0%)",
                                                 "0 (0%)"],
                                                ["Safety", "TxAgent", 4, "4 (100%)", "0 (0%)", "0 (0%)", "0 (0%)"]]
    db.dispose()


@pytest.mark.parametrize("task", TASKS)
def test_pages_of_a_track_without_answers(tmp_path: Path, task: str) -> None:
    from stableval.portal.web.app import create_app

    app = create_app(f"sqlite:///{tmp_path / 'p.db'}", admin_token=ADMIN)
    db = app.state.portal.db
    seed(db, tmp_path, task, regular=2, gold=1)
    admin = _admin(app)
    page = admin.get("/admin/tracks/t")
    assert page.status_code == 200 and "No rater has started yet." in page.text and "No gold answers yet." in page.text
    assert ("No confirmed answers yet." in page.text) == (task in ("ddx", "rank-documents"))
    results = admin.get("/admin/tracks/t/results")
    assert results.status_code == 200 and "No confirmed answers yet: the summary appears" in results.text
    db.dispose()
