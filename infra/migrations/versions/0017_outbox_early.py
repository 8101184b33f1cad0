"""index_outbox.early: rows of turns recallable before their review are drained first

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 21:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Constant default: no table rewrite. The outbox is a short queue (drained within seconds), so the
    # indexer's ORDER BY early DESC, id sorts it without an index of its own.
    op.add_column(
        "index_outbox", sa.Column("early", sa.Boolean(), server_default=sa.text("false"), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("index_outbox", "early")
