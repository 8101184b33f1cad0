"""The scrape-time aggregates behind /metrics, over rows as reviews and dispatches leave them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, delete, insert

from pipeline.adapters.postgres.metrics_sql import (
    DURATION_BUCKETS_S,
    SIZE_BUCKETS,
    ReviewMetricsReader,
    read_review_metrics,
)
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import batches, index_outbox, reviews

pytestmark = pytest.mark.integration
T0 = datetime(2026, 5, 1, tzinfo=UTC)

# (kind, trigger, seconds, episodes, llm_calls, llm_failures)
REVIEWS = [
    ("light", "session_end", 0.3, 4, 0, 0),
    ("light", "idle", 2.0, 12, 2, 1),
    ("full", "batch_size", 7.5, 30, 5, 0),
]


def _review(
    conn: Connection,
    batch_id: int,
    kind: str,
    trigger: str,
    started: datetime,
    seconds: float,
    size: int,
    calls: int = 0,
    failures: int = 0,
    *,
    with_batch: bool = True,
) -> None:
    if with_batch:
        conn.execute(
            insert(batches).values(
                id=batch_id,
                agent_id="a",
                user_id="u",
                kind=kind,
                trigger=trigger,
                status="done",
                started_at=started,
            )
        )
    conn.execute(
        insert(reviews).values(
            batch_id=batch_id,
            agent_id="a",
            user_id="u",
            kind=kind,
            trigger=trigger,
            started_at=started,
            finished_at=started + timedelta(seconds=seconds),
            counts={
                "episodes": size,
                "llm_calls": calls,
                "llm_failures": failures,
                "llm_fallbacks": failures,
            },
            timings_ms={},
        )
    )


def test_histograms_and_counters_come_from_the_review_rows(clean: None, repo: Repository) -> None:
    with repo.engine.begin() as conn:
        for i, (kind, trigger, seconds, size, calls, failures) in enumerate(REVIEWS, start=1):
            conn.execute(
                insert(batches).values(
                    id=i,
                    agent_id="a",
                    user_id="u",
                    kind=kind,
                    trigger=trigger,
                    status="done",
                    started_at=T0,
                    # The worker may finish before the dispatcher stamps the batch: it stays unstamped.
                    dispatched_at=None if i == 1 else T0,
                )
            )
            _review(conn, i, kind, trigger, T0, seconds, size, calls, failures, with_batch=False)
        # claimed but never dispatched: not counted as dispatched
        conn.execute(insert(batches).values(id=9, agent_id="a", user_id="u", kind="light", trigger="manual"))
        conn.execute(insert(index_outbox).values(kind="episode", ref_id=1, created_at=T0))

    m = read_review_metrics(repo.engine)

    assert m.dispatched == {("session_end", "light"): 1, ("idle", "light"): 1, ("batch_size", "full"): 1}
    assert m.batches_by_status == {"done": 3, "pending": 1}
    light = m.duration["light"]
    assert light.count == 2
    assert light.total == pytest.approx(2.3)
    expected = [sum(s <= b for _, _, s, *_ in REVIEWS[:2]) for b in DURATION_BUCKETS_S] + [2]
    assert list(light.buckets) == expected
    assert m.size["full"].buckets[SIZE_BUCKETS.index(30)] == 1
    assert m.size["full"].buckets[SIZE_BUCKETS.index(10)] == 0
    assert m.size["light"].total == 16
    assert m.llm == {"llm_calls": 7, "llm_failures": 1, "llm_fallbacks": 1}
    assert m.outbox_pending == 1
    assert m.outbox_oldest_s > (datetime.now(UTC) - T0).total_seconds() - 60


def test_settled_review_rows_are_read_once_and_new_ones_every_scrape(clean: None, repo: Repository) -> None:
    reader = ReviewMetricsReader(repo.engine, settle_s=300)
    now = datetime.now(UTC)
    with repo.engine.begin() as conn:
        for i, (kind, trigger, seconds, size, calls, failures) in enumerate(REVIEWS, start=1):
            _review(conn, i, kind, trigger, T0, seconds, size, calls, failures)  # long settled
        _review(conn, 4, "light", "idle", now, 0.5, 3)  # finished just now: not settled yet
    first = reader.read()
    assert first.duration == read_review_metrics(repo.engine).duration
    assert first.duration["light"].count == 3

    with repo.engine.begin() as conn:
        _review(conn, 5, "full", "batch_size", now, 20.0, 30, calls=4)
        # Reviews are never deleted; removing a settled row here shows the reader does not rescan it,
        # while the unsettled one is still read live each scrape.
        conn.execute(delete(reviews).where(reviews.c.batch_id.in_([1, 4])))
    second = reader.read()
    assert second.duration["light"].count == 2  # batch 1 kept from the fold, batch 4 gone from the live read
    assert second.duration["full"].count == 2
    assert second.size["full"].total == 60
    assert second.llm["llm_calls"] == 7 + 4
    scratch = read_review_metrics(repo.engine)
    assert scratch.duration["light"].count == 1  # from scratch: only batch 2 is left
