"""Coherent semantic memories in recall (issue 40).

- semantic_memories.coherent: review found the memory's members to be about one subject (a fact chain,
  restated requests, or a cosine cluster with a term in every member). Recall returns coherent memories only.
  A memory written before this revision was built by cosine alone unless it is a fact chain's (template) or a
  tool insight: those are coherent by construction, the rest are not, until a review writes a new version.
- semantic_members.stated: the memory's text states this member's words, so it may stand in for it in recall.
  NULL (rows written before): recall's older rule (a template or LLM text states every member, an extractive
  one the members containing it).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 09:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "semantic_memories", sa.Column("coherent", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.execute("UPDATE semantic_memories SET coherent = true WHERE method IN ('template', 'tool_insight')")
    op.add_column("semantic_members", sa.Column("stated", sa.Boolean()))


def downgrade() -> None:
    op.drop_column("semantic_members", "stated")
    op.drop_column("semantic_memories", "coherent")
