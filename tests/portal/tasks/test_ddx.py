"""Differential-diagnosis ranking (``--task ddx``): the track's condition list, the form (suggestions from a
``<datalist>``, "equally likely" groups, up to N conditions), validation, and the export read by ``stableval ddx``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from portal_helpers import ADMIN, csrf_of, invite_tokens, start_rater
from task_helpers import CONDITIONS, claim_task, conditions_file, seed_task_track, submit_confirm, task_rater
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.datasets.ddx import DDxAnnotations, load_ddx
from stableval.errors import InputError
from stableval.portal.tasks.ddx import read_conditions

runner = CliRunner()


def _form(html: str, *slots: str | tuple[str, bool]) -> dict[str, str]:
    """The ddx form: one entry per row, ``(name, True)`` ticks "equally likely as the row above"."""
    form = {"csrf": csrf_of(html), "action": "next", "flag_reason": ""}
    for i, slot in enumerate(slots):
        name, tie = slot if isinstance(slot, tuple) else (slot, False)
        form[f"condition-{i}"] = name
        if tie:
            form[f"tie-{i}"] = "on"
    return form


def test_condition_lists_are_checked(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("Eczema\nPsoriasis\n eczema \n")
    with pytest.raises(InputError) as caught:
        read_conditions(tmp_path / "c.txt")
    assert caught.value.row == 3 and "repeats line 1" in caught.value.problem
    (tmp_path / "c.txt").write_text("Eczema\n\nPsoriasis\n")
    with pytest.raises(InputError, match="empty or too long") as caught:
        read_conditions(tmp_path / "c.txt")
    assert caught.value.row == 2
    assert read_conditions(conditions_file(tmp_path / "ok.txt")) == CONDITIONS
    url = f"sqlite:///{tmp_path / 'p.db'}"
    missing = runner.invoke(cli_app, ["portal", "track", "d", "--task", "ddx", "--database-url", url])
    assert missing.exit_code == 1 and "needs its condition list" in missing.output
    made = runner.invoke(cli_app, ["portal", "track", "d", "--task", "ddx", "--conditions", str(tmp_path / "ok.txt"),
                                   "--max-conditions", "3", "--database-url", url])
    assert made.exit_code == 0, made.output


def test_ddx_form_validation_groups_and_confirm(portal: tuple[Any, Any], tmp_path: Path) -> None:
    app, db = portal
    client = task_rater(app, db, tmp_path, "ddx", n=1, max_conditions=4)
    assignment, first = claim_task(client)
    assert str(first.url).endswith("/task/ddx")
    assert first.text.count('list="conditions"') == 4  # up to N = 4 rows
    assert re.findall(r'<option value="([^"]+)">', first.text) == CONDITIONS
    refused = client.post(f"/a/{assignment}/task/ddx", data=_form(first.text, "Eczema", "Measles",
                                                                  ("", True), "eczema"))
    assert refused.status_code == 422
    assert "Row 2: “Measles” is not in the study’s condition list" in refused.text
    assert "Row 3: “equally likely” is ticked but no condition is chosen." in refused.text
    assert "Row 4: Eczema is already listed above." in refused.text
    assert 'href="#condition-1"' in refused.text and 'aria-invalid="true"' in refused.text
    assert 'value="Measles"' in refused.text  # what was typed is kept
    nothing = client.post(f"/a/{assignment}/task/ddx", data=_form(first.text, "", ""))
    assert nothing.status_code == 422 and "Choose at least one condition" in nothing.text
    confirm = client.post(f"/a/{assignment}/task/ddx", data=_form(first.text, "psoriasis", ("Tinea corporis", True),
                                                                  "", "Eczema"))
    assert confirm.status_code == 200 and \
        "<li><bdi>Psoriasis</bdi> = <bdi>Tinea corporis</bdi></li><li><bdi>Eczema</bdi></li>" in confirm.text
    assert submit_confirm(client, assignment, confirm.text).status_code == 200
    from stableval.portal.admin.export import export_task

    result = export_task(db, "t")
    assert result.selectors == [[[[1, 2], [0]]]] and result.cases == ("case0",)
    assert result.frame[["group", "condition"]].values.tolist() == [[1, "Psoriasis"], [1, "Tinea corporis"],
                                                                    [2, "Eczema"]]


def test_ddx_export_feeds_stableval_ddx(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from stableval.portal.web.app import create_app

    url = f"sqlite:///{tmp_path / 'portal.db'}"
    app = create_app(url, admin_token=ADMIN)
    db = app.state.portal.db
    seed_task_track(db, tmp_path, "ddx", n=3)
    plan: dict[str, list[list[Any]]] = {"case0": [["Eczema", ("Psoriasis", False)]] * 3,
            "case1": [["Psoriasis", ("Tinea corporis", True)], ["Tinea corporis", "Psoriasis"], ["Tinea corporis"]],
            "case2": [["Urticaria"], ["Urticaria", "Eczema"], ["Lichen planus"]]}
    for r, token in enumerate(invite_tokens(db, 3)):
        client = TestClient(app)
        start_rater(client, token)
        for _ in range(3):
            assignment, page = claim_task(client)
            case = re.search(r"item <bdi>(case\d)</bdi>\)", page.text)
            assert assignment and case
            confirm = client.post(f"/a/{assignment}/task/ddx", data=_form(page.text, *plan[case[1]][r]))
            assert submit_confirm(client, assignment, confirm.text).status_code == 200
    out = tmp_path / "ddx.json"
    assert runner.invoke(cli_app, ["portal", "export", "t", "--database-url", url]).exit_code == 2  # needs -o .json
    exported = runner.invoke(cli_app, ["portal", "export", "t", "-o", str(out), "--database-url", url])
    assert exported.exit_code == 0, exported.output
    conditions = tmp_path / "ddx.conditions.txt"
    assert f"analyse with: stableval ddx {out} --conditions {conditions}" in exported.output
    assert (tmp_path / "ddx.cases.txt").read_text().split() == ["case0", "case1", "case2"]
    loaded = load_ddx(out, conditions=conditions)
    # the IRN aggregate by hand (a condition in the g-th group scores 1/g, summed over raters)
    expected = DDxAnnotations.from_selectors(
        [[[[0], [1]]] * 3, [[[1, 2]], [[2], [1]], [[2]]], [[[5]], [[5], [0]], [[4]]]], conditions=CONDITIONS)
    assert loaded.aggregate().tolist() == expected.aggregate().tolist()
    assert loaded.aggregate()[1].tolist() == [0, 1.5, 3, 0, 0, 0]  # Psoriasis 1 + 1/2, Tinea 1 + 1 + 1
    certainty = tmp_path / "certainty.csv"
    scored = runner.invoke(cli_app, ["ddx", str(out), "--conditions", str(conditions), "--draws", "100",
                                     "--certainty-out", str(certainty), "--format", "json"])
    assert scored.exit_code == 0, scored.output
    table = pd.read_csv(certainty).sort_values("case")
    assert table["top1"].tolist() == ["Eczema", "Tinea corporis", "Urticaria"]
    assert table["certainty"].iloc[0] == 1.0  # every rater agrees on case0
    summary = json.loads(scored.stdout[scored.stdout.index("{"):])
    assert summary["certainty"]["certain_cases"] >= 1
    app.state.portal.db.dispose()
