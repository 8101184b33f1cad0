"""The LLM budget shared through the real Redis, and the optional cold-storage retention purge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import redis
from sqlalchemy import text

from pipeline.adapters.llm import RedisBudget
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.repository import Repository
from tests.integration.harness import REDIS_URL, Stack

pytestmark = pytest.mark.integration


def test_workers_share_one_daily_llm_budget_through_redis(clean: None) -> None:
    day = datetime(2026, 5, 1, 12, tzinfo=UTC)
    client = redis.Redis.from_url(REDIS_URL)
    workers = [RedisBudget(client, daily_calls=3, daily_tokens=1000, clock=lambda: day) for _ in range(2)]
    granted = [workers[i % 2].try_acquire() for i in range(5)]
    assert granted == [True, True, True, False, False]
    workers[0].record(400)
    assert workers[1].remaining() == {"calls": 0, "tokens": 600}
    # A new UTC day starts a new budget; yesterday's keys expire on their own.
    tomorrow = RedisBudget(client, daily_calls=3, daily_tokens=1000, clock=lambda: day + timedelta(days=1))
    assert tomorrow.try_acquire()
    assert all(0 < client.ttl(k) <= 2 * 86400 for k in client.keys("hindsight:llm:budget:*"))


def test_retention_purges_only_what_stayed_cold_long_enough(stack: Stack, repo: Repository) -> None:
    stack.start_scheduler()
    ids = [
        stack.client.write_memory("agent-a", "ret", "s1", "user", c, turn_id=f"r-{i}")
        for i, c in enumerate(["I live in Oslo.", "My cat is called Pixel.", "I play chess on Sundays."])
    ]
    stack.client.end_session("agent-a", "ret", "s1")
    stack.wait_indexed(ids)
    long_ago = datetime.now(UTC) - timedelta(days=400)
    with repo.engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE episodes SET status = 'cold', cold_reason = 'decay', cold_since = :t "
                "WHERE turn_id IN ('r-0', 'r-1')"
            ),
            {"t": long_ago},
        )
        conn.execute(text("UPDATE episodes SET cold_since = now() WHERE turn_id = 'r-1'"))
    purged = ForgettingStore(repo.engine).purge_cold(older_than=datetime.now(UTC) - timedelta(days=365))
    assert purged == 1
    with repo.engine.connect() as conn:
        left = dict(conn.execute(text("SELECT turn_id, status FROM episodes")).all())
        audit = conn.execute(text("SELECT actor, action FROM memory_audit")).all()
    assert left == {"r-1": "cold", "r-2": "kept"}
    assert [tuple(a) for a in audit] == [("retention", "hard_forget")]
