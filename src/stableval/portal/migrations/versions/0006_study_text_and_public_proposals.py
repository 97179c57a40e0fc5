"""A track's study text and visibility, and questions proposed by anyone.

Tracks: the overview and the rater instructions (Markdown) and whether the track is public (listed on the landing
page, open to anyone's proposed questions). Proposals: no rater for one sent from the landing page (``rater_id``
nullable), its optional contact, and the question an accepted proposal became once its answers were imported.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tracks") as batch:
        batch.add_column(sa.Column("overview", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("instructions", sa.Text(), nullable=False, server_default=""))
        # "0", not sa.false(): an expression default makes SQLite recreate the table, which its foreign keys refuse
        batch.add_column(sa.Column("public", sa.Boolean(), nullable=False, server_default="0"))
    with op.batch_alter_table("question_proposals") as batch:
        batch.alter_column("rater_id", existing_type=sa.Integer(), nullable=True)
        batch.add_column(sa.Column("contact", sa.String(320), nullable=False, server_default=""))
        batch.add_column(sa.Column("question_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_question_proposals_question_id", "questions", ["question_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("question_proposals") as batch:
        batch.drop_constraint("fk_question_proposals_question_id", type_="foreignkey")
        batch.drop_column("question_id")
        batch.drop_column("contact")
        batch.alter_column("rater_id", existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table("tracks") as batch:
        for name in ("public", "instructions", "overview"):
            batch.drop_column(name)
