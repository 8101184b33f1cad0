"""semantic_members: index episode_id, for recall's "how big is the memory this episode is folded into"

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 22:20:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The primary key (memory_id, episode_id) only serves lookups by memory. Recall looks up every
    # episode candidate's memories (pipeline/adapters/postgres/recall_sql.py), and deleting an episode
    # cascades by episode_id: both would scan the whole table.
    op.create_index("ix_semantic_members_episode", "semantic_members", ["episode_id"])


def downgrade() -> None:
    op.drop_index("ix_semantic_members_episode", table_name="semantic_members")
