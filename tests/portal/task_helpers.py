"""Helpers of the task-type tests: question files per task type, a signed-in rater on a task track, claims."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from portal_helpers import csrf_of, form_token_of, invite_tokens, start_rater

from stableval.portal.admin.manage import create_track, import_questions
from stableval.portal.store.db import Database

TRANSCRIPT = json.dumps([
    {"role": "user", "content": "Dose of drug X?"},
    {"role": "assistant", "content": "Let me check.", "reasoning": "Look up the **label** first.",
     "tool_calls": [{"id": "c1", "name": "fda_label",
                     "arguments": {"drug": "X", "note": "<script>alert(1)</script>"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "fda_label",
     "content": {"dose": "5 mg <img src=x onerror=alert(2)>"}},
    {"role": "assistant", "content": "Take **5 mg** daily."},
])
CONDITIONS = ["Eczema", "Psoriasis", "Tinea corporis", "Contact dermatitis", "Lichen planus", "Urticaria"]


def write_single(path: Path, n: int = 3) -> Path:
    import pandas as pd

    pd.DataFrame({"id": [f"s{i}" for i in range(n)], "prompt": [f"Question {i}?" for i in range(n)],
                  "model": ["TxAgent" if i % 2 == 0 else "GPT-4o" for i in range(n)],
                  "answer": [TRANSCRIPT if i == 0 else f"Plain *answer* {i}" for i in range(n)]}
                 ).to_csv(path, index=False)
    return path


def write_mcq(path: Path, n: int = 3) -> Path:
    rows = [{"id": str(i + 1), "prompt": f"A patient presents with case {i}. Best next step?",
             "options": {"A": "Aspirin", "B": "Beta blocker", "C": "CT scan", "D": "Discharge"},
             "answer_idx": "ABC"[i % 3]} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_ddx(path: Path, n: int = 3) -> Path:
    import pandas as pd

    pd.DataFrame({"id": [f"case{i}" for i in range(n)],
                  "prompt": [f"Itchy rash on the arm, case {i}." for i in range(n)]}).to_csv(path, index=False)
    return path


def write_rank(path: Path, n: int = 2, k: int = 4, *, global_ids: bool = False) -> Path:
    """``n`` questions of ``k`` items: answer ``ans`` and documents ``d0``... (``global_ids``: prefixed with the
    question id, as docnos are unique across a collection)."""
    def pid(i: int, item: str) -> str:
        return f"nrp{i}-{item}" if global_ids else item

    rows = [{"id": f"nrp{i}", "prompt": f"Query {i}: treatment of X?",
             "items": [{"id": pid(i, "ans"), "text": "Generated **answer**", "kind": "answer", "model": "TxAgent"}] +
                      [{"id": pid(i, f"d{j}"), "text": f"Document {j} text", "kind": "document", "grade": 3 - j}
                       for j in range(k - 1)]} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def conditions_file(path: Path) -> Path:
    path.write_text("\n".join(CONDITIONS) + "\n")
    return path


def seed_task_track(db: Database, tmp_path: Path, task: str, slug: str = "t", n: int = 3, **options: Any) -> None:
    writers = {"single": (write_single, "q.csv"), "mcq": (write_mcq, "q.jsonl"), "ddx": (write_ddx, "q.csv"),
               "rank-documents": (write_rank, "q.jsonl")}
    writer, name = writers[task]
    if task == "ddx":
        options.setdefault("conditions", CONDITIONS)
    create_track(db, slug, title=slug.title(), task=task, **options)
    import_questions(db, slug, writer(tmp_path / f"{slug}-{name}", n))


def task_rater(app: Any, db: Database, tmp_path: Path, task: str, n: int = 3, **options: Any) -> TestClient:
    seed_task_track(db, tmp_path, task, n=n, **options)
    client = TestClient(app)
    start_rater(client, invite_tokens(db, 1)[0])
    return client


def claim_task(client: TestClient, slug: str = "t") -> tuple[int, Any]:
    """Press 'Next question'; (assignment id, the task's first page) or (0, page)."""
    page = client.get("/progress")
    answer = client.post(f"/tracks/{slug}/next", data={"csrf": csrf_of(page.text)})
    found = re.search(r"/a/(\d+)/task/", str(answer.url))
    return (int(found.group(1)), answer) if found else (0, answer)


def submit_confirm(client: TestClient, assignment: int, confirm_html: str) -> Any:
    digest = re.search(r'name="digest" value="([^"]+)"', confirm_html)
    assert digest
    return client.post(f"/a/{assignment}/submit", data={"csrf": csrf_of(confirm_html),
                                                         "form_token": form_token_of(confirm_html),
                                                         "digest": digest.group(1)})


def rank_fields(db: Database, assignment: int) -> dict[str, str]:
    """Item id -> the name of its number box on the rank page (``rank-t<k>``, k its place in the order first shown:
    the page names no item id); the draft of the first view has that order."""
    from stableval.portal.store.models import Draft

    with db.reading() as session:
        draft = session.get(Draft, assignment)
        shown = list((draft.data.get("task") or {}).get("shown") or []) if draft is not None else []
    return {item: f"rank-t{place}" for place, item in enumerate(shown)}
