"""episodes.turn_id unique per scope (agent_id, user_id) instead of deployment-wide

A turn id is the client's idempotency key within its scope (DESIGN §3). Unique across the deployment, an
agent's turn was silently dropped (ON CONFLICT DO NOTHING) when another scope had already used its id,
and the drop told the writer that the id existed elsewhere. Per scope, the two never meet.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 10:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The new index first: ingest's ON CONFLICT needs one of the two at every moment of the upgrade.
    op.create_index("ux_episodes_scope_turn", "episodes", ["agent_id", "user_id", "turn_id"], unique=True)
    op.drop_constraint("episodes_turn_id_key", "episodes", type_="unique")


def downgrade() -> None:
    # Fails if two scopes now share a turn id: then there is no deployment-wide uniqueness to go back to.
    op.create_unique_constraint("episodes_turn_id_key", "episodes", ["turn_id"])
    op.drop_index("ux_episodes_scope_turn", table_name="episodes")
