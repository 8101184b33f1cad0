"""The embedding model behind the store's vectors, and a model change in progress (issue 45).

embedding_model: one row, the identity (name, weights hash, dimension) of the model whose vectors the
index and the stored embeddings hold, and the collection recall reads. Every role compares its own model
with it at start. reindex_job: one row while `hindsight reindex --model` re-embeds the store, with how far
it got (ids re-embedded in order), so a killed run continues. reindex_vectors: the new vectors, beside the
old ones until the switch copies them over in the transaction that flips embedding_model.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 06:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE embedding_model (
            id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
            name text NOT NULL,
            weights_hash text NOT NULL,
            dimension integer NOT NULL,
            collection text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE reindex_job (
            id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
            name text NOT NULL,
            weights_hash text NOT NULL,
            dimension integer NOT NULL,
            collection text NOT NULL,
            phase text NOT NULL DEFAULT 'embed_episodes',
            episode_cursor bigint NOT NULL DEFAULT 0,
            semantic_cursor bigint NOT NULL DEFAULT 0,
            point_cursor bigint NOT NULL DEFAULT 0,
            done integer NOT NULL DEFAULT 0,
            started_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    op.execute(
        """
        CREATE TABLE reindex_vectors (
            kind text NOT NULL,
            ref_id bigint NOT NULL,
            embedding bytea NOT NULL,
            passages bytea,
            PRIMARY KEY (kind, ref_id)
        )
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE reindex_vectors")
    op.execute("DROP TABLE reindex_job")
    op.execute("DROP TABLE embedding_model")
