"""Schema: the Alembic migration builds exactly the ORM tables; SQLite runs in WAL with a busy timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from portal_helpers import database_url
from sqlalchemy import inspect, text

from stableval.portal.store.db import Database
from stableval.portal.store.models import Base


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migration_matches_models_and_is_idempotent(kind: str, tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    db = Database(database_url(kind, tmp_path))
    db.upgrade()
    db.upgrade()  # second run: nothing to do, no error
    with db.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), Base.metadata)
        names = set(inspect(connection).get_table_names())
        version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    db.dispose()
    assert diff == []
    assert set(Base.metadata.tables) | {"alembic_version"} == names
    assert version == "0006"


def test_sqlite_wal_busy_timeout_foreign_keys(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.upgrade()
    with db.reading() as session:
        assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert session.execute(text("PRAGMA busy_timeout")).scalar() == 30_000
        assert session.execute(text("PRAGMA foreign_keys")).scalar() == 1
    db.dispose()


def test_secret_is_created_once_and_kept(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    first = Database(url)
    first.upgrade()
    secret = first.secret()
    first.dispose()
    second = Database(url)
    assert second.secret() == secret and len(secret) == 64
    second.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_migration_0006_upgrades_an_existing_database(kind: str, tmp_path: Path) -> None:
    """Issue 31: a database at 0005 with a track and a rater's proposal upgrades in place: the track gets empty
    study texts and is not public, the proposal keeps its rater, gets no contact and no question; a proposal
    without a rater (sent from the landing page) can then be stored."""
    db = Database(database_url(kind, tmp_path))
    db.upgrade("0005")
    with db.engine.begin() as connection:
        connection.execute(text("INSERT INTO tracks (slug, title, criteria, rules, k, flag_limit, lease_seconds, "
                                "created_at) VALUES ('old', 'Old', '[]', '{}', 3, 2, 60, '2026-01-01')"))
        connection.execute(text("INSERT INTO raters (token_hash, note, name, email, specialty, subspecialty, "
                                "created_at) VALUES ('h', 'dr', '', '', '', '', '2026-01-01')"))
        connection.execute(text("INSERT INTO question_proposals (track_id, rater_id, prompt, reference, specialty, "
                                "status, reason, created_at) SELECT t.id, r.id, 'Q?', '', '', 'pending', '', "
                                "'2026-01-01' FROM tracks t, raters r"))
    db.upgrade()
    with db.engine.begin() as connection:
        track = connection.execute(text("SELECT overview, instructions, public FROM tracks")).one()
        proposal = connection.execute(text("SELECT rater_id IS NOT NULL, contact, question_id, prompt "
                                           "FROM question_proposals")).one()
        connection.execute(text("INSERT INTO question_proposals (track_id, rater_id, contact, prompt, reference, "
                                "specialty, status, reason, created_at) SELECT id, NULL, 'a@b.org', 'Q2?', '', '', "
                                "'pending', '', '2026-01-02' FROM tracks"))
        version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    db.dispose()
    assert tuple(track) == ("", "", False) and tuple(proposal) == (True, "", None, "Q?") and version == "0006"
