"""semantic memories

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 17:05:30.352407
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("episodes", sa.Column("consolidated", sa.Boolean(), server_default="false", nullable=False))
    op.add_column(
        "semantic_memories",
        sa.Column("method", sa.String(length=16), server_default="extractive", nullable=False),
    )
    op.create_index(
        "ix_semantic_open",
        "semantic_memories",
        ["agent_id", "user_id"],
        unique=False,
        postgresql_where=sa.text("valid_to IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_semantic_open", table_name="semantic_memories", postgresql_where=sa.text("valid_to IS NULL")
    )
    op.drop_column("semantic_memories", "method")
    op.drop_column("episodes", "consolidated")
