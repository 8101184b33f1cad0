"""The API key behind each audited change (issue 44): memory_audit.key_prefix beside the caller's `actor`.

`actor` is whatever the caller writes in the request body, so an agent's key could record "admin:ops".
The key the request was authenticated with is what the server itself knows: its prefix (the public id
`hindsight keys list` shows and `keys revoke` takes) is recorded beside it, "keyless" when auth is off.
Nullable: rows before this revision, and changes the system makes itself (retention), have no key.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("memory_audit", sa.Column("key_prefix", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("memory_audit", "key_prefix")
