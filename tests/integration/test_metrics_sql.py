"""The scrape-time aggregates behind /metrics, over rows as reviews and dispatches leave them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from pipeline.adapters.postgres.metrics_sql import DURATION_BUCKETS_S, SIZE_BUCKETS, read_review_metrics
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
            conn.execute(
                insert(reviews).values(
                    batch_id=i,
                    agent_id="a",
                    user_id="u",
                    kind=kind,
                    trigger=trigger,
                    started_at=T0,
                    finished_at=T0 + timedelta(seconds=seconds),
                    counts={
                        "episodes": size,
                        "llm_calls": calls,
                        "llm_failures": failures,
                        "llm_fallbacks": failures,
                    },
                    timings_ms={},
                )
            )
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
