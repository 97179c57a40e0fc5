"""Tracks, imports and invites (:mod:`stableval.portal.admin.manage`): what a track may hold (each regression of
the security reviews says so in its docstring)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from portal_helpers import ADMIN

from stableval.portal.admin.manage import track_problems


@pytest.mark.parametrize(("changes", "column", "problem"), [
    ({"title": "T" * 201}, "title", "title too long"),
    ({"criteria": [f"criterion {i}" for i in range(21)]}, "criteria", "too many criteria"),
    ({"criteria": ["c" * 65]}, "criteria", "criterion too long"),
    ({"criteria": ["a" + "!" * 200]}, "criteria", "criterion too long"),
    ({"task": "ddx", "conditions": [f"Condition {i}" for i in range(501)]}, "conditions", "too many conditions"),
])
def test_a_track_holds_bounded_sizes(changes: dict[str, Any], column: str, problem: str) -> None:
    """Regression (issue 26, security review 3, F19): nothing bounded the sizes at track creation: 20,000 ddx
    conditions (a 20,000-option list on every page), 500 criteria (500 radio groups per page) and titles of 5,000
    characters (a server error on PostgreSQL) were accepted, and a long criterion got a wrong message ("needs
    letters or digits"). Now a title has at most 200 characters, a track at most 20 criteria of at most 64
    characters (their key) and a ddx list at most 500 conditions, each refused with its own message."""
    track, problems = track_problems("t", **changes)
    assert track is None and [(e.column, e.problem) for e in problems][:1] == [(column, problem)]
    sized = {"title": "T" * 200, "criteria": [f"criterion {i}" for i in range(20)]}
    assert track_problems("t", **sized)[1] == []


def test_a_long_title_is_a_message_not_a_server_error(portal: tuple[Any, Any]) -> None:
    """Regression (issue 26, security review 3, F11/F19): a title of 201 characters answered 500 on PostgreSQL
    (``VARCHAR(200)``). Now the form shows the problem beside the field (422), on either database."""
    app, _ = portal
    admin = TestClient(app, raise_server_exceptions=False, headers={"Authorization": f"Bearer {ADMIN}"})
    answer = admin.post("/admin/tracks", data={"slug": "long", "title": "T" * 201},
                        files={"conditions_file": ("", b"")})
    assert answer.status_code == 422 and "title too long" in answer.text
