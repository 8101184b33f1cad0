"""quarantine: the injection detector's verdict on episodes, and a partial index for the review queue

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-30 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why a turn was quarantined (detector score and features, LLM second opinion) and, once a person
    # released or rejected it, who did and why. NULL for every turn the detector let through.
    op.add_column("episodes", sa.Column("quarantine", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    # The human review queue reads only quarantined rows; a partial index keeps it off the hot table.
    op.create_index(
        "ix_episodes_quarantined",
        "episodes",
        ["agent_id", "user_id", "id"],
        unique=False,
        postgresql_where=sa.text("status = 'quarantined'"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_episodes_quarantined", table_name="episodes", postgresql_where=sa.text("status = 'quarantined'")
    )
    op.drop_column("episodes", "quarantine")
