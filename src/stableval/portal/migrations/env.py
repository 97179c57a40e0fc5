"""Alembic environment: runs on the connection that :meth:`stableval.portal.store.db.Database.upgrade` passes in."""

from __future__ import annotations

from alembic import context

from stableval.portal.store.models import Base


def run() -> None:
    connection = context.config.attributes["connection"]
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                      compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # false when imported outside Alembic (e.g. by pytest's doctest collection)
    run()
