"""Quality control: gold (attention-check) questions, the track's gold rate, accuracy threshold and qualification
set, and the admin's per-rater override.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("questions") as batch:
        batch.add_column(sa.Column("gold", sa.String(16), nullable=False, server_default=""))
    with op.batch_alter_table("tracks") as batch:
        batch.add_column(sa.Column("gold_rate", sa.Float(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("qc_threshold", sa.Float(), nullable=False, server_default="0.7"))
        batch.add_column(sa.Column("qc_min_gold", sa.Integer(), nullable=False, server_default="3"))
        batch.add_column(sa.Column("qualification", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "qc_overrides",
        sa.Column("track_id", sa.Integer(), sa.ForeignKey("tracks.id"), primary_key=True),
        sa.Column("rater_id", sa.Integer(), sa.ForeignKey("raters.id"), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("set_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("qc_overrides")
    with op.batch_alter_table("tracks") as batch:
        for name in ("qualification", "qc_min_gold", "qc_threshold", "gold_rate"):
            batch.drop_column(name)
    with op.batch_alter_table("questions") as batch:
        batch.drop_column("gold")
