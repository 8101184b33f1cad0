"""semantic_memories.details: what a tool insight keeps beside its text (issue 30)

A tool insight (method 'tool_insight') is a semantic memory whose numbers — counts, success rate, median
latency, its window, its group key — are read back by /v1/tool-insights and the next review. The partial
index serves those reads: open insights of a scope.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-10 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("semantic_memories", sa.Column("details", JSONB(), nullable=True))
    op.create_index(
        "ix_semantic_tool_insights_open",
        "semantic_memories",
        ["agent_id", "user_id"],
        postgresql_where=sa.text("method = 'tool_insight' AND valid_to IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_semantic_tool_insights_open", table_name="semantic_memories")
    op.drop_column("semantic_memories", "details")
