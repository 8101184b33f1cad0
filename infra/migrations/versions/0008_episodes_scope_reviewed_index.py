"""episodes: index (agent_id, user_id, reviewed_at) for the recall lexicon's top-ups

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 21:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Recall keeps an in-memory BM25 per scope and tops it up every second with the episodes reviewed
    # since the last top-up. Without this index that read scans the whole scope (100k rows in the
    # recall bench). reviewed_at is written once per episode, so the hourly decay rewrites of `weight`
    # stay HOT (migration 0005).
    op.create_index("ix_episodes_scope_reviewed", "episodes", ["agent_id", "user_id", "reviewed_at"])


def downgrade() -> None:
    op.drop_index("ix_episodes_scope_reviewed", table_name="episodes")
