"""A review's lease on its batch: a PostgreSQL advisory lock held for as long as the review runs.

Why: a worker that dies mid-review (SIGKILL, OOM, a lost host) leaves its batch `running`. Celery gives
the task back only after the broker's visibility timeout, which must exceed the longest review or a slow
review is delivered twice; so the wait after a crash was long (15-20 minutes with the old settings).
The lock lives on a connection of its own: when the worker process dies the kernel closes that socket,
the server ends the session and the lock is gone at once, with no clock, heartbeat thread or table to
keep. The reconcile job (beat) re-sends every `running` batch whose lock nobody holds
(`ORPHANED_RUNNING` in scheduling_sql.py), so a dead worker's batch runs again within a reconcile
interval, while a live worker's long review is never sent to a second worker: a second delivery finds
the lock taken and leaves the batch to its holder.

A host that vanishes without closing its sockets is found by TCP keepalives, asked of both ends, in
about KEEPALIVE_IDLE_S + KEEPALIVE_COUNT x KEEPALIVE_INTERVAL_S seconds. Needs a session-level
connection: not through a transaction-pooling PgBouncer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg

from pipeline.core.errors import StoreUnavailable

# classid of the advisory locks taken for batches ('HS'); objid is the batch id (mod 2^31-1: int4 key).
LEASE_CLASS = 0x4853
LEASE_MOD = 2_147_483_647
KEEPALIVE_IDLE_S = 20
KEEPALIVE_INTERVAL_S = 10
KEEPALIVE_COUNT = 3


def lease_key(batch_id: int) -> int:
    return batch_id % LEASE_MOD


@contextlib.contextmanager
def batch_lease(dsn: str, batch_id: int) -> Iterator[bool]:
    """Hold the batch's lease while the block runs; yields False when another review holds it."""
    try:
        conn = psycopg.connect(
            dsn,
            autocommit=True,
            connect_timeout=10,
            keepalives=1,
            keepalives_idle=KEEPALIVE_IDLE_S,
            keepalives_interval=KEEPALIVE_INTERVAL_S,
            keepalives_count=KEEPALIVE_COUNT,
            application_name=f"hindsight-lease-{batch_id}",
        )
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL unavailable (batch lease): {exc}") from exc
    with conn:
        try:
            # The server probes an idle client too: its end is the one that must let the lock go.
            conn.execute(f"SET tcp_keepalives_idle = {KEEPALIVE_IDLE_S}")
            conn.execute(f"SET tcp_keepalives_interval = {KEEPALIVE_INTERVAL_S}")
            conn.execute(f"SET tcp_keepalives_count = {KEEPALIVE_COUNT}")
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (LEASE_CLASS, lease_key(batch_id))
            ).fetchone()
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL unavailable (batch lease): {exc}") from exc
        held = bool(row and row[0])
        try:
            yield held
        finally:
            # Closing the connection releases the lock too, but the server lets it go only once the
            # backend has exited, a moment after the client hung up: a reconcile in between would see a
            # finished review's batch as live. So unlock now; on a lost link the close does it.
            if held:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LEASE_CLASS, lease_key(batch_id)))


# A `running` batch whose lease no session holds: its worker died. `b` is the batches row.
ORPHANED_RUNNING = f"""
    b.status = 'running'
    AND b.started_at < now() - make_interval(secs => :lease_grace)
    AND NOT EXISTS (
        SELECT 1 FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid::bigint = {LEASE_CLASS} AND l.objid::bigint = b.id % {LEASE_MOD}
    )
"""
