"""episodes: a partial index on merged_into

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 18:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # merged_into references episodes.id, and nothing indexed it. Every DELETE of an episode (hard forget,
    # retention's purge of old cold turns) made PostgreSQL look for rows merged into it with a scan of the
    # table, and forget's walk of a merge chain did the same per step: deleting the 100,000 episodes of the
    # recall bench's scope ran for over 20 minutes. Partial: only merged rows, written once at review, so the
    # decay pass's updates stay HOT (0005, 0006).
    op.create_index(
        "ix_episodes_merged_into",
        "episodes",
        ["merged_into"],
        postgresql_where=sa.text("merged_into IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_episodes_merged_into", table_name="episodes")
