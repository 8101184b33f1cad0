"""review part 1: quality, merges, fact retraction

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 16:41:35.579926
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("episodes", sa.Column("core", sa.Boolean(), server_default="false", nullable=False))
    op.add_column("episodes", sa.Column("merged_into", sa.BigInteger(), nullable=True))
    op.add_column(
        "episodes",
        sa.Column("merged_turn_ids", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False),
    )
    op.create_foreign_key("episodes_merged_into_fkey", "episodes", "episodes", ["merged_into"], ["id"])
    op.add_column("facts", sa.Column("retracted_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_facts_turn_ids", "facts", ["turn_ids"], unique=False, postgresql_using="gin")
    op.create_index(
        "uq_facts_open_version",
        "facts",
        ["agent_id", "user_id", "entity", "attribute"],
        unique=True,
        postgresql_where=sa.text("valid_to IS NULL AND retracted_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "uq_facts_open_version",
        table_name="facts",
        postgresql_where=sa.text("valid_to IS NULL AND retracted_at IS NULL"),
    )
    op.drop_index("ix_facts_turn_ids", table_name="facts", postgresql_using="gin")
    op.drop_column("facts", "retracted_at")
    op.drop_constraint("episodes_merged_into_fkey", "episodes", type_="foreignkey")
    op.drop_column("episodes", "merged_turn_ids")
    op.drop_column("episodes", "merged_into")
    op.drop_column("episodes", "core")
