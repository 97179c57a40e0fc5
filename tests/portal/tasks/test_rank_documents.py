"""Rank an answer among documents (``--task rank-documents``): the shared JSONL question format, the keyboard
ordering form (up/down buttons, number boxes), the randomised order shown (recorded), and the export read by
``stableval nrp agree``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from portal_helpers import ADMIN, csrf_of, invite_tokens, start_rater
from scipy.stats import kendalltau, spearmanr
from task_helpers import claim_task, rank_fields, submit_confirm, task_rater, write_rank
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.errors import InputError
from stableval.portal.admin.export import export_task
from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.tasks.rank_documents import shown_order
from stableval.portal.web.app import create_app

runner = CliRunner()


def _shown(html: str, fields: dict[str, str]) -> list[str]:
    """Item ids in the order the page shows them (from the number boxes' names; ``fields``: item id -> name,
    :func:`task_helpers.rank_fields`)."""
    item_of = {name: item for item, name in fields.items()}
    return [item_of[name] for name in re.findall(r'name="(rank-[^"]+)" value="\d+"', html)]


def _numbers(html: str, order: list[str], fields: dict[str, str]) -> dict[str, str]:
    """The form with number boxes that put the items in ``order``."""
    return {"csrf": csrf_of(html), "flag_reason": "", **{fields[item]: str(order.index(item) + 1)
                                                         for item in _shown(html, fields)}}


@pytest.mark.parametrize(("change", "problem", "column"), [
    (lambda r: r.update(items=r["items"][:1]), "items must be a list of 2 to 20 objects", "items"),
    (lambda r: r["items"][1].update(id="ans"), "items[2]: id empty, too long or repeated", "items"),
    (lambda r: r["items"][2].update(kind="abstract"), "items[3] (d1): unknown kind", "items"),
    (lambda r: r["items"][2].update(grade="high"), "items[3] (d1): grade is not a number", "items"),
    (lambda r: r.pop("prompt"), "missing column(s): prompt", None),
    (lambda r: r.update(extra=1), "unknown field(s)", None),
])
def test_rank_import_errors_name_the_row(tmp_path: Path, change: Any, problem: str, column: str | None) -> None:
    from stableval.portal.store.db import Database

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    create_track(db, "r", task="rank-documents")
    path = write_rank(tmp_path / "r.jsonl", n=3)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows[1])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as caught:
        import_questions(db, "r", path)
    assert caught.value.row == 2 and problem in caught.value.problem and caught.value.column == column
    db.dispose()


def test_rank_flow_buttons_numbers_and_recorded_order(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    client = task_rater(app, db, tmp_path, "rank-documents", n=1)
    assignment, first = claim_task(client)
    assert str(first.url).endswith("/task/rank")
    fields = rank_fields(db, assignment)
    shown = _shown(first.text, fields)
    from sqlalchemy import select

    from stableval.portal.store.models import Assignment

    with db.reading() as session:
        claimed = session.get(Assignment, assignment)
        assert claimed is not None
        assert shown == shown_order(claimed.rater_id, claimed.question_id, ["ans", "d0", "d1", "d2"])
    assert sorted(shown) == ["ans", "d0", "d1", "d2"]
    assert client.get(f"/a/{assignment}/task/rank").text.count('class="rank-item"') == 4  # same order on reload
    # the last item moves up by one with its button; its button keeps the focus on the next page
    last = shown[-1]
    key = fields[last].removeprefix("rank-")  # what the page calls the item
    moved = client.post(f"/a/{assignment}/task/rank", data={**_numbers(first.text, shown, fields),
                                                            "action": f"up:{key}"})
    expected = [*shown[:2], last, shown[2]]
    assert _shown(moved.text, fields) == expected
    assert re.search(rf'value="up:{key}"[^>]*autofocus', moved.text)
    # the number boxes: a repeated number is refused with the error summary, nothing moves
    bad = {**_numbers(moved.text, expected, fields), fields[expected[0]]: "2", "action": "next"}
    refused = client.post(f"/a/{assignment}/task/rank", data=bad)
    assert refused.status_code == 422 and "must be 1 to 4, each used once" in refused.text
    assert 'href="#rank-0"' in refused.text and _shown(refused.text, fields) == expected
    best = ["d2", "ans", "d0", "d1"]
    confirm = client.post(f"/a/{assignment}/task/rank", data={**_numbers(refused.text, best, fields),
                                                              "action": "next"})
    assert confirm.status_code == 200 and "Check and submit" in confirm.text
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    assert submit_confirm(client, assignment, confirm.text).status_code == 200  # a second submit stores nothing
    frame = export_task(db, "t").frame
    assert frame["item"].tolist() == best and frame["rank"].tolist() == [1, 2, 3, 4]
    assert frame["position_shown"].tolist() == [shown.index(i) + 1 for i in best]
    assert frame["kind"].tolist() == ["document", "answer", "document", "document"]
    with db.reading() as session:
        from stableval.portal.store.models import Submission

        assert len(session.scalars(select(Submission)).all()) == 1


def test_rank_export_feeds_nrp_agree(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    db = app.state.portal.db
    create_track(db, "t", task="rank-documents")
    import_questions(db, "t", write_rank(tmp_path / "r.jsonl", n=2, global_ids=True))
    from fastapi.testclient import TestClient

    expert = {"nrp0": ["d0", "ans", "d1", "d2"], "nrp1": ["ans", "d2", "d0", "d1"]}
    clients = []
    for token in invite_tokens(db, 2):
        client = TestClient(app)
        start_rater(client, token)
        clients.append(client)
    for number, client in enumerate(clients):
        for _ in range(2):
            assignment, page = claim_task(client)
            qid = re.search(r"item <bdi>(nrp\d)</bdi>\)", page.text)
            assert assignment and qid
            order = [f"{qid[1]}-{item}" for item in expert[qid[1]]]
            order = order if number == 0 else list(reversed(order))
            confirm = client.post(f"/a/{assignment}/task/rank", data={**_numbers(page.text, order, rank_fields(
                db, assignment)), "action": "next"})
            assert confirm.status_code == 200, re.findall(r'field-error[^<]*<span[^<]*</span>([^<]*)', confirm.text)
            assert submit_confirm(client, assignment, confirm.text).status_code == 200
    both = runner.invoke(cli_app, ["portal", "export", "t", "-o", str(tmp_path / "all.csv"), "--database-url", url])
    assert both.exit_code == 0 and "one rater per file: export with --rater rater-N" in both.output
    out = tmp_path / "ranks.csv"
    exported = runner.invoke(cli_app, ["portal", "export", "t", "--rater", "rater-1", "-o", str(out),
                                       "--database-url", url])
    assert exported.exit_code == 0, exported.output
    assert f"analyse with: stableval nrp agree {out} RANKINGS" in exported.output
    # a system ranking: BM25-like scores per document (higher = better)
    system = {"nrp0": {"ans": 4.0, "d0": 3.0, "d1": 2.0, "d2": 1.0},
              "nrp1": {"ans": 1.0, "d0": 4.0, "d1": 3.0, "d2": 2.0}}
    pd.DataFrame([{"qid": q, "docno": f"{q}-{d}", "score": s} for q, scores in system.items()
                  for d, s in scores.items()]
                 ).to_csv(tmp_path / "system.csv", index=False)
    agreed = runner.invoke(cli_app, ["nrp", "agree", str(out), str(tmp_path / "system.csv"), "--per-question",
                                     str(tmp_path / "per_question.csv"), "--format", "json"])
    assert agreed.exit_code == 0, agreed.output
    per_question = pd.read_csv(tmp_path / "per_question.csv").set_index("qid")
    for question, ranking in expert.items():  # scipy as the oracle: expert ranks vs system scores
        expert_rank = [ranking.index(d) + 1 for d in sorted(system[question])]
        system_score = [system[question][d] for d in sorted(system[question])]
        tau = kendalltau(expert_rank, [-s for s in system_score]).statistic
        rho = spearmanr(expert_rank, [-s for s in system_score]).statistic
        assert per_question.loc[question, "tau_b"] == pytest.approx(tau)
        assert per_question.loc[question, "spearman"] == pytest.approx(rho)
    # by hand: nrp0 differs from the system by one swapped pair of six, tau = (5 - 1) / 6
    assert per_question.loc["nrp0", "tau_b"] == pytest.approx(4 / 6)
    app.state.portal.db.dispose()


def test_admin_upload_reads_the_tracks_task_type(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(f"sqlite:///{tmp_path / 'portal.db'}", admin_token=ADMIN)
    db = app.state.portal.db
    create_track(db, "t", task="rank-documents")
    admin = TestClient(app, headers={"Authorization": f"Bearer {ADMIN}"})
    good = write_rank(tmp_path / "good.jsonl", n=2)
    answer = admin.post("/admin/tracks/t/import", files={"file": ("nrp-questions.jsonl", good.read_bytes())})
    assert answer.status_code == 200 and "Imported 2 questions" in answer.text
    bad = good.read_text().replace('"kind": "document"', '"kind": "abstract"', 1).replace('"id": "nrp0"', '"id": "x"')
    refused = admin.post("/admin/tracks/t/import", files={"file": ("mine.jsonl", bad.encode())})
    assert refused.status_code == 422 and "mine.jsonl, row 1" in refused.text and "unknown kind" in refused.text
    assert str(tmp_path) not in refused.text  # the uploaded name, never the server's copy
    app.state.portal.db.dispose()


def test_the_page_never_names_an_item(portal: tuple[Any, Any], tmp_path: Path) -> None:
    """Regression (issue 26, security review 3, F15): the rank form named its fields and buttons by item id
    (``name="rank-q7-ans"``), so with ids like the docs' example the generated answer was identifiable in the page
    source although the page does not mark it. Now they are named by the item's place in the order first shown
    (random per rater), and the server maps them back."""
    app, db = portal
    client = task_rater(app, db, tmp_path, "rank-documents", n=1)
    assignment, first = claim_task(client)
    assert not re.search(r"\b(ans|d0|d1|d2)\b", re.sub(r"<[^>]*class=\"md[^\"]*\"[^>]*>.*?</div>", "",
                                                         first.text, flags=re.S))
    fields = rank_fields(db, assignment)
    moved = client.post(f"/a/{assignment}/task/rank", data={"csrf": csrf_of(first.text), "flag_reason": "",
                                                            "action": f"up:{fields['ans'][5:]}"})
    assert moved.status_code == 200 and not re.search(r'(name|value)="[^"]*\b(ans|d\d)\b', moved.text)
    order = ["d2", "ans", "d0", "d1"]
    confirm = client.post(f"/a/{assignment}/task/rank", data={"csrf": csrf_of(moved.text), "flag_reason": "",
                                                              "action": "next", **{fields[item]: str(place)
                                                              for place, item in enumerate(order, start=1)}})
    assert "Check and submit" in confirm.text
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    assert export_task(db, "t").frame["item"].tolist() == order
