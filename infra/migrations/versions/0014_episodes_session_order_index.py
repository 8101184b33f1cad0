"""episodes: (agent_id, user_id, session_id) index extended by (ts, id), the order of a session's turns

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03 17:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A turn's point in the vector index reads the turn before it in its session (review.index_vector), and
    # forgetting a turn re-indexes the one after it: both look up a neighbour by (ts, id) within the session.
    # With the session alone, each lookup read and sorted the whole session (a long-lived session holds
    # tens of thousands of turns). The old index is a prefix of this one, so its readers keep their plans.
    # None of these columns is written after insert: the decay pass's updates stay HOT (0005, 0006).
    op.create_index(
        "ix_episodes_session_order", "episodes", ["agent_id", "user_id", "session_id", "ts", "id"]
    )
    op.drop_index("ix_episodes_scope_session", table_name="episodes")


def downgrade() -> None:
    op.create_index("ix_episodes_scope_session", "episodes", ["agent_id", "user_id", "session_id"])
    op.drop_index("ix_episodes_session_order", table_name="episodes")
