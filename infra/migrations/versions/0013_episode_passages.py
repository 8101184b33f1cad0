"""episodes: passages, the vectors of a long turn beyond its main embedding's window

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Turns may now be 256 KiB; the embedding model reads ~180 words of one. Review embeds the rest of a long
    # turn as passages (k x dimension float32, row-major) and writes them beside `embedding`, so that the
    # indexer and a reindex rebuild every passage point from PostgreSQL alone. Nullable, no default, no
    # index: adding it rewrites nothing, and the decay pass's weight and status updates stay HOT (0005,
    # 0006); a large value lives in TOAST, out of the row those updates copy.
    op.add_column("episodes", sa.Column("passages", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    op.drop_column("episodes", "passages")
