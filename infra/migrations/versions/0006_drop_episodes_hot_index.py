"""episodes: drop ix_episodes_hot, so a decay pass that sends memories cold updates them in place (HOT)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 20:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The partial index's predicate names `status`. PostgreSQL can make an update HOT (new version on the
    # same page, no new index entries) only if no indexed column changes, and a predicate's columns count:
    # so every memory the decay pass sent cold wrote a new entry into each of the table's 7 indexes.
    # The pass reads each chunk's id range in full anyway, through the primary key, so the index bought
    # little. `hindsight bench decay`, 1M rows, the pass at fill + 60 days (874,535 rows go cold):
    #   with the index 31.1 s (0% HOT), without 15.5 s (47% HOT; the rest found no room on its page).
    op.drop_index(
        "ix_episodes_hot", table_name="episodes", postgresql_where=sa.text("status = 'kept' AND NOT core")
    )


def downgrade() -> None:
    op.create_index(
        "ix_episodes_hot",
        "episodes",
        ["id"],
        unique=False,
        postgresql_where=sa.text("status = 'kept' AND NOT core"),
    )
