"""Agent-wide tool insights (issue 30): insights over all of an agent's calls, across its users

- semantic_memories.user_id becomes nullable: NULL is an agent-wide tool insight (and nothing else, a
  CHECK says so). Every per-scope query filters `user_id = :u`, which NULL never matches, so no user
  scope's recall, listing, forget or inspector page reaches one of these rows.
- ux_semantic_agent_insight_open: one current version per (agent, group key), backing the per-agent lock
  that serialises the full reviews of an agent's users (pipeline/adapters/postgres/agent_insights_sql.py).
- agent_insight_members: provenance with the user each call belongs to, so a reader serving one user
  lists that user's turn ids only. Apart from semantic_members, which per-scope code joins from an
  episode to its memories.
- ix_episodes_agent_tool_calls: an agent's call records across its users, newest first.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-12 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column("semantic_memories", "user_id", existing_type=sa.Text(), nullable=True)
    op.create_check_constraint(
        "ck_semantic_user_scope", "semantic_memories", "user_id IS NOT NULL OR method = 'tool_insight'"
    )
    op.create_index(
        "ux_semantic_agent_insight_open",
        "semantic_memories",
        ["agent_id", sa.text("(details ->> 'key')")],
        unique=True,
        postgresql_where=sa.text("user_id IS NULL AND method = 'tool_insight' AND valid_to IS NULL"),
    )
    op.create_table(
        "agent_insight_members",
        sa.Column(
            "memory_id",
            sa.BigInteger(),
            sa.ForeignKey("semantic_memories.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "episode_id", sa.BigInteger(), sa.ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("user_id", sa.Text(), nullable=False),
    )
    op.create_index("ix_agent_insight_members_user", "agent_insight_members", ["memory_id", "user_id"])
    op.create_index("ix_agent_insight_members_episode", "agent_insight_members", ["episode_id"])
    op.create_index(
        "ix_episodes_agent_tool_calls",
        "episodes",
        ["agent_id", "ts", "id"],
        postgresql_where=sa.text("role = 'tool' AND (metadata ->> 'tool') IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_episodes_agent_tool_calls", table_name="episodes")
    op.drop_table("agent_insight_members")
    op.drop_index("ux_semantic_agent_insight_open", table_name="semantic_memories")
    op.execute("DELETE FROM semantic_memories WHERE user_id IS NULL")
    op.drop_constraint("ck_semantic_user_scope", "semantic_memories", type_="check")
    op.alter_column("semantic_memories", "user_id", existing_type=sa.Text(), nullable=False)
