"""The review's SQL: start a batch, read what it needs on one connection, write the outcome in one transaction."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, not_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from pipeline.adapters.postgres.agent_insights_sql import open_insight_of
from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.model_sql import check_vectors_by
from pipeline.adapters.postgres.outbox_sql import OUTBOX_CHANNEL
from pipeline.adapters.postgres.review_writes import write_review
from pipeline.adapters.postgres.store import SqlStore
from pipeline.adapters.postgres.tables import batches, episodes, reviews
from pipeline.core.review_records import (
    BatchEpisode,
    BatchInfo,
    ChainState,
    Memory,
    OpenMemory,
    OpenToolInsight,
    Point,
    ReviewInputs,
    ReviewWrite,
    Statement,
)
from pipeline.core.tool_calls import TOOL_INSIGHT_METHOD, TOOL_ROLE, ToolCall, tool_call_of
from pipeline.core.vectors import from_blob
from pipeline.review.dedup import TEXT_CHARS as DEDUP_TEXT_CHARS


class ReviewQueries(SqlStore):
    """A review's reads and its one write transaction (the ReviewStore port), and the failure record."""

    def start_batch(self, batch_id: int, now: datetime) -> BatchInfo | None:
        """Mark a batch running (attempts + 1). None when it is already done, given up, or does not exist.

        A given-up batch (status failed) starts again only after an operator's requeue sets it back to
        pending (`requeue_failed`): a late delivery (a retry's countdown, a broker redelivery) that slipped
        past the task's own check must not run it, nor count attempts past the limit.
        """
        b = batches
        with translate_errors(), self._sessions.begin() as s:
            row = s.execute(
                update(b)
                .where(b.c.id == batch_id, b.c.status.not_in(("done", "failed")))
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

    def review_inputs(
        self,
        batch: BatchInfo,
        *,
        memory_limit: int,
        cluster_limit: int,
        tool_call_limit: int = 20_000,
        statement_limit: int = 1000,
    ) -> ReviewInputs:
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
            statements, linked = _statements(conn, a, u, exclude, statement_limit)
            if batch.kind != "full":
                return ReviewInputs(
                    episodes,
                    _scope_memories(conn, a, u, exclude, memory_limit),
                    statements=statements,
                    linked=linked,
                )
            rows = conn.execute(
                _SCOPE_EPISODES, {"a": a, "u": u, "exclude": exclude, "limit": memory_limit}
            ).all()
            memories = [Memory(r.id, r.ts, from_blob(r.embedding), r.content) for r in rows]
            # A turn whose every fact was superseded joins no cluster (it would revive an outdated value),
            # but restated requests keep it as what was said before (issue 40): it comes flagged.
            points = [_point(r) for r in rows][:cluster_limit]
            if len(rows) == memory_limit and len(points) < cluster_limit:
                # The memory limit cut the scope short of enough points to cluster: read them on their own.
                points = _cluster_inputs(conn, a, u, exclude, cluster_limit)
            return ReviewInputs(
                episodes,
                memories,
                points,
                _current_fact_groups(conn, a, u, min_turns=1),
                _open_semantic(conn, a, u),
                _fact_attributes(
                    conn, a, u, [ep.turn_id for ep in episodes] + [t for p in points for t in p.turn_ids]
                ),
                _tool_calls(conn, a, u, tool_call_limit),
                _open_tool_insights(conn, a, u),
                statements,
                linked,
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
    ) -> list[tuple[ChainState, tuple[str, ...]]]:
        """Current facts stated in at least `min_turns` turns, with the turns that state them."""
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
            if self.vectors_by is not None:
                check_vectors_by(s.connection(), self.vectors_by)
            column = e.c.full_batch_id if batch.kind == "full" else e.c.light_batch_id
            member_ids = list(s.scalars(select(e.c.id).where(column == batch.id)))
            fact_counts = write_review(
                s, batch.agent_id, batch.user_id, member_ids, write, now, batch_id=batch.id
            )
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
        e.c.passages.is_not(None).label("has_passages"),
    ).where(column == batch.id)
    return [BatchEpisode(**r._asdict()) for r in conn.execute(q.order_by(e.c.ts, e.c.id))]


def _scope_memories(
    conn: Connection, agent_id: str, user_id: str, exclude: Sequence[int], limit: int
) -> list[Memory]:
    e = episodes
    q = (
        select(e.c.id, e.c.ts, e.c.embedding, func.left(e.c.content, DEDUP_TEXT_CHARS).label("content"))
        .where(
            e.c.agent_id == agent_id,
            e.c.user_id == user_id,
            e.c.status == "kept",
            e.c.embedding.is_not(None),
            e.c.id.not_in(list(exclude) or [-1]),
            not_(and_(e.c.role == TOOL_ROLE, e.c.metadata.has_key("tool"))),
        )
        .order_by(e.c.ts.desc(), e.c.id.desc())
        .limit(limit)
    )
    return [Memory(r.id, r.ts, from_blob(r.embedding), r.content) for r in conn.execute(q)]


# What update detection compares a batch with: the scope's kept statements of people and the assistant,
# most recent first (a long turn's head: a value is stated in its first sentences).
_STATEMENTS = text(
    """
    SELECT e.id, e.ts, e.role, e.metadata->>'speaker' AS speaker, left(e.content, 600) AS text,
           EXISTS (SELECT 1 FROM supersessions x WHERE x.old_episode_id = e.id AND x.undone_at IS NULL)
               AS superseded
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'kept' AND e.role IN ('user', 'assistant')
      AND NOT (e.id = ANY(:exclude))
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)
_LINKED = text(
    """
    SELECT old_episode_id, new_episode_id FROM supersessions
    WHERE old_episode_id = ANY(:ids) OR new_episode_id = ANY(:ids)
    """
)


def _statements(
    conn: Connection, agent_id: str, user_id: str, batch_ids: Sequence[int], limit: int
) -> tuple[list[Statement], frozenset[tuple[int, int]]]:
    params = {"a": agent_id, "u": user_id, "exclude": list(batch_ids), "limit": limit}
    rows = conn.execute(_STATEMENTS, params).all() if limit > 0 else []
    statements = [Statement(r.id, r.ts, r.role, r.speaker, r.text, r.superseded) for r in rows]
    linked = frozenset(
        (r.old_episode_id, r.new_episode_id) for r in conn.execute(_LINKED, {"ids": list(batch_ids)})
    )
    return statements, linked


# A call record (issue 30) is evidence for tool insights, not a memory to fold turns into or cluster.
_TOOL_CALL = "e.role = 'tool' AND e.metadata->>'tool' IS NOT NULL"

# An episode whose every fact was superseded would revive an outdated value if clustered: it comes flagged
# (Point.superseded), for restated requests to quote as no longer holding (issue 40), and joins no cluster.
_SUPERSEDED = """
    EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
            AND e.turn_id = ANY(f.turn_ids))
    AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
            AND e.turn_id = ANY(f.turn_ids) AND f.retracted_at IS NULL AND f.valid_to IS NULL)
"""

_CLUSTER_INPUTS = text(
    f"""
    SELECT e.id, e.turn_id, e.merged_turn_ids, e.content, e.ts, e.embedding,
           coalesce((e.quality->>'total')::float, 0.5) AS importance, e.role, e.session_id,
           EXISTS (SELECT 1 FROM supersessions x WHERE x.old_episode_id = e.id AND x.undone_at IS NULL)
               AS superseded,
           NOT ({_SUPERSEDED}) AS clusterable
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'kept' AND e.embedding IS NOT NULL
      AND NOT (e.id = ANY(:exclude)) AND NOT ({_TOOL_CALL})
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)

# The rows of _scope_memories and _CLUSTER_INPUTS at once: whether a row may be clustered is a column.
_SCOPE_EPISODES = text(
    f"""
    SELECT e.id, e.turn_id, e.merged_turn_ids, e.content, e.ts, e.embedding,
           coalesce((e.quality->>'total')::float, 0.5) AS importance, e.role, e.session_id,
           EXISTS (SELECT 1 FROM supersessions x WHERE x.old_episode_id = e.id AND x.undone_at IS NULL)
               AS superseded,
           NOT ({_SUPERSEDED}) AS clusterable
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'kept' AND e.embedding IS NOT NULL
      AND NOT (e.id = ANY(:exclude)) AND NOT ({_TOOL_CALL})
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
        r.role,
        r.session_id,
        bool(r.superseded) or not getattr(r, "clusterable", True),
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
) -> list[tuple[ChainState, tuple[str, ...]]]:
    """Current facts with the value each replaced (the latest closed version, corrections left out: a
    retracted value never held) and the turns that state them."""
    sql = text(
        """
        SELECT f.entity, f.attribute, f.value, f.valid_from, f.turn_ids, p.value AS previous, p.valid_to AS until
        FROM facts f
        LEFT JOIN LATERAL (
            SELECT o.value, o.valid_to FROM facts o
            WHERE o.agent_id = f.agent_id AND o.user_id = f.user_id AND o.entity = f.entity
              AND o.attribute = f.attribute AND o.retracted_at IS NULL AND o.valid_to IS NOT NULL
              AND o.valid_to <= f.valid_from AND lower(o.value) <> lower(f.value)
            ORDER BY o.valid_to DESC LIMIT 1
        ) p ON true
        WHERE f.agent_id = :a AND f.user_id = :u AND f.valid_to IS NULL AND f.retracted_at IS NULL
          AND cardinality(f.turn_ids) >= :n
        """
    )
    return [
        (ChainState(r.entity, r.attribute, r.value, r.valid_from, r.previous, r.until), tuple(r.turn_ids))
        for r in conn.execute(sql, {"a": agent_id, "u": user_id, "n": min_turns})
    ]


def _fact_attributes(
    conn: Connection, agent_id: str, user_id: str, turn_ids: Sequence[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """(entity/attribute, turn ids among `turn_ids`) for every believed fact those turns state. Closed
    versions too: "the budget was 50,000" is about the budget after the chain moved on. Only the turns a
    full review may cluster, through the GIN index on facts.turn_ids: not every fact of the scope."""
    if not turn_ids:
        return []
    sql = text(
        """
        SELECT f.entity || '/' || f.attribute AS key, array_agg(DISTINCT t) AS turn_ids
        FROM facts f CROSS JOIN LATERAL unnest(f.turn_ids) AS t
        WHERE f.turn_ids && CAST(:turns AS text[]) AND f.agent_id = :a AND f.user_id = :u
          AND f.retracted_at IS NULL AND t = ANY(CAST(:turns AS text[]))
        GROUP BY 1
        """
    )
    params = {"a": agent_id, "u": user_id, "turns": list(dict.fromkeys(turn_ids))}
    return [(r.key, tuple(r.turn_ids)) for r in conn.execute(sql, params)]


def _open_semantic(conn: Connection, agent_id: str, user_id: str) -> list[OpenMemory]:
    sql = text(
        """
        SELECT m.id, m.embedding, m.coherent, array_agg(sm.episode_id) AS members
        FROM semantic_memories m JOIN semantic_members sm ON sm.memory_id = m.id
        WHERE m.agent_id = :a AND m.user_id = :u AND m.valid_to IS NULL AND m.method <> :tool_insight
        GROUP BY m.id, m.embedding
        """
    )
    return [
        OpenMemory(r.id, frozenset(r.members), from_blob(r.embedding), bool(r.coherent))
        for r in conn.execute(sql, {"a": agent_id, "u": user_id, "tool_insight": TOOL_INSIGHT_METHOD})
    ]


# Every call the review may count: a forgotten, quarantined or rejected turn is no evidence.
_TOOL_CALLS = text(
    """
    SELECT e.id, e.turn_id, e.ts, e.metadata FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.role = 'tool' AND e.metadata->>'tool' IS NOT NULL
      AND e.status NOT IN ('forgotten', 'quarantined', 'rejected')
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)


def _tool_calls(conn: Connection, agent_id: str, user_id: str, limit: int) -> list[ToolCall]:
    rows = conn.execute(_TOOL_CALLS, {"a": agent_id, "u": user_id, "limit": limit})
    return [tool_call_of(r.id, r.turn_id, r.ts, r.metadata) for r in rows]


def _open_tool_insights(conn: Connection, agent_id: str, user_id: str) -> list[OpenToolInsight]:
    sql = text(
        """
        SELECT m.id, m.details FROM semantic_memories m
        WHERE m.agent_id = :a AND m.user_id = :u AND m.method = :tool_insight AND m.valid_to IS NULL
        """
    )
    rows = conn.execute(sql, {"a": agent_id, "u": user_id, "tool_insight": TOOL_INSIGHT_METHOD})
    return [open_insight_of(r.id, r.details) for r in rows]
