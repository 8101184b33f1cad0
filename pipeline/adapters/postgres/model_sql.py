"""The embedding model behind the store (embedding_model) and a model change in progress (reindex_job,
reindex_vectors): migration 0025 says what each holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.engine import Connection

from pipeline.adapters.model_identity import ModelIdentity, mismatch_message
from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.store import SqlStore
from pipeline.core.errors import ConfigError
from pipeline.core.models import EPISODE
from pipeline.core.ports import IndexPoint
from pipeline.core.vector_ids import passage_point_id, point_id
from pipeline.core.vectors import from_blob
from pipeline.review.index_vector import in_context

# The order a change goes through; each phase walks ids upwards from its cursor (point_cursor for the
# index phases), so a killed run continues where the last committed batch left it.
PHASES = ("embed_episodes", "embed_semantic", "index_episodes", "index_semantic", "switch")


@dataclass(frozen=True, slots=True)
class Recorded:
    identity: ModelIdentity
    collection: str


@dataclass(frozen=True, slots=True)
class Job:
    target: ModelIdentity
    collection: str
    phase: str
    episode_cursor: int
    semantic_cursor: int
    point_cursor: int
    done: int
    started_at: datetime


# (kind, ref_id, embedding, passages): a staged row.
Staged = tuple[str, int, bytes, bytes | None]
# The texts to embed: (kind, ref_id, text).
ToEmbed = tuple[str, int, str]


class ModelStore(SqlStore):
    def recorded(self) -> Recorded | None:
        with translate_errors(), self.engine.connect() as conn:
            return _recorded(conn)

    def ensure_recorded(self, configured: ModelIdentity, legacy: ModelIdentity, collection: str) -> Recorded:
        """The recorded model, recording one first if there is none: the configured model for a store with
        no vectors yet; `legacy` for one whose vectors predate this record (every release before it
        embedded with all-MiniLM-L6-v2), so that a new default cannot silently mix with them."""
        with translate_errors(), self.engine.begin() as conn:
            found = _recorded(conn)
            if found is not None:
                return found
            has_vectors = conn.scalar(
                text(
                    "SELECT EXISTS (SELECT 1 FROM episodes WHERE embedding IS NOT NULL) "
                    "OR EXISTS (SELECT 1 FROM semantic_memories WHERE embedding IS NOT NULL)"
                )
            )
            model = legacy if has_vectors else configured
            # Two roles starting at once: the first insert wins and both read it back.
            conn.execute(
                text(
                    "INSERT INTO embedding_model (id, name, weights_hash, dimension, collection) "
                    "VALUES (1, :name, :hash, :dim, :collection) ON CONFLICT (id) DO NOTHING"
                ),
                {
                    "name": model.name,
                    "hash": model.weights_hash,
                    "dim": model.dimension,
                    "collection": collection,
                },
            )
            found = _recorded(conn)
            assert found is not None
            return found

    def job(self) -> Job | None:
        with translate_errors(), self.engine.connect() as conn:
            return _job(conn)

    def start_job(self, target: ModelIdentity, collection: str) -> Job:
        """The job towards `target`: the one in progress if it has that target, else a fresh one (another
        target's job and its staged vectors are dropped; the caller drops its collection)."""
        with translate_errors(), self.engine.begin() as conn:
            current = _job(conn, lock=True)
            if current is not None and current.target.same_vectors(target):
                return current
            conn.execute(text("DELETE FROM reindex_job"))
            conn.execute(text("DELETE FROM reindex_vectors"))
            conn.execute(
                text(
                    "INSERT INTO reindex_job (id, name, weights_hash, dimension, collection) "
                    "VALUES (1, :name, :hash, :dim, :collection)"
                ),
                {
                    "name": target.name,
                    "hash": target.weights_hash,
                    "dim": target.dimension,
                    "collection": collection,
                },
            )
            job = _job(conn)
            assert job is not None
            return job

    def cancel_job(self) -> None:
        with translate_errors(), self.engine.begin() as conn:
            conn.execute(text("DELETE FROM reindex_job"))
            conn.execute(text("DELETE FROM reindex_vectors"))

    def totals(self) -> dict[str, int]:
        """How many memories a change re-embeds (every stored embedding) and how many it has."""
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM episodes WHERE embedding IS NOT NULL) AS episodes, "
                    "(SELECT count(*) FROM semantic_memories WHERE embedding IS NOT NULL) AS semantic, "
                    "(SELECT count(*) FROM reindex_vectors) AS staged"
                )
            ).one()
            return {"episodes": int(row.episodes), "semantic": int(row.semantic), "staged": int(row.staged)}

    def to_embed(self, kind: str, after: int, limit: int) -> list[ToEmbed]:
        """The next memories of `kind` with a stored embedding, by id above `after`."""
        sql = (
            "SELECT id, content AS body FROM episodes WHERE embedding IS NOT NULL AND id > :after "
            "ORDER BY id LIMIT :limit"
            if kind == EPISODE
            else "SELECT id, text AS body FROM semantic_memories WHERE embedding IS NOT NULL AND id > :after "
            "ORDER BY id LIMIT :limit"
        )
        with translate_errors(), self.engine.connect() as conn:
            return [(kind, r.id, r.body) for r in conn.execute(text(sql), {"after": after, "limit": limit})]

    def stage(self, rows: Sequence[Staged], *, phase: str, cursor: int) -> None:
        """The new vectors of a batch and the cursor past it, in one transaction: a kill loses at most the
        batch, and a re-run writes the same rows again (upsert), never twice."""
        with translate_errors(), self.engine.begin() as conn:
            inserted = _stage(conn, rows)
            column = _CURSORS.get(phase)
            moved = f"{column} = :cursor, " if column else ""  # a catch-up moves no cursor
            conn.execute(
                text(f"UPDATE reindex_job SET {moved}done = done + :n, updated_at = now()"),
                {"cursor": cursor, "n": inserted},
            )

    def advance(self, phase: str, point_cursor: int = 0) -> None:
        with translate_errors(), self.engine.begin() as conn:
            conn.execute(
                text("UPDATE reindex_job SET phase = :phase, point_cursor = :c, updated_at = now()"),
                {"phase": phase, "c": point_cursor},
            )

    def new_points(self, kind: str, after: int, limit: int) -> tuple[list[IndexPoint], int | None]:
        """The points of the next indexable memories of `kind` above `after`, from the staged vectors (an
        episode's main point read in the context of the turn before it, as the indexer builds it), and the
        last id read (None when there were none)."""
        sql = _NEW_EPISODE_POINTS if kind == EPISODE else _NEW_SEMANTIC_POINTS
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.execute(sql, {"after": after, "limit": limit}).all()
        points: list[IndexPoint] = []
        for r in rows:
            payload = {"kind": kind, "ref_id": r.id, "agent_id": r.agent_id, "user_id": r.user_id}
            main = from_blob(r.embedding)
            found_by = in_context(main, from_blob(r.context)) if r.context is not None else main
            points.append(IndexPoint(id=point_id(kind, r.id), vector=found_by, payload=payload))
            if r.passages:
                matrix = from_blob(r.passages).reshape(-1, len(main))
                points.extend(
                    IndexPoint(id=passage_point_id(r.id, n), vector=row, payload={**payload, "passage": n})
                    for n, row in enumerate(matrix, start=1)
                )
        return points, (rows[-1].id if rows else None)

    def unstaged(self, limit: int) -> list[ToEmbed]:
        """Memories embedded (by the old model) since their kind's pass went by: turns reviewed meanwhile."""
        with translate_errors(), self.engine.connect() as conn:
            return _unstaged(conn, limit)

    def switch(
        self,
        target: ModelIdentity,
        collection: str,
        embed: Callable[[Sequence[ToEmbed]], list[Staged]],
    ) -> None:
        """One transaction: the staged vectors replace the stored embeddings, and embedding_model names the
        new model and collection. Writes to episodes and semantic memories wait meanwhile (a review
        committing an old-model vector now would be missed): what was embedded since the last catch-up is
        embedded here, under the lock, so nothing old is left behind."""
        with translate_errors(), self.engine.begin() as conn:
            conn.execute(text("SELECT 1 FROM embedding_model WHERE id = 1 FOR UPDATE"))
            conn.execute(text("LOCK TABLE episodes, semantic_memories IN SHARE ROW EXCLUSIVE MODE"))
            while rest := _unstaged(conn, 256):
                _stage(conn, embed(rest))
            conn.execute(
                text(
                    "UPDATE episodes e SET embedding = v.embedding, passages = v.passages "
                    "FROM reindex_vectors v WHERE v.kind = 'episode' AND v.ref_id = e.id"
                )
            )
            conn.execute(
                text(
                    "UPDATE semantic_memories m SET embedding = v.embedding "
                    "FROM reindex_vectors v WHERE v.kind = 'semantic' AND v.ref_id = m.id"
                )
            )
            conn.execute(
                text(
                    "UPDATE embedding_model SET name = :name, weights_hash = :hash, dimension = :dim, "
                    "collection = :collection, recorded_at = now() WHERE id = 1"
                ),
                {
                    "name": target.name,
                    "hash": target.weights_hash,
                    "dim": target.dimension,
                    "collection": collection,
                },
            )
            conn.execute(text("DELETE FROM reindex_job"))
            conn.execute(text("DELETE FROM reindex_vectors"))


def check_vectors_by(conn: Connection, identity: ModelIdentity) -> None:
    """Inside a transaction that writes vectors: refuse when the store's model is no longer `identity`.

    A review checks the model when it starts, but a model change can switch the store while it embeds; its
    old-model vectors, written after the switch, would sit in the new index where no query finds them. The
    share lock waits for a switch in progress (it holds the row FOR UPDATE) and keeps one from starting
    until this transaction ends, so a write lands wholly before a switch (whose catch-up re-embeds it) or
    is refused after it, and the batch is retried by a worker with the new model."""
    row = conn.execute(
        text("SELECT name, weights_hash, dimension FROM embedding_model WHERE id = 1 FOR SHARE")
    ).one_or_none()
    if row is None:
        return
    recorded = ModelIdentity(row.name, row.weights_hash, int(row.dimension))
    if not recorded.same_vectors(identity):
        raise ConfigError(mismatch_message(recorded, identity))


def _recorded(conn: Connection) -> Recorded | None:
    row = conn.execute(
        text("SELECT name, weights_hash, dimension, collection FROM embedding_model WHERE id = 1")
    ).one_or_none()
    if row is None:
        return None
    return Recorded(ModelIdentity(row.name, row.weights_hash, int(row.dimension)), row.collection)


def _job(conn: Connection, *, lock: bool = False) -> Job | None:
    row = conn.execute(
        text("SELECT * FROM reindex_job WHERE id = 1" + (" FOR UPDATE" if lock else ""))
    ).one_or_none()
    if row is None:
        return None
    return Job(
        target=ModelIdentity(row.name, row.weights_hash, int(row.dimension)),
        collection=row.collection,
        phase=row.phase,
        episode_cursor=int(row.episode_cursor),
        semantic_cursor=int(row.semantic_cursor),
        point_cursor=int(row.point_cursor),
        done=int(row.done),
        started_at=row.started_at,
    )


def _stage(conn: Connection, rows: Sequence[Staged]) -> int:
    if not rows:
        return 0
    result = conn.execute(
        text(
            "INSERT INTO reindex_vectors (kind, ref_id, embedding, passages) "
            "SELECT * FROM unnest(CAST(:kinds AS text[]), CAST(:ids AS bigint[]), "
            "CAST(:embeddings AS bytea[]), CAST(:passages AS bytea[])) "
            "ON CONFLICT (kind, ref_id) DO UPDATE SET embedding = EXCLUDED.embedding, "
            "passages = EXCLUDED.passages RETURNING (xmax = 0) AS inserted"
        ),
        {
            "kinds": [r[0] for r in rows],
            "ids": [r[1] for r in rows],
            "embeddings": [r[2] for r in rows],
            "passages": [r[3] for r in rows],
        },
    )
    return sum(1 for r in result if r.inserted)


def _unstaged(conn: Connection, limit: int) -> list[ToEmbed]:
    rows = conn.execute(
        text(
            "(SELECT 'episode' AS kind, e.id, e.content AS body FROM episodes e WHERE e.embedding IS NOT NULL "
            " AND NOT EXISTS (SELECT 1 FROM reindex_vectors v WHERE v.kind = 'episode' AND v.ref_id = e.id) "
            " LIMIT :limit) UNION ALL "
            "(SELECT 'semantic', m.id, m.text FROM semantic_memories m WHERE m.embedding IS NOT NULL "
            " AND NOT EXISTS (SELECT 1 FROM reindex_vectors v WHERE v.kind = 'semantic' AND v.ref_id = m.id) "
            " LIMIT :limit)"
        ),
        {"limit": limit},
    )
    return [(r.kind, r.id, r.body) for r in rows]


# As outbox_sql._INDEXABLE, with the staged vectors: the turn before a kept episode is its context.
_NEW_EPISODE_POINTS = text(
    """
    SELECT e.id, e.agent_id, e.user_id, v.embedding, v.passages, pv.embedding AS context
    FROM episodes e
    JOIN reindex_vectors v ON v.kind = 'episode' AND v.ref_id = e.id
    LEFT JOIN LATERAL (
        SELECT p.id FROM episodes p
        WHERE e.status = 'kept'
          AND p.agent_id = e.agent_id AND p.user_id = e.user_id AND p.session_id = e.session_id
          AND (p.ts, p.id) < (e.ts, e.id) AND p.status IN ('kept', 'cold', 'merged')
        ORDER BY p.ts DESC, p.id DESC LIMIT 1
    ) prev ON TRUE
    LEFT JOIN reindex_vectors pv ON pv.kind = 'episode' AND pv.ref_id = prev.id
    WHERE e.id > :after AND (e.status = 'kept' OR (e.status = 'pending' AND e.prescreened))
    ORDER BY e.id LIMIT :limit
    """
)

_NEW_SEMANTIC_POINTS = text(
    """
    SELECT m.id, m.agent_id, m.user_id, v.embedding, NULL::bytea AS passages, NULL::bytea AS context
    FROM semantic_memories m
    JOIN reindex_vectors v ON v.kind = 'semantic' AND v.ref_id = m.id
    WHERE m.id > :after AND m.status = 'kept' AND m.valid_to IS NULL
    ORDER BY m.id LIMIT :limit
    """
)

_CURSORS = {"embed_episodes": "episode_cursor", "embed_semantic": "semantic_cursor"}
