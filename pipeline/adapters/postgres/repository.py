"""All SQL. Each public method is one transaction; callers never see a Session."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    and_,
    case,
    cast,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from pipeline.adapters.embedder import from_blob
from pipeline.adapters.postgres import fact_chains
from pipeline.adapters.postgres.engine import make_sessionmaker, translate_errors
from pipeline.adapters.postgres.review_writes import BatchEpisode, ReviewWrite, write_review
from pipeline.adapters.postgres.tables import (
    EPISODE,
    SEMANTIC,
    batches,
    episodes,
    index_outbox,
    reviews,
    semantic_memories,
    sessions,
)
from pipeline.core.models import Scope, SessionEnd, Turn
from pipeline.core.ports import IndexPoint, Vector
from pipeline.core.vector_ids import point_id
from pipeline.review.consolidation import OpenMemory, Point
from pipeline.review.dedup import Memory
from scheduler.policy import Dispatch, ScopeBacklog, SessionBacklog

OUTBOX_CHANNEL = "hindsight_outbox"
# priority * URGENCY_SHIFT + id orders by priority, then id, for ids below 2**40 (a trillion episodes).
URGENCY_SHIFT = 2**40


@dataclass(frozen=True, slots=True)
class BatchInfo:
    id: int
    agent_id: str
    user_id: str
    session_id: str | None
    kind: str
    trigger: str
    status: str
    attempts: int


@dataclass(frozen=True, slots=True)
class ColdRow:
    kind: str
    id: int
    text: str
    vector: Vector
    base_weight: float
    valid_from: datetime
    valid_to: datetime | None
    turn_ids: tuple[str, ...]
    session_id: str | None
    source: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    id: int
    turn_id: str
    merged_turn_ids: tuple[str, ...]
    session_id: str
    content: str
    ts: datetime
    source: str
    status: str
    weight: float


class Repository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = make_sessionmaker(engine)

    # -- ingest ---------------------------------------------------------------------------------

    def ingest(self, turns: Sequence[Turn], session_ends: Sequence[SessionEnd]) -> int:
        """Store turns as pending episodes (a turn_id seen before is skipped) and mark sessions ended.

        Returns how many episodes were new.
        """
        with translate_errors(), self._sessions.begin() as s:
            inserted = 0
            if turns:
                columns: dict[str, list[Any]] = {
                    "turn_id": [t.turn_id for t in turns],
                    "agent_id": [t.agent_id for t in turns],
                    "user_id": [t.user_id for t in turns],
                    "session_id": [t.session_id for t in turns],
                    "role": [t.role for t in turns],
                    "content": [t.content for t in turns],
                    "ts": [t.ts for t in turns],
                    "source": [t.source for t in turns],
                    "metadata": [Jsonb(t.metadata) for t in turns],
                    "priority": [t.priority for t in turns],
                }
                inserted = len(s.execute(_INGEST, columns).all())
            for end in _unique_sessions(session_ends):
                stmt2 = pg_insert(sessions).values(
                    agent_id=end.agent_id, user_id=end.user_id, session_id=end.session_id, ended_at=end.ts
                )
                s.execute(
                    stmt2.on_conflict_do_update(
                        index_elements=["agent_id", "user_id", "session_id"],
                        set_={"ended_at": stmt2.excluded.ended_at},
                    )
                )
            return inserted

    # -- scheduling -----------------------------------------------------------------------------

    def backlog(self) -> list[ScopeBacklog]:
        """Per scope, what is waiting for review (input to `scheduler.policy.decide`)."""
        e = episodes
        sess = sessions
        q = (
            select(
                e.c.agent_id,
                e.c.user_id,
                e.c.session_id,
                func.count().label("pending_full"),
                func.count().filter(e.c.light_batch_id.is_(None)).label("pending_light"),
                func.max(e.c.received_at).label("last_received"),
                func.bool_or(sess.c.ended_at.is_not(None)).label("ended"),
                # min over (priority, id) in one bigint: the most urgent priority and its oldest episode.
                func.min(cast(e.c.priority, BigInteger) * URGENCY_SHIFT + e.c.id).label("urgency"),
            )
            .select_from(
                e.outerjoin(
                    sess,
                    and_(
                        sess.c.agent_id == e.c.agent_id,
                        sess.c.user_id == e.c.user_id,
                        sess.c.session_id == e.c.session_id,
                    ),
                )
            )
            .where(e.c.full_batch_id.is_(None))
            .group_by(e.c.agent_id, e.c.user_id, e.c.session_id)
        )
        scopes: dict[Scope, list[Any]] = defaultdict(list)
        with translate_errors(), self.engine.connect() as conn:
            for row in conn.execute(q):
                scopes[Scope(row.agent_id, row.user_id)].append(row)
        return [
            ScopeBacklog(
                scope=scope,
                pending_full=sum(r.pending_full for r in rows),
                sessions=tuple(
                    SessionBacklog(
                        r.session_id,
                        r.pending_light,
                        r.last_received,
                        bool(r.ended),
                        top_priority=int(r.urgency) // URGENCY_SHIFT,
                        first_pending_id=int(r.urgency) % URGENCY_SHIFT,
                    )
                    for r in rows
                ),
            )
            for scope, rows in scopes.items()
        ]

    def claim(self, d: Dispatch, *, min_count: int, limit: int) -> int | None:
        """Claim pending episodes for one review into a new batch; None when fewer than `min_count` were free.

        FOR UPDATE SKIP LOCKED makes concurrent schedulers claim disjoint episodes.
        """
        e = episodes
        where = [
            e.c.agent_id == d.scope.agent_id,
            e.c.user_id == d.scope.user_id,
            e.c.full_batch_id.is_(None),
        ]
        if d.kind == "light":
            where.append(e.c.light_batch_id.is_(None))
        if d.session_id is not None:
            where.append(e.c.session_id == d.session_id)
        with translate_errors(), self._sessions.begin() as s:
            ids = list(
                s.scalars(
                    select(e.c.id)
                    .where(*where)
                    .order_by(e.c.priority, e.c.id)
                    .limit(limit)
                    .with_for_update(skip_locked=True)
                )
            )
            if len(ids) < max(min_count, 1):
                return None
            batch_id = s.execute(
                insert(batches)
                .values(
                    agent_id=d.scope.agent_id,
                    user_id=d.scope.user_id,
                    session_id=d.session_id,
                    kind=d.kind,
                    trigger=d.trigger,
                    episode_count=len(ids),
                )
                .returning(batches.c.id)
            ).scalar_one()
            column = "full_batch_id" if d.kind == "full" else "light_batch_id"
            s.execute(update(e).where(e.c.id.in_(ids)).values({column: batch_id}))
            return int(batch_id)

    def waiting_batches(self) -> int:
        """Batches claimed or dispatched that no worker has started yet: the review queue's real depth."""
        with translate_errors(), self.engine.connect() as conn:
            n = conn.scalar(text("SELECT count(*) FROM batches WHERE status IN ('pending', 'dispatched')"))
            return int(n or 0)

    def mark_dispatched(self, batch_ids: Sequence[int], now: datetime) -> None:
        b = batches
        with translate_errors(), self._sessions.begin() as s:
            s.execute(
                update(b)
                .where(b.c.id.in_(list(batch_ids)), b.c.status.in_(("pending", "dispatched")))
                .values(status="dispatched", dispatched_at=now)
            )

    def stalled_batches(self, *, undispatched_s: float, unfinished_s: float) -> list[int]:
        """Batches claimed but never dispatched for `undispatched_s` seconds (a scheduler died in between),
        or dispatched/running without finishing for `unfinished_s` seconds (a worker died, a task was lost).

        The database clock decides, so processes with skewed clocks agree.
        """
        sql = text(
            """
            SELECT id FROM batches
            WHERE (status = 'pending' AND created_at < now() - make_interval(secs => :undispatched))
               OR (status IN ('dispatched', 'running')
                   AND coalesce(dispatched_at, created_at) < now() - make_interval(secs => :unfinished))
            ORDER BY id LIMIT 1000
            """
        )
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.scalars(sql, {"undispatched": undispatched_s, "unfinished": unfinished_s})
            return [int(r) for r in rows]

    # -- review ---------------------------------------------------------------------------------

    def start_batch(self, batch_id: int, now: datetime) -> BatchInfo | None:
        """Mark a batch running (attempts + 1). None when it is already done or does not exist."""
        b = batches
        with translate_errors(), self._sessions.begin() as s:
            row = s.execute(
                update(b)
                .where(b.c.id == batch_id, b.c.status != "done")
                .values(status="running", started_at=now, attempts=b.c.attempts + 1)
                .returning(
                    b.c.id,
                    b.c.agent_id,
                    b.c.user_id,
                    b.c.session_id,
                    b.c.kind,
                    b.c.trigger,
                    b.c.status,
                    b.c.attempts,
                )
            ).one_or_none()
            return BatchInfo(*row) if row else None

    def batch_episodes(self, batch: BatchInfo) -> list[BatchEpisode]:
        with translate_errors(), self.engine.connect() as conn:
            return _batch_episodes(conn, batch)

    def review_inputs(self, batch: BatchInfo, *, memory_limit: int, cluster_limit: int) -> ReviewInputs:
        """Everything a review reads before it writes, on one connection: the batch's episodes, the scope's
        kept memories (most recent `memory_limit`, for de-duplication) and, for a full review, what it
        clusters (most recent `cluster_limit`), the current fact groups and the open semantic memories.

        A full review reads the scope's embeddings once for both uses; each separate read cost a
        connection check-out (a ping), a query and a rollback, which add up on a busy machine.
        """
        with translate_errors(), self.engine.connect() as conn:
            episodes = _batch_episodes(conn, batch)
            exclude = [ep.id for ep in episodes]
            a, u = batch.agent_id, batch.user_id
            if batch.kind != "full":
                return ReviewInputs(episodes, _scope_memories(conn, a, u, exclude, memory_limit))
            rows = conn.execute(
                _SCOPE_EPISODES, {"a": a, "u": u, "exclude": exclude, "limit": memory_limit}
            ).all()
            memories = [Memory(r.id, r.ts, from_blob(r.embedding)) for r in rows]
            points = [_point(r) for r in rows if r.clusterable][:cluster_limit]
            if len(rows) == memory_limit and len(points) < cluster_limit:
                # The memory limit cut the scope short of enough points to cluster: read them on their own.
                points = _cluster_inputs(conn, a, u, exclude, cluster_limit)
            return ReviewInputs(
                episodes,
                memories,
                points,
                _current_fact_groups(conn, a, u, min_turns=1),
                _open_semantic(conn, a, u),
            )

    def scope_memories(
        self, agent_id: str, user_id: str, *, exclude: Sequence[int], limit: int
    ) -> list[Memory]:
        """The scope's kept, embedded episodes (most recent `limit`), for de-duplication and uniqueness."""
        with translate_errors(), self.engine.connect() as conn:
            return _scope_memories(conn, agent_id, user_id, exclude, limit)

    def cluster_inputs(
        self, agent_id: str, user_id: str, *, exclude: Sequence[int], limit: int
    ) -> list[Point]:
        """Kept episodes to cluster: unconsolidated ones and members of open semantic memories, minus those
        whose every fact was superseded (they would revive an outdated value). Most recent `limit`."""
        with translate_errors(), self.engine.connect() as conn:
            return _cluster_inputs(conn, agent_id, user_id, exclude, limit)

    def current_fact_groups(
        self, agent_id: str, user_id: str, *, min_turns: int
    ) -> list[tuple[str, tuple[str, ...]]]:
        """(chain key, turn ids) of current facts stated in at least `min_turns` turns."""
        with translate_errors(), self.engine.connect() as conn:
            return _current_fact_groups(conn, agent_id, user_id, min_turns=min_turns)

    def open_semantic(self, agent_id: str, user_id: str) -> list[OpenMemory]:
        with translate_errors(), self.engine.connect() as conn:
            return _open_semantic(conn, agent_id, user_id)

    def complete_review(
        self,
        batch: BatchInfo,
        write: ReviewWrite,
        *,
        now: datetime,
        started_at: datetime,
        counts: dict[str, int],
        timings_ms: dict[str, float],
        worker: str,
    ) -> tuple[bool, dict[str, int]]:
        """Write a review's results in one transaction. (False, {}) if another delivery already finished it."""
        b, e = batches, episodes
        t0 = time.perf_counter()
        with translate_errors(), self._sessions.begin() as s:
            status = s.scalar(select(b.c.status).where(b.c.id == batch.id).with_for_update())
            if status is None or status == "done":
                return False, {}
            column = e.c.full_batch_id if batch.kind == "full" else e.c.light_batch_id
            member_ids = list(s.scalars(select(e.c.id).where(column == batch.id)))
            fact_counts = write_review(s, batch.agent_id, batch.user_id, member_ids, write, now)
            # Each decision's UPDATE marked its episode reviewed; this marks the rest (decided by an earlier
            # light review). Marking all of them first wrote every row once more: a new version of a
            # ~2 KB row and its 8 index entries per episode.
            s.execute(
                update(e)
                .where(column == batch.id, e.c.reviewed_at.is_distinct_from(now))
                .values(reviewed_at=now)
            )
            # The audit row holds the write stage too, up to this point (all but this insert and the commit).
            timings_ms = {**timings_ms, "write": round((time.perf_counter() - t0) * 1000, 2)}
            s.execute(
                pg_insert(reviews)
                .values(
                    batch_id=batch.id,
                    agent_id=batch.agent_id,
                    user_id=batch.user_id,
                    kind=batch.kind,
                    trigger=batch.trigger,
                    started_at=started_at,
                    finished_at=now,
                    counts={**counts, **fact_counts},
                    timings_ms=timings_ms,
                    worker=worker,
                )
                .on_conflict_do_nothing(index_elements=["batch_id"])
            )
            s.execute(update(b).where(b.c.id == batch.id).values(status="done", finished_at=now, error=None))
            # Delivered on commit only, so the indexer never wakes for work it cannot see.
            s.execute(text("SELECT pg_notify(:c, :p)"), {"c": OUTBOX_CHANNEL, "p": str(batch.id)})
            return True, fact_counts

    def fail_batch(self, batch_id: int, error: str, *, max_attempts: int) -> bool:
        """Record why a review failed; after `max_attempts` the batch is marked failed and left alone.

        Returns True when the batch was given up on.
        """
        b = batches
        with translate_errors(), self._sessions.begin() as s:
            status = s.scalar(
                update(b)
                .where(b.c.id == batch_id, b.c.status != "done")
                .values(
                    error=error[:2000],
                    status=case((b.c.attempts >= max_attempts, "failed"), else_=b.c.status),
                )
                .returning(b.c.status)
            )
            return status == "failed"

    # -- indexing -------------------------------------------------------------------------------

    def process_outbox(self, limit: int, apply: Callable[[list[IndexPoint], list[str]], None]) -> int:
        """Take up to `limit` outbox rows, hand the points' current state to `apply`, then delete the rows.

        `apply(upserts, deletes)` runs inside the transaction: if it raises, the rows stay for a retry.
        """
        o = index_outbox
        with translate_errors(), self._sessions.begin() as s:
            rows = s.execute(
                select(o.c.id, o.c.kind, o.c.ref_id)
                .order_by(o.c.id)
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
            upserts = _indexable_points(
                s, [i for k, i in refs if k == EPISODE], [i for k, i in refs if k == SEMANTIC]
            )
            found = {(p.payload["kind"], p.payload["ref_id"]) for p in upserts}
            deletes = [point_id(k, i) for k, i in refs if (k, i) not in found]
            apply(upserts, deletes)
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
        e = episodes
        with translate_errors(), self.engine.connect() as conn:
            ids = conn.scalars(select(e.c.id).where(e.c.status == "kept", e.c.embedding.is_not(None)))
            m = semantic_memories
            sids = conn.scalars(
                select(m.c.id).where(m.c.valid_to.is_(None), m.c.status == "kept", m.c.embedding.is_not(None))
            )
            return {point_id(EPISODE, i) for i in ids} | {point_id(SEMANTIC, i) for i in sids}

    # -- recall ---------------------------------------------------------------------------------

    def episodes_by_id(
        self,
        ids: Sequence[int],
        *,
        agent_id: str,
        user_id: str,
        as_of: datetime | None = None,
        history: bool = False,
    ) -> dict[int, EpisodeRow]:
        """Current rows for recall hits, limited to the caller's scope and what may be recalled.

        Unless `history`, an episode whose facts were all superseded (closed before `as_of`, or retracted)
        is left out: it would assert something that is no longer true.
        """
        sql = """
            SELECT e.id, e.turn_id, e.merged_turn_ids, e.session_id, e.content, e.ts, e.source, e.status, e.weight
            FROM episodes e
            WHERE e.id = ANY(:ids) AND e.agent_id = :agent AND e.user_id = :user AND e.status = 'kept'
        """
        if not history:
            sql += """
              AND NOT (
                EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                        AND e.turn_id = ANY(f.turn_ids))
                AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                        AND e.turn_id = ANY(f.turn_ids) AND f.retracted_at IS NULL
                        AND (f.valid_to IS NULL OR f.valid_to > coalesce(:as_of, now())))
              )
            """
        params = {"ids": list(ids), "agent": agent_id, "user": user_id, "as_of": as_of}
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.execute(text(sql), params)
            return {
                r.id: EpisodeRow(
                    r.id,
                    r.turn_id,
                    tuple(r.merged_turn_ids or ()),
                    r.session_id,
                    r.content,
                    r.ts,
                    r.source,
                    r.status,
                    r.weight,
                )
                for r in rows
            }

    def cold_memories(self, agent_id: str, user_id: str, *, limit: int) -> list[ColdRow]:
        """Cold storage of one scope (not in the vector index): episodes and open semantic memories."""
        sql = text(
            """
            (SELECT 'episode' AS kind, e.id, e.content AS text, e.embedding, e.base_weight, e.ts AS valid_from,
                    NULL::timestamptz AS valid_to, array_prepend(e.turn_id, e.merged_turn_ids) AS turn_ids,
                    e.session_id, e.source
             FROM episodes e
             WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'cold' AND e.embedding IS NOT NULL
             ORDER BY e.cold_since DESC NULLS LAST LIMIT :limit)
            UNION ALL
            (SELECT 'semantic', m.id, m.text, m.embedding, m.base_weight, m.valid_from, m.valid_to,
                    ARRAY(SELECT x FROM semantic_members sm JOIN episodes e2 ON e2.id = sm.episode_id,
                          unnest(array_prepend(e2.turn_id, e2.merged_turn_ids)) AS x WHERE sm.memory_id = m.id),
                    NULL, 'user'
             FROM semantic_memories m
             WHERE m.agent_id = :a AND m.user_id = :u AND m.status = 'cold' AND m.valid_to IS NULL
               AND m.embedding IS NOT NULL
             LIMIT :limit)
            """
        )
        with translate_errors(), self.engine.connect() as conn:
            return [
                ColdRow(
                    r.kind,
                    r.id,
                    r.text,
                    from_blob(r.embedding),
                    r.base_weight,
                    r.valid_from,
                    r.valid_to,
                    tuple(dict.fromkeys(r.turn_ids or ())),
                    r.session_id,
                    r.source,
                )
                for r in conn.execute(sql, {"a": agent_id, "u": user_id, "limit": limit})
            ]

    def facts(
        self,
        agent_id: str,
        user_id: str,
        *,
        entity: str | None = None,
        attribute: str | None = None,
        as_of: datetime | None = None,
        history: bool = False,
    ) -> list[dict[str, Any]]:
        with translate_errors(), self.engine.connect() as conn:
            return fact_chains.query_facts(
                conn, agent_id, user_id, entity=entity, attribute=attribute, as_of=as_of, history=history
            )

    # -- progress and stats ---------------------------------------------------------------------

    def turn_progress(
        self, turn_ids: Sequence[str], agent_ids: Sequence[str] | None = None
    ) -> dict[str, int]:
        """How far these turns got: received (an episode exists), reviewed, indexed (nothing left in the outbox).

        `agent_ids`: count only the turns of these agents (a key's readable spaces); None counts all."""
        sql = text(
            """
            SELECT count(*) AS received,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL) AS reviewed,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM index_outbox o WHERE o.kind = 'episode' AND o.ref_id = e.id)) AS indexed
            FROM episodes e
            WHERE e.turn_id = ANY(:ids) AND (CAST(:agents AS text[]) IS NULL OR e.agent_id = ANY(:agents))
            """
        )
        agents = None if agent_ids is None else list(agent_ids)
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(sql, {"ids": list(turn_ids), "agents": agents}).one()
            return {"received": row.received, "reviewed": row.reviewed, "indexed": row.indexed}

    def batch_progress(
        self, batch_ids: Sequence[int], agent_ids: Sequence[str] | None = None
    ) -> dict[str, int]:
        """Of these batches, how many exist and how many are done (`agent_ids` as in turn_progress)."""
        b = batches
        query = select(b.c.status, func.count()).where(b.c.id.in_(list(batch_ids)))
        if agent_ids is not None:
            query = query.where(b.c.agent_id.in_(list(agent_ids)))
        with translate_errors(), self.engine.connect() as conn:
            rows: dict[str, int] = dict(conn.execute(query.group_by(b.c.status)).all())
        return {"total": sum(rows.values()), "done": rows.get("done", 0)}

    def stats(self) -> dict[str, Any]:
        with translate_errors(), self.engine.connect() as conn:
            by_status: dict[str, int] = dict(
                conn.execute(text("SELECT status, count(*) FROM episodes GROUP BY status")).all()
            )
            batch_counts: dict[str, int] = dict(
                conn.execute(text("SELECT status, count(*) FROM batches GROUP BY status")).all()
            )
            facts = conn.execute(
                text(
                    "SELECT count(*) FILTER (WHERE valid_to IS NULL), count(*) FILTER (WHERE valid_to IS NOT NULL) "
                    "FROM facts"
                )
            ).one()
            semantic = conn.scalar(select(func.count()).select_from(semantic_memories))
            review_count = conn.scalar(select(func.count()).select_from(reviews))
        outbox, outbox_age = self.outbox_lag()
        return {
            "episodes": {"total": sum(by_status.values()), **by_status},
            "semantic_memories": int(semantic or 0),
            "facts": {"open": int(facts[0]), "closed": int(facts[1])},
            "batches": batch_counts,
            "reviews": int(review_count or 0),
            "outbox": {"pending": outbox, "oldest_age_s": round(outbox_age, 3)},
        }


@dataclass(frozen=True, slots=True)
class ReviewInputs:
    episodes: list[BatchEpisode]
    memories: list[Memory]  # the scope's kept, embedded episodes outside the batch, most recent first
    # Full reviews only (empty otherwise):
    points: list[Point] = field(default_factory=list)  # what may be clustered, most recent first
    fact_groups: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    open_memories: list[OpenMemory] = field(default_factory=list)


def _batch_episodes(conn: Connection, batch: BatchInfo) -> list[BatchEpisode]:
    e = episodes
    column = e.c.full_batch_id if batch.kind == "full" else e.c.light_batch_id
    q = select(
        e.c.id,
        e.c.turn_id,
        e.c.session_id,
        e.c.role,
        e.c.source,
        e.c.content,
        e.c.ts,
        e.c.metadata,
        e.c.status,
        e.c.embedding,
        e.c.quarantine,
    ).where(column == batch.id)
    return [BatchEpisode(**r._asdict()) for r in conn.execute(q.order_by(e.c.ts, e.c.id))]


def _scope_memories(
    conn: Connection, agent_id: str, user_id: str, exclude: Sequence[int], limit: int
) -> list[Memory]:
    e = episodes
    q = (
        select(e.c.id, e.c.ts, e.c.embedding)
        .where(
            e.c.agent_id == agent_id,
            e.c.user_id == user_id,
            e.c.status == "kept",
            e.c.embedding.is_not(None),
            e.c.id.not_in(list(exclude) or [-1]),
        )
        .order_by(e.c.ts.desc(), e.c.id.desc())
        .limit(limit)
    )
    return [Memory(r.id, r.ts, from_blob(r.embedding)) for r in conn.execute(q)]


# An episode whose every fact was superseded would revive an outdated value if clustered.
_SUPERSEDED = """
    EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
            AND e.turn_id = ANY(f.turn_ids))
    AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
            AND e.turn_id = ANY(f.turn_ids) AND f.retracted_at IS NULL AND f.valid_to IS NULL)
"""

_CLUSTER_INPUTS = text(
    f"""
    SELECT e.id, e.turn_id, e.merged_turn_ids, e.content, e.ts, e.embedding,
           coalesce((e.quality->>'total')::float, 0.5) AS importance
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'kept' AND e.embedding IS NOT NULL
      AND NOT (e.id = ANY(:exclude))
      AND NOT ({_SUPERSEDED})
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)

# The rows of _scope_memories and _CLUSTER_INPUTS at once: whether a row may be clustered is a column.
_SCOPE_EPISODES = text(
    f"""
    SELECT e.id, e.turn_id, e.merged_turn_ids, e.content, e.ts, e.embedding,
           coalesce((e.quality->>'total')::float, 0.5) AS importance,
           NOT ({_SUPERSEDED}) AS clusterable
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'kept' AND e.embedding IS NOT NULL
      AND NOT (e.id = ANY(:exclude))
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)


def _point(r: Any) -> Point:
    return Point(
        r.id,
        (r.turn_id, *(r.merged_turn_ids or ())),
        r.content,
        r.ts,
        from_blob(r.embedding),
        float(r.importance),
    )


def _cluster_inputs(
    conn: Connection, agent_id: str, user_id: str, exclude: Sequence[int], limit: int
) -> list[Point]:
    rows = conn.execute(
        _CLUSTER_INPUTS, {"a": agent_id, "u": user_id, "exclude": list(exclude), "limit": limit}
    )
    return [_point(r) for r in rows]


def _current_fact_groups(
    conn: Connection, agent_id: str, user_id: str, *, min_turns: int
) -> list[tuple[str, tuple[str, ...]]]:
    sql = text(
        """
        SELECT entity || '/' || attribute || '=' || lower(value) AS key, turn_ids FROM facts
        WHERE agent_id = :a AND user_id = :u AND valid_to IS NULL AND retracted_at IS NULL
          AND cardinality(turn_ids) >= :n
        """
    )
    return [
        (r.key, tuple(r.turn_ids)) for r in conn.execute(sql, {"a": agent_id, "u": user_id, "n": min_turns})
    ]


def _open_semantic(conn: Connection, agent_id: str, user_id: str) -> list[OpenMemory]:
    sql = text(
        """
        SELECT m.id, m.embedding, array_agg(sm.episode_id) AS members
        FROM semantic_memories m JOIN semantic_members sm ON sm.memory_id = m.id
        WHERE m.agent_id = :a AND m.user_id = :u AND m.valid_to IS NULL
        GROUP BY m.id, m.embedding
        """
    )
    return [
        OpenMemory(r.id, frozenset(r.members), from_blob(r.embedding))
        for r in conn.execute(sql, {"a": agent_id, "u": user_id})
    ]


def hash_ref(kind: str, ref_id: int) -> int:
    """A stable signed 64-bit advisory-lock key for one point."""
    return (ref_id << 1 | (1 if kind == SEMANTIC else 0)) & 0x7FFF_FFFF_FFFF_FFFF


_INDEXABLE = text(
    """
    SELECT 'episode' AS kind, id, agent_id, user_id, embedding
    FROM episodes WHERE id = ANY(:episodes) AND status = 'kept' AND embedding IS NOT NULL
    UNION ALL
    SELECT 'semantic', id, agent_id, user_id, embedding
    FROM semantic_memories
    WHERE id = ANY(:semantic) AND status = 'kept' AND valid_to IS NULL AND embedding IS NOT NULL
    """
)


# One statement of column arrays, whatever the number of turns: its text never changes, so it is parsed
# and planned once per connection. An executemany sent multi-row INSERTs whose text grew with the rows
# (5,000 placeholders for 500 turns), which the driver re-parsed every time: most of the scheduler's
# CPU per turn.
_INGEST = text(
    """
    INSERT INTO episodes (turn_id, agent_id, user_id, session_id, role, content, ts, source, metadata, priority)
    SELECT * FROM unnest(
        CAST(:turn_id AS text[]), CAST(:agent_id AS text[]), CAST(:user_id AS text[]),
        CAST(:session_id AS text[]), CAST(:role AS varchar[]), CAST(:content AS text[]),
        CAST(:ts AS timestamptz[]), CAST(:source AS varchar[]), CAST(:metadata AS jsonb[]),
        CAST(:priority AS smallint[])
    )
    ON CONFLICT (turn_id) DO NOTHING
    RETURNING id
    """
)


def _indexable_points(s: Session, episode_ids: list[int], semantic_ids: list[int]) -> list[IndexPoint]:
    """The current state of the points that belong in the index; anything else asked about is deleted.

    The payload holds what the index filters by (the scope) and what maps a hit back to its row (kind,
    ref_id); nothing that changes while the point stays (weight, status), which would go stale or cost a
    rewrite each time. Recall reads the rest from PostgreSQL, where it is current.
    """
    rows = s.execute(_INDEXABLE, {"episodes": episode_ids, "semantic": semantic_ids})
    return [
        IndexPoint(
            id=point_id(r.kind, r.id),
            vector=from_blob(r.embedding),  # the adapter checks and converts it once
            payload={"kind": r.kind, "ref_id": r.id, "agent_id": r.agent_id, "user_id": r.user_id},
        )
        for r in rows
    ]


def _unique_sessions(ends: Sequence[SessionEnd]) -> list[SessionEnd]:
    latest: dict[tuple[str, str, str], SessionEnd] = {}
    for end in ends:
        key = (end.agent_id, end.user_id, end.session_id)
        if key not in latest or end.ts > latest[key].ts:
            latest[key] = end
    return list(latest.values())
