"""episodes, semantic_memories: restored_at, so the recall lexicon sees a memory come back

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 14:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The recall lexicon tops up by reviewed_at (episodes) and created_at (semantic memories), which a
    # re-heat or restore from cold storage does not touch: such a memory stayed out of BM25 until its
    # scope's lexicon was rebuilt. Top-ups now also read what was restored since. Partial indexes: few rows
    # are ever restored, and neither weight nor status is named, so the decay pass's rewrites stay HOT
    # (migrations 0005, 0006).
    for table in ("episodes", "semantic_memories"):
        op.add_column(table, sa.Column("restored_at", sa.DateTime(timezone=True), nullable=True))
        op.create_index(
            f"ix_{table}_scope_restored",
            table,
            ["agent_id", "user_id", "restored_at"],
            postgresql_where=sa.text("restored_at IS NOT NULL"),
        )


def downgrade() -> None:
    for table in ("episodes", "semantic_memories"):
        op.drop_index(f"ix_{table}_scope_restored", table_name=table)
        op.drop_column(table, "restored_at")
