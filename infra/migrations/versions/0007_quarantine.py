"""quarantine: the injection detector's verdict on episodes

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Why a turn was quarantined (detector score and features, LLM second opinion) and, once a person
    # released or rejected it, who did and why. NULL for every turn the detector let through.
    op.add_column("episodes", sa.Column("quarantine", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    # Deliberately no index for the quarantine queue: a partial index on `status = 'quarantined'` names
    # `status` in its predicate, so every decay pass that moves a row to cold storage could no longer be
    # a HOT update (migration 0006 dropped ix_episodes_hot for that reason). A person lists the
    # queue rarely; a scan of one scope (ix_episodes_scope_session) is cheap enough.


def downgrade() -> None:
    op.drop_column("episodes", "quarantine")
