"""Live rater diagnostics (a STABLEVAL fit of the track's ratings) with planted raters: honest, lenient, constant
and random. The constant and random raters are flagged near-uniform, the honest and lenient ones
are not, and the lenient one reads as lenient; the result is cached until the next submission; the admin page
and the CLI show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from planted_raters import CRITERIA, Behaviour, choice_of, constant, honest, random_rater, store
from portal_helpers import ADMIN, csrf_of, profiled_raters, questions_frame, seed_track
from typer.testing import CliRunner

from stableval.cli import app as cli_app
from stableval.portal.admin import live_diagnostics
from stableval.portal.admin.live_diagnostics import track_diagnostics
from stableval.portal.store.db import Database

QUESTIONS = 30


def lenient(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """One level above the truth (5 stays 5)."""
    return np.clip(truth + 1, 1, 5)


def _plant(db: Database, tmp_path: Path) -> dict[str, int]:
    seed_track(db, tmp_path, frame=questions_frame(QUESTIONS), k=7)
    kinds: dict[str, Behaviour] = {"honest-1": honest, "honest-2": honest, "honest-3": honest, "honest-4": honest,
                                   "lenient": lenient, "constant": constant, "random": random_rater}
    ids = dict(zip(kinds, profiled_raters(db, len(kinds)), strict=True))
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, size=(QUESTIONS, len(CRITERIA), 2))
    work = []
    for name, behaviour in kinds.items():
        for q in range(QUESTIONS):
            given = behaviour(rng, truth[q])
            work.append((ids[name], f"q{q}", choice_of(given), given))
    store(db, work)
    return ids


@pytest.fixture
def planted(portal: tuple[Any, Database], tmp_path: Path) -> tuple[Any, Database, dict[str, int]]:
    live_diagnostics.clear_cache()
    app, db = portal
    return app, db, _plant(db, tmp_path)


def test_planted_bad_raters_are_flagged_and_good_ones_are_not(planted: tuple[Any, Database, dict[str, int]]) -> None:
    _, db, ids = planted
    live = track_diagnostics(db, "main")
    rows = {row.rater_id: row for row in live.raters}
    by_name = {name: rows[rater] for name, rater in ids.items()}
    assert live.submissions == QUESTIONS * len(ids) and live.fit["converged"]
    for name in ("constant", "random"):
        assert any(flag.startswith("near-uniform") for flag in by_name[name].flags), by_name[name]
    for name in ("honest-1", "honest-2", "honest-3", "honest-4"):
        assert by_name[name].flags == (), by_name[name]
    # a lenient rater is informative (one level up, consistently): not near-uniform, whatever their accuracy
    assert not any(flag.startswith("near-uniform") for flag in by_name["lenient"].flags)
    assert by_name["lenient"].spammer_score > 0.5
    # hand-worked: a rater who always gives 3 has identical confusion rows, so a spammer score of exactly 0
    assert by_name["constant"].spammer_score == pytest.approx(0.0, abs=1e-12)
    assert by_name["constant"].ratings == QUESTIONS * len(CRITERIA) * 2
    # honest raters agree with the consensus about as often as they give the truth (85%), bad ones ~1 in 5
    for name in ("honest-1", "honest-2", "honest-3", "honest-4"):
        assert 0.75 <= by_name[name].consensus <= 0.95 and by_name[name].accuracy > 0.7
        assert by_name[name].over_rating < 0.15
    assert by_name["random"].consensus < 0.35 and by_name["constant"].consensus < 0.35
    # the lenient rater: above the truth most of the time (never at 5), gives 5 far more often than honest ones
    assert by_name["lenient"].over_rating > 0.6 and by_name["lenient"].under_rating < 0.05
    assert by_name["lenient"].leniency > by_name["honest-1"].leniency + 0.15
    near_uniform = {row.rater_id for row in live.raters if any(f.startswith("near-uniform") for f in row.flags)}
    assert near_uniform == {ids["constant"], ids["random"]}
    flagged = [bool(row.flags) for row in live.raters]
    assert flagged == sorted(flagged, reverse=True)  # flagged raters are listed first


def test_cached_until_the_next_submission(planted: tuple[Any, Database, dict[str, int]]) -> None:
    _, db, _ = planted
    first = track_diagnostics(db, "main")
    assert track_diagnostics(db, "main") is first  # no new submission: no refit
    (newcomer,) = profiled_raters(db, 1)
    given = np.full((len(CRITERIA), 2), 4)
    store(db, [(newcomer, "q0", choice_of(given), given)])
    second = track_diagnostics(db, "main")
    assert second is not first and second.submissions == first.submissions + 1
    assert any(row.rater_id == newcomer and row.flags[0].startswith("too few") for row in second.raters)


def test_admin_page_and_cli_show_the_diagnostics(planted: tuple[Any, Database, dict[str, int]]) -> None:
    app, db, ids = planted
    admin = TestClient(app)
    login = admin.get("/admin/login")
    admin.post("/admin/login", data={"csrf": csrf_of(login.text), "token": ADMIN})
    page = admin.get("/admin/tracks/main")
    assert page.status_code == 200 and "Rater diagnostics (STABLEVAL)" in page.text
    section = page.text.split("Rater diagnostics (STABLEVAL)")[1].split("Flagged for review")[0]
    assert section.count("near-uniform") == 2 and f"rater-{ids['constant']}" in section

    result = CliRunner().invoke(cli_app, ["portal", "diagnostics", "main", "--database-url", db.url])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("rater,ratings,accuracy,consensus,leniency") and len(lines) == 1 + len(ids)
    assert sum("near-uniform" in line for line in lines) == 2
    missing = CliRunner().invoke(cli_app, ["portal", "diagnostics", "nope", "--database-url", db.url])
    assert missing.exit_code == 1 and "no such track" in missing.output


def test_empty_track_says_why(portal: tuple[Any, Database], tmp_path: Path) -> None:
    _, db = portal
    seed_track(db, tmp_path, k=3)
    live = track_diagnostics(db, "main", cache=False)
    assert live.raters == () and "No confirmed ratings yet" in live.message
