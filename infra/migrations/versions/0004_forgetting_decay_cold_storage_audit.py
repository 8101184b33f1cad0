"""forgetting: decay, cold storage, audit

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 17:27:45.388282
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memory_audit",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=12), nullable=False),
        sa.Column("ref_id", sa.BigInteger(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("changes", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_audit_scope", "memory_audit", ["agent_id", "user_id", "at"], unique=False)
    op.add_column("episodes", sa.Column("base_weight", sa.Float(), server_default="1.0", nullable=False))
    op.add_column("episodes", sa.Column("cold_reason", sa.String(length=12), nullable=True))
    op.add_column("episodes", sa.Column("cold_since", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "episodes", sa.Column("tags", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False)
    )
    op.create_index(
        "ix_episodes_hot",
        "episodes",
        ["id"],
        unique=False,
        postgresql_where=sa.text("status = 'kept' AND NOT core"),
    )
    op.add_column(
        "semantic_memories", sa.Column("base_weight", sa.Float(), server_default="1.0", nullable=False)
    )
    op.add_column(
        "semantic_memories", sa.Column("core", sa.Boolean(), server_default="false", nullable=False)
    )
    op.add_column("semantic_memories", sa.Column("cold_since", sa.DateTime(timezone=True), nullable=True))
    # Existing rows: decay starts from the weight they have (members of semantic memories carry 0.5),
    # and what the quality review sent cold is cold for that reason.
    op.execute("UPDATE episodes SET base_weight = weight")
    op.execute("UPDATE episodes SET cold_reason = 'quality' WHERE status = 'cold'")
    op.execute("UPDATE semantic_memories SET base_weight = weight")


def downgrade() -> None:
    op.drop_column("semantic_memories", "cold_since")
    op.drop_column("semantic_memories", "core")
    op.drop_column("semantic_memories", "base_weight")
    op.drop_index(
        "ix_episodes_hot", table_name="episodes", postgresql_where=sa.text("status = 'kept' AND NOT core")
    )
    op.drop_column("episodes", "tags")
    op.drop_column("episodes", "cold_since")
    op.drop_column("episodes", "cold_reason")
    op.drop_column("episodes", "base_weight")
    op.drop_index("ix_audit_scope", table_name="memory_audit")
    op.drop_table("memory_audit")
