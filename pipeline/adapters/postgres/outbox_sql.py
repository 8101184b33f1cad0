"""The outbox's SQL: the indexer drains index_outbox into the vector index; reindex and watermarks."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, delete, func, or_, select, text
from sqlalchemy.orm import Session

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.model_sql import check_vectors_by
from pipeline.adapters.postgres.store import SqlStore
from pipeline.adapters.postgres.tables import episodes, index_outbox, semantic_memories
from pipeline.core.models import EPISODE, SEMANTIC
from pipeline.core.ports import Embedder, IndexChanges, IndexPoint, Vector
from pipeline.core.vector_ids import passage_point_id, passage_point_ids, point_id
from pipeline.core.vectors import from_blob, to_blob
from pipeline.review.index_vector import in_context

# Sent on commit by a review (and by a reindex): the indexer LISTENs on it.
OUTBOX_CHANNEL = "hindsight_outbox"


class OutboxQueries(SqlStore):
    """index_outbox: what the indexer relays (the OutboxStore port), its lag and watermark, a full reindex."""

    def process_outbox(self, limit: int, apply: IndexChanges, embedder: Embedder | None = None) -> int:
        """Take up to `limit` outbox rows, hand the points' current state to `apply`, then delete the rows.

        `apply(upserts, deletes, gone_episodes)` runs inside the transaction: if it raises, the rows stay for
        a retry. An episode that is no longer indexable is in `gone_episodes` as well as its main point in
        `deletes`: its passages go by payload (VectorIndex.delete_refs), whatever number it had.

        A turn recallable before its review (`prescreened`) has no embedding yet: `embedder` computes it
        here, off the write path, and it is stored for the review to reuse. Without an embedder such a
        turn is left alone (its review indexes it).
        """
        o = index_outbox
        with translate_errors(), self._sessions.begin() as s:
            if self.vectors_by is not None:
                # A standalone indexer started before a model change: its collection and its vectors are the
                # old model's. It leaves the rows for its restart instead of writing where no query looks.
                check_vectors_by(s.connection(), self.vectors_by)
            rows = s.execute(
                select(o.c.id, o.c.kind, o.c.ref_id)
                # Turns just stored first: under load the reviews' re-index rows (a turn in its context,
                # passages, semantic memories) queue up, and a fresh turn behind them waited up to 19 s to be
                # found by its meaning (`bench freshness` on a loaded machine). A reviewed turn is already
                # in the index by its own vector meanwhile, and what its review removed is out of recall at
                # once (recall re-reads the status), so only the upgrade waits.
                .order_by(o.c.early.desc(), o.c.id)
                .limit(limit)
                .with_for_update(skip_locked=True)
            ).all()
            if not rows:
                return 0
            refs = sorted({(r.kind, r.ref_id) for r in rows})
            # Serialise indexers per point, so an older state can never overwrite a newer one.
            keys = [hash_ref(k, i) for k, i in refs]
            s.execute(
                text("SELECT pg_advisory_xact_lock(k) FROM unnest(CAST(:keys AS bigint[])) AS k ORDER BY k"),
                {"keys": keys},
            )
            upserts, unembedded = _indexable_points(
                s, [i for k, i in refs if k == EPISODE], [i for k, i in refs if k == SEMANTIC], embedder
            )
            found = {(p.payload["kind"], p.payload["ref_id"]) for p in upserts} | {
                (EPISODE, i) for i in unembedded
            }
            deletes = [point_id(k, i) for k, i in refs if (k, i) not in found]
            gone = [i for k, i in refs if k == EPISODE and (k, i) not in found]
            apply(upserts, deletes, gone)
            s.execute(delete(o).where(o.c.id.in_([r.id for r in rows])))
            return len(rows)

    def outbox_lag(self) -> tuple[int, float]:
        """(rows waiting, age in seconds of the oldest)."""
        o = index_outbox
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(
                select(func.count(), func.extract("epoch", func.now() - func.min(o.c.created_at)))
            ).one()
            return int(row[0]), float(row[1] or 0.0)

    def outbox_position(self, through: int | None = None) -> dict[str, int]:
        """Where the outbox stands: rows waiting, the newest id queued (0 when empty) and, with `through`,
        the rows waiting at or below that id. A caller that reads `head` once its own writes committed can
        wait for `through=head` to reach 0: that is its work indexed, however busy the rest of the
        queue keeps (ids are taken at insert, so rows queued later sort above it)."""
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT count(*) AS pending, coalesce(max(id), 0) AS head, "
                    "count(*) FILTER (WHERE id <= :through) AS through FROM index_outbox"
                ),
                {"through": through if through is not None else -1},
            ).one()
        out = {"pending": int(row.pending), "head": int(row.head)}
        if through is not None:
            out["through"] = int(row.through)
        return out

    def enqueue_reindex(self) -> int:
        """Queue every episode and semantic memory for the indexer (rebuilds the index from this store)."""
        with translate_errors(), self._sessions.begin() as s:
            n = s.execute(
                text(
                    "INSERT INTO index_outbox (kind, ref_id) "
                    "SELECT 'episode', id FROM episodes UNION ALL SELECT 'semantic', id FROM semantic_memories"
                )
            )
            s.execute(text("SELECT pg_notify(:c, 'reindex')"), {"c": OUTBOX_CHANNEL})
            return int(getattr(n, "rowcount", 0) or 0)

    def indexable_point_ids(self) -> set[str]:
        """Every point the index should hold: kept episodes (and their passages), pending ones recallable
        before their review once embedded, and open semantic memories."""
        e = episodes
        with translate_errors(), self.engine.connect() as conn:
            # Passages per episode from the lengths alone: the vectors themselves are not read.
            k = func.coalesce(func.length(e.c.passages) / func.nullif(func.length(e.c.embedding), 0), 0)
            rows = conn.execute(
                select(e.c.id, k.label("k")).where(
                    or_(e.c.status == "kept", and_(e.c.status == "pending", e.c.prescreened)),
                    e.c.embedding.is_not(None),
                )
            ).all()
            m = semantic_memories
            sids = conn.scalars(
                select(m.c.id).where(m.c.valid_to.is_(None), m.c.status == "kept", m.c.embedding.is_not(None))
            )
            out = {point_id(SEMANTIC, i) for i in sids}
            for r in rows:
                out.add(point_id(EPISODE, r.id))
                out.update(passage_point_ids(r.id, int(r.k)))
            return out


def hash_ref(kind: str, ref_id: int) -> int:
    """A stable signed 64-bit advisory-lock key for one point."""
    return (ref_id << 1 | (1 if kind == SEMANTIC else 0)) & 0x7FFF_FFFF_FFFF_FFFF


# What may stand as the turn before another in its index vector (review.index_vector): something that was
# said and is still held. A forgotten, quarantined or rejected turn is not (forgetting one re-indexes the
# turn after it: `successors`); nor is a pending one, which its review may still quarantine.
_CONTEXT_STATUSES = "('kept', 'cold', 'merged')"

# A kept episode is found in the context of the turn before it; a pending one the write-side screen passed
# (recallable before its review) by its own vector, embedded by the indexer if it has none yet (`content`
# is read only then): its review re-indexes it as kept, in context and with its passages, or takes it out.
_INDEXABLE = text(
    f"""
    SELECT 'episode' AS kind, e.id, e.agent_id, e.user_id, e.embedding, e.passages, prev.embedding AS context,
           CASE WHEN e.embedding IS NULL THEN e.content END AS content
    FROM episodes e
    LEFT JOIN LATERAL (
        SELECT p.embedding FROM episodes p
        WHERE e.status = 'kept'
          AND p.agent_id = e.agent_id AND p.user_id = e.user_id AND p.session_id = e.session_id
          AND (p.ts, p.id) < (e.ts, e.id) AND p.status IN {_CONTEXT_STATUSES}
        ORDER BY p.ts DESC, p.id DESC LIMIT 1
    ) prev ON TRUE
    WHERE e.id = ANY(:episodes)
      AND ((e.status = 'kept' AND e.embedding IS NOT NULL) OR (e.status = 'pending' AND e.prescreened))
    UNION ALL
    SELECT 'semantic', id, agent_id, user_id, embedding, NULL, NULL, NULL
    FROM semantic_memories
    WHERE id = ANY(:semantic) AND status = 'kept' AND valid_to IS NULL AND embedding IS NOT NULL
    """
)

# The indexer's embeddings of pending turns, kept for their review (which embeds only what has none). A row
# a review is writing right now is skipped rather than waited for: that review brings its own embedding.
_STORE_EMBEDDINGS = text(
    """
    UPDATE episodes e SET embedding = v.embedding
    FROM unnest(CAST(:ids AS bigint[]), CAST(:blobs AS bytea[])) AS v(id, embedding)
    WHERE e.id = v.id AND e.id IN (
        SELECT id FROM episodes
        WHERE id = ANY(:ids) AND embedding IS NULL AND status = 'pending'
        FOR UPDATE SKIP LOCKED
    )
    """
)

_SUCCESSORS = text(
    """
    SELECT nxt.id FROM episodes e
    CROSS JOIN LATERAL (
        SELECT n.id FROM episodes n
        WHERE n.agent_id = e.agent_id AND n.user_id = e.user_id AND n.session_id = e.session_id
          AND (n.ts, n.id) > (e.ts, e.id)
        ORDER BY n.ts, n.id LIMIT 1
    ) nxt
    WHERE e.id = ANY(:ids)
    """
)


def successors(s: Session, episode_ids: Sequence[int]) -> list[int]:
    """The turn after each of these in its session: its index vector reads them as context, so it must be
    re-indexed when one of them leaves."""
    if not episode_ids:
        return []
    return list(s.scalars(_SUCCESSORS, {"ids": list(episode_ids)}))


def _indexable_points(
    s: Session, episode_ids: list[int], semantic_ids: list[int], embedder: Embedder | None
) -> tuple[list[IndexPoint], list[int]]:
    """The current state of the points that belong in the index, and the pending episodes that belong there
    but could not be embedded here (no embedder); anything else asked about is deleted.

    The payload holds what the index filters by (the scope) and what maps a hit back to its row (kind,
    ref_id); nothing that changes while the point stays (weight, status), which would go stale or cost a
    rewrite each time. Recall reads the rest from PostgreSQL, where it is current. An episode's main point
    is its embedding read in the context of the turn before it (review.index_vector). A long episode's passages
    are points of their own with the same payload and `passage`: n (1, 2, ...).
    """
    rows = s.execute(_INDEXABLE, {"episodes": episode_ids, "semantic": semantic_ids}).all()
    fresh: dict[int, Vector] = {}
    unembedded = [r.id for r in rows if r.embedding is None]
    if unembedded and embedder is not None:
        texts = [r.content for r in rows if r.embedding is None]
        fresh = dict(zip(unembedded, embedder.embed(texts), strict=True))
        s.execute(_STORE_EMBEDDINGS, {"ids": unembedded, "blobs": [to_blob(v) for v in fresh.values()]})
    points: list[IndexPoint] = []
    for r in rows:
        payload = {"kind": r.kind, "ref_id": r.id, "agent_id": r.agent_id, "user_id": r.user_id}
        if r.embedding is None and r.id not in fresh:
            continue
        main = fresh[r.id] if r.embedding is None else from_blob(r.embedding)  # the adapter checks it once
        found_by = in_context(main, from_blob(r.context)) if r.context is not None else main
        points.append(IndexPoint(id=point_id(r.kind, r.id), vector=found_by, payload=payload))
        if r.passages:
            matrix = from_blob(r.passages).reshape(-1, len(main))
            points.extend(
                IndexPoint(id=passage_point_id(r.id, n), vector=row, payload={**payload, "passage": n})
                for n, row in enumerate(matrix, start=1)
            )
    return points, [i for i in unembedded if i not in fresh]
