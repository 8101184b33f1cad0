"""Keyed turns by key (issue 41): an index on a scope's (metadata.entity, metadata.attribute).

A framework adapter reads a LangGraph store item or an Agents SDK session item back by its key
(GET /v1/turns/latest, GET /v1/turns/recall). Without this index each such read scanned every turn of the
scope: 1.1 ms at 300 turns, growing with the scope; with it, one index probe per key wanted.
Partial: only turns whose metadata carries both as strings, so ordinary turns pay nothing for it.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 12:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_episodes_keyed",
        "episodes",
        [
            "agent_id",
            "user_id",
            sa.text("(metadata ->> 'entity')"),
            sa.text("(metadata ->> 'attribute')"),
            "ts",
            "id",
        ],
        postgresql_where=sa.text(
            "jsonb_typeof(metadata -> 'entity') = 'string' AND jsonb_typeof(metadata -> 'attribute') = 'string'"
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_episodes_keyed", table_name="episodes")
