"""The indexer: drains index_outbox into the vector index (the relay half of the outbox pattern).

A dedicated loop rather than a Celery queue: the outbox table already is a durable queue, and the
embedded Qdrant engine can be opened by one process only, so in embedded mode the loop runs in the
API process beside recall. It wakes on PostgreSQL NOTIFY (sent on commit by a review) and polls as
a fallback, so a lost notification delays indexing by at most `poll_s`.
"""

from __future__ import annotations

import os
import select
import threading
from collections.abc import Sequence

import psycopg

from pipeline.adapters.postgres.outbox_sql import OUTBOX_CHANNEL
from pipeline.core.errors import HindsightError
from pipeline.core.logging import get_logger
from pipeline.core.models import EPISODE
from pipeline.core.ports import Embedder, IndexPoint, OutboxStore, VectorIndex

log = get_logger(__name__)
# Longest wait between reconnects while PostgreSQL is down: a longer one only delays recovery.
MAX_BACKOFF_S = 10.0
UPSERT_SLICE = 1024  # points per upsert call


def drain_once(repo: OutboxStore, index: VectorIndex, *, limit: int, embedder: Embedder | None = None) -> int:
    """Apply up to `limit` outbox rows to the index. Returns how many rows were applied."""

    def apply(upserts: Sequence[IndexPoint], deletes: Sequence[str], gone: Sequence[int] = ()) -> None:
        # In slices: a pass of long episodes can hold tens of thousands of passage points, and an adapter
        # converts each batch it is given to plain lists at once.
        for start in range(0, len(upserts), UPSERT_SLICE):
            index.upsert(upserts[start : start + UPSERT_SLICE])
        if deletes:
            index.delete(deletes)
        if gone:  # the passages of episodes that left the index (their ids are not known here)
            index.delete_refs(EPISODE, gone)

    return repo.process_outbox(limit, apply, embedder)


def drain_all(repo: OutboxStore, index: VectorIndex, *, limit: int, embedder: Embedder | None = None) -> int:
    """Drain until a pass takes fewer than `limit` rows: the outbox held no more when it looked (rows
    queued since come with their own NOTIFY). Draining until a pass found nothing cost every wake-up
    one more transaction."""
    total = 0
    while True:
        n = drain_once(repo, index, limit=limit, embedder=embedder)
        total += n
        if n < limit:
            return total


class Indexer:
    """Runs `drain_all` whenever the outbox may have work, until `stop()`. With an `embedder` it also embeds
    the turns recallable before their review (read your writes), which arrive without a vector."""

    def __init__(
        self,
        repo: OutboxStore,
        index: VectorIndex,
        *,
        dsn: str,
        poll_s: float,
        batch: int,
        embedder: Embedder | None = None,
    ) -> None:
        self.repo = repo
        self.index = index
        self.embedder = embedder
        self.dsn = dsn
        self.poll_s = poll_s
        self.batch = batch
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None
        # A pipe that stop() writes a byte to, so a wait for a NOTIFY ends at once instead of at the end of
        # its poll slice (up to 0.5 s of every API shutdown). Opened and closed by run(), under the lock, so
        # a late stop() never writes to a descriptor number the process has since given to another file.
        self._wake: tuple[int, int] | None = None
        self._wake_lock = threading.Lock()

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="indexer", daemon=True)
        self.thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        with self._wake_lock:
            if self._wake is not None:
                os.write(self._wake[1], b"x")
        if self.thread is not None:
            self.thread.join(timeout_s)

    def run(self) -> None:
        log.info("indexer.started", poll_s=self.poll_s)
        backoff = 0.5
        wake_r, wake_w = os.pipe()
        with self._wake_lock:
            self._wake = (wake_r, wake_w)
        try:
            while not self._stop.is_set():
                try:
                    with psycopg.connect(self.dsn, autocommit=True) as conn:
                        conn.execute(f"LISTEN {OUTBOX_CHANNEL}")
                        backoff = 0.5
                        while not self._stop.is_set():
                            n = drain_all(self.repo, self.index, limit=self.batch, embedder=self.embedder)
                            if n:
                                log.info("indexer.drained", rows=n)
                            self._wait(conn, wake_r)
                except (psycopg.Error, HindsightError, OSError) as exc:
                    log.warning("indexer.retry", error=str(exc)[:300], backoff_s=backoff)
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
        finally:
            with self._wake_lock:
                self._wake = None
                os.close(wake_r)
                os.close(wake_w)
        log.info("indexer.stopped")

    def _wait(self, conn: psycopg.Connection[object], wake_r: int) -> None:
        # Wait for a NOTIFY on the raw socket, or for stop()'s wake-up byte; poll slices bound the wait.
        waited = 0.0
        slice_s = min(self.poll_s, 0.5)
        while waited < self.poll_s and not self._stop.is_set():
            ready, _, _ = select.select([conn.fileno(), wake_r], [], [], slice_s)
            if conn.fileno() in ready:
                for _ in conn.notifies(timeout=0):
                    pass
                return
            if ready:  # the wake-up byte: stop() was called
                return
            waited += slice_s
