"""The scheduler's SQL: turns in (ingest), what waits for review (backlog), batches claimed and dispatched."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.errors import LockNotAvailable
from psycopg.types.json import Jsonb
from sqlalchemy import BigInteger, and_, cast, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError

from pipeline.adapters.postgres.batch_lease import ORPHANED_RUNNING
from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.outbox_sql import OUTBOX_CHANNEL
from pipeline.adapters.postgres.store import SqlStore
from pipeline.adapters.postgres.tables import batches, episodes, sessions
from pipeline.core.models import Dispatch, Scope, ScopeBacklog, SessionBacklog, SessionEnd, Turn

# How long a claim waits for a pending row another transaction holds before it skips it (see `claim`).
CLAIM_LOCK_WAIT_S = 0.5

# priority * URGENCY_SHIFT + id orders by priority, then id, for ids below 2**40 (a trillion episodes).
URGENCY_SHIFT = 2**40


class SchedulingQueries(SqlStore):
    """What the scheduler does in PostgreSQL: store turns, read the backlog, claim and dispatch batches."""

    # -- ingest ---------------------------------------------------------------------------------

    def ingest(
        self,
        turns: Sequence[Turn],
        session_ends: Sequence[SessionEnd],
        prescreened: Sequence[bool] | None = None,
    ) -> int:
        """Store turns as pending episodes (a turn_id its scope has seen before is skipped) and mark sessions ended.

        `prescreened[i]`: the write-side injection screen passed turns[i], so it is recallable before its
        review; each new one is queued for the indexer (which embeds it) in the same transaction. Without
        it no turn is (they wait for their review). Returns how many episodes were new.
        """
        with translate_errors(), self._sessions.begin() as s:
            inserted = 0
            if turns:
                flags = list(prescreened) if prescreened is not None else [False] * len(turns)
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
                    "prescreened": flags,
                }
                rows = s.execute(_INGEST, columns).all()
                inserted = len(rows)
                early = [r.id for r in rows if r.prescreened]
                if early:
                    s.execute(_QUEUE_EARLY, {"ids": early})
                    s.execute(text("SELECT pg_notify(:c, 'ingest')"), {"c": OUTBOX_CHANNEL})
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

    def backlog(self, scope: Scope | None = None) -> list[ScopeBacklog]:
        """Per scope, what is waiting for review (input to `scheduler.policy.decide`); one scope's only when
        given (a review request for it looks again while it waits, and needs no other scope's counts)."""
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
        if scope is not None:
            q = q.where(e.c.agent_id == scope.agent_id, e.c.user_id == scope.user_id)
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

        Concurrent schedulers claim disjoint episodes: a row another claim holds is waited for, and once
        that claim commits PostgreSQL re-checks it (claimed now: left out). The wait is short because the
        other holders are short: the indexer holds just-stored turns while it writes their embeddings, and
        a claim that skipped them split a session's review in two batches (the rest went in the next
        tick's). Past CLAIM_LOCK_WAIT (a long review writing its rows, say) the claim skips what is still
        held instead, as it always did; and as the lock wait ends before PostgreSQL looks for a deadlock
        (1 s), a wait never becomes one.
        """
        with translate_errors():
            try:
                return self._claim(d, min_count=min_count, limit=limit, wait=True)
            except DBAPIError as exc:
                if not isinstance(exc.orig, LockNotAvailable):
                    raise
                return self._claim(d, min_count=min_count, limit=limit, wait=False)

    def _claim(self, d: Dispatch, *, min_count: int, limit: int, wait: bool) -> int | None:
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
        with self._sessions.begin() as s:
            if wait:
                s.execute(text(f"SET LOCAL lock_timeout = '{int(CLAIM_LOCK_WAIT_S * 1000)}ms'"))
            ids = list(
                s.scalars(
                    select(e.c.id)
                    .where(*where)
                    .order_by(e.c.priority, e.c.id)
                    .limit(limit)
                    .with_for_update(skip_locked=not wait)
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

    def stalled_batches(
        self, *, undispatched_s: float, unfinished_s: float, lease_grace_s: float
    ) -> list[int]:
        """Batches to send again:
        - claimed but never dispatched for `undispatched_s` seconds (a scheduler died in between);
        - running, started over `lease_grace_s` seconds ago, and no review holds the batch's lease: the
          worker running it died (batch_lease.py). A running batch whose lease is held is a live
          review, however long: it is never sent to a second worker;
        - dispatched and not started for `unfinished_s` seconds (a task was lost on its way).

        The database clock decides, so processes with skewed clocks agree.
        """
        sql = text(
            f"""
            SELECT b.id FROM batches b
            WHERE (b.status = 'pending' AND b.created_at < now() - make_interval(secs => :undispatched))
               OR ({ORPHANED_RUNNING})
               OR (b.status = 'dispatched'
                   AND coalesce(b.dispatched_at, b.created_at) < now() - make_interval(secs => :unfinished))
            ORDER BY b.id LIMIT 1000
            """
        )
        params = {"undispatched": undispatched_s, "unfinished": unfinished_s, "lease_grace": lease_grace_s}
        with translate_errors(), self.engine.connect() as conn:
            return [int(r) for r in conn.scalars(sql, params)]

    def in_flight_by_scope(self) -> dict[Scope, int]:
        """Episodes per scope in batches claimed, dispatched or running: the scheduler gives a scope a new
        batch only while they stay within its share (scheduler.policy.decide's `in_flight`)."""
        sql = text(
            "SELECT agent_id, user_id, sum(episode_count) AS n FROM batches"
            " WHERE status IN ('pending', 'dispatched', 'running') GROUP BY 1, 2"
        )
        with translate_errors(), self.engine.connect() as conn:
            return {Scope(r.agent_id, r.user_id): int(r.n) for r in conn.execute(sql)}

    def give_up_exhausted(self, *, max_attempts: int, lease_grace_s: float) -> list[int]:
        """Mark failed every orphaned running batch (no review holds its lease) started `max_attempts`
        times: its worker died in each (killed for its memory, say), so no review got to record a failure
        and count it. Without this, reconcile re-sent it for ever. Returns the batch ids given up."""
        sql = text(
            f"""
            UPDATE batches b SET status = 'failed',
                error = left('worker lost during the review ' || b.attempts || ' times; last error: '
                             || coalesce(b.error, 'none'), 2000)
            WHERE ({ORPHANED_RUNNING}) AND b.attempts >= :max_attempts
            RETURNING b.id
            """
        )
        params = {"lease_grace": lease_grace_s, "max_attempts": max_attempts}
        with translate_errors(), self._sessions.begin() as s:
            return sorted(int(r) for r in s.scalars(sql, params))

    def given_up(self, batch_id: int) -> bool:
        """Whether the batch was given up (status failed): a late delivery of it (a retry's countdown, a
        broker redelivery) must not start it again; only an operator's requeue does."""
        with translate_errors(), self.engine.connect() as conn:
            status = conn.scalar(text("SELECT status FROM batches WHERE id = :b"), {"b": batch_id})
            return status == "failed"

    def requeue_failed(self, scope: Scope | None = None) -> list[int]:
        """An operator's second chance for given-up batches (of one scope, or all): back to pending with
        their attempts reset and their episodes still theirs; the caller dispatches them. The last error
        stays in `error` until the batch is done."""
        sql = text(
            """
            UPDATE batches SET status = 'pending', attempts = 0, created_at = now(), dispatched_at = NULL,
                error = left('requeued after: ' || coalesce(error, 'none'), 2000)
            WHERE status = 'failed'
              AND (CAST(:a AS text) IS NULL OR (agent_id = :a AND user_id = :u))
            RETURNING id
            """
        )
        params = {"a": scope.agent_id if scope else None, "u": scope.user_id if scope else None}
        with translate_errors(), self._sessions.begin() as s:
            return sorted(int(r) for r in s.scalars(sql, params))


# One statement of column arrays, whatever the number of turns: its text never changes, so it is parsed
# and planned once per connection. An executemany sent multi-row INSERTs whose text grew with the rows
# (5,000 placeholders for 500 turns), which the driver re-parsed every time: most of the scheduler's
# CPU per turn.
_INGEST = text(
    """
    INSERT INTO episodes (turn_id, agent_id, user_id, session_id, role, content, ts, source, metadata, priority,
                          prescreened)
    SELECT * FROM unnest(
        CAST(:turn_id AS text[]), CAST(:agent_id AS text[]), CAST(:user_id AS text[]),
        CAST(:session_id AS text[]), CAST(:role AS varchar[]), CAST(:content AS text[]),
        CAST(:ts AS timestamptz[]), CAST(:source AS varchar[]), CAST(:metadata AS jsonb[]),
        CAST(:priority AS smallint[]), CAST(:prescreened AS boolean[])
    )
    ON CONFLICT (agent_id, user_id, turn_id) DO NOTHING
    RETURNING id, prescreened
    """
)

# A turn recallable before its review is also found by its meaning once the indexer has embedded it.
_QUEUE_EARLY = text(
    "INSERT INTO index_outbox (kind, ref_id, early) "
    "SELECT 'episode', id, true FROM unnest(CAST(:ids AS bigint[])) AS id"
)


def _unique_sessions(ends: Sequence[SessionEnd]) -> list[SessionEnd]:
    latest: dict[tuple[str, str, str], SessionEnd] = {}
    for end in ends:
        key = (end.agent_id, end.user_id, end.session_id)
        if key not in latest or end.ts > latest[key].ts:
            latest[key] = end
    return list(latest.values())
