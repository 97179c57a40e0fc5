"""Revocation: disabled raters, per-rater session cut-off, revoked session ids (admin sign-out).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("raters") as batch:
        batch.add_column(sa.Column("disabled_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("sessions_after", sa.DateTime(), nullable=True))
    op.create_table(
        "revoked_sessions",
        sa.Column("sid", sa.String(64), primary_key=True),
        sa.Column("revoked_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("revoked_sessions")
    with op.batch_alter_table("raters") as batch:
        batch.drop_column("sessions_after")
        batch.drop_column("disabled_at")
