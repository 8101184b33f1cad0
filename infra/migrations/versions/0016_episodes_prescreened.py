"""episodes.prescreened: a pending turn the write-side screen passed is recallable before its review

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 20:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A constant default: PostgreSQL 11+ adds the column without rewriting the table. False is the safe
    # value: turns stored before this (or by a scheduler with read-your-writes off) wait for their review.
    # Not indexed: the lexicon's top-up reads pending turns through ix_episodes_pending_full.
    op.add_column(
        "episodes", sa.Column("prescreened", sa.Boolean(), server_default=sa.text("false"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("episodes", "prescreened")
