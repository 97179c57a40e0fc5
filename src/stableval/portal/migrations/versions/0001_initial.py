"""Initial portal schema: settings, tracks, questions, raters, assignments, drafts, submissions, judgments.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "tracks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("slug", sa.String(64), nullable=False, unique=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("criteria", sa.JSON(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("flag_limit", sa.Integer(), nullable=False),
        sa.Column("lease_seconds", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "questions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("track_id", sa.Integer(), sa.ForeignKey("tracks.id"), nullable=False),
        sa.Column("external_id", sa.String(200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("reference", sa.Text(), nullable=False),
        sa.Column("specialty", sa.String(100), nullable=False),
        sa.Column("subspecialty", sa.String(100), nullable=False),
        sa.Column("model_a", sa.String(200), nullable=False),
        sa.Column("answer_a", sa.Text(), nullable=False),
        sa.Column("model_b", sa.String(200), nullable=False),
        sa.Column("answer_b", sa.Text(), nullable=False),
        sa.Column("retired", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("track_id", "external_id", name="uq_question_track_external"),
    )
    op.create_index("ix_questions_track_id", "questions", ["track_id"])
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("note", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("specialty", sa.String(100), nullable=False),
        sa.Column("subspecialty", sa.String(100), nullable=False),
        sa.Column("years", sa.Integer(), nullable=True),
        sa.Column("profile_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("question_id", sa.Integer(), sa.ForeignKey("questions.id"), nullable=False),
        sa.Column("rater_id", sa.Integer(), sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("swapped", sa.Boolean(), nullable=False),
        sa.Column("form_token", sa.String(64), nullable=False, unique=True),
        sa.Column("claimed_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("question_id", "rater_id", name="uq_assignment_question_rater"),
    )
    op.create_index("ix_assignments_rater_id", "assignments", ["rater_id"])
    op.create_index("ix_assignment_question_status", "assignments", ["question_id", "status"])
    op.create_table(
        "drafts",
        sa.Column("assignment_id", sa.Integer(), sa.ForeignKey("assignments.id"), primary_key=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("assignment_id", sa.Integer(), sa.ForeignKey("assignments.id"), nullable=False, unique=True),
        sa.Column("question_id", sa.Integer(), sa.ForeignKey("questions.id"), nullable=False),
        sa.Column("rater_id", sa.Integer(), sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("form_token", sa.String(64), nullable=False, unique=True),
        sa.Column("shown_a", sa.String(200), nullable=False),
        sa.Column("shown_b", sa.String(200), nullable=False),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("flag_reason", sa.Text(), nullable=False),
        sa.Column("time_pairwise_ms", sa.Integer(), nullable=False),
        sa.Column("time_rating_ms", sa.Integer(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("question_id", "rater_id", name="uq_submission_question_rater"),
    )
    op.create_index("ix_submissions_question_id", "submissions", ["question_id"])
    op.create_index("ix_submissions_rater_id", "submissions", ["rater_id"])
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("submission_id", sa.Integer(), sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("criterion", sa.String(64), nullable=False),
        sa.Column("choice", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("rating_a", sa.Integer(), nullable=True),
        sa.Column("rating_b", sa.Integer(), nullable=True),
        sa.UniqueConstraint("submission_id", "criterion", name="uq_judgment_submission_criterion"),
    )
    op.create_index("ix_judgments_submission_id", "judgments", ["submission_id"])


def downgrade() -> None:
    for table in ("judgments", "submissions", "drafts", "assignments", "raters", "questions", "tracks",
                  "settings"):
        op.drop_table(table)
