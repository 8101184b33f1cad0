"""Knowledge updates for any attribute (issue 39): the links between a statement and the newer one that
superseded it.

- supersessions: (old episode, new episode) with the time the old one stopped holding (`valid_from`, the
  newer statement's time), what found it (`detector`: rules | fact_chain), why (`reason`), the review that
  found it, and, when an operator undid it, when, by whom and why. An undone row stays: it is the audit
  trail, and it keeps the next review from linking the pair again.
- Hard-forgetting an episode deletes its links with it (ON DELETE CASCADE): they hold no content, but they
  name it.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "supersessions",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column(
            "old_episode_id",
            sa.BigInteger(),
            sa.ForeignKey("episodes.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "new_episode_id",
            sa.BigInteger(),
            sa.ForeignKey("episodes.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detector", sa.String(16), nullable=False),
        sa.Column("reason", postgresql.JSONB(), server_default="{}", nullable=False),
        sa.Column("batch_id", sa.BigInteger(), sa.ForeignKey("batches.id", ondelete="SET NULL")),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True)),
        sa.Column("undone_by", sa.Text()),
        sa.Column("undo_reason", sa.Text()),
        sa.UniqueConstraint("old_episode_id", "new_episode_id", name="uq_supersessions_pair"),
    )
    op.create_index(
        "ix_supersessions_old_live",
        "supersessions",
        ["old_episode_id"],
        postgresql_where=sa.text("undone_at IS NULL"),
    )
    op.create_index("ix_supersessions_new", "supersessions", ["new_episode_id"])
    op.create_index("ix_supersessions_scope", "supersessions", ["agent_id", "user_id", "created_at"])


def downgrade() -> None:
    op.drop_table("supersessions")
