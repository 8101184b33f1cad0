"""The scheduler under a backlog (real PostgreSQL and Redis): urgent turns are claimed first, fairly across
scopes, and no more batches wait in the review queue than it may hold. Regressions from tests/faults."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.core.models import Turn
from pipeline.ingest.validation import utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tests.integration.harness import REDIS_URL

pytestmark = pytest.mark.integration

SOURCES = {"user": ("user", "user"), "agent": ("assistant", "agent"), "tool": ("tool", "tool")}


def turns(agent: str, user: str, source: str, n: int, start: int) -> list[Turn]:
    role, src = SOURCES[source]
    now = utcnow()
    return [
        Turn(
            f"{agent}-{user}-{source}-{i}",
            agent,
            user,
            "s1",
            role,
            f"turn {i} from the {source}",
            now + timedelta(seconds=start + i),
            src,
        )
        for i in range(n)
    ]


def runner(repo: Repository, dispatched: list[int], *, max_waiting: int, max_batch: int) -> SchedulerRunner:
    config = RunnerConfig(
        group="scheduler",
        read_count=100,
        block_ms=10,
        claim_idle_ms=60_000,
        tick_s=0.1,
        batch_size=30,
        idle_s=86_400,
        max_batch=max_batch,
        max_waiting=max_waiting,
    )
    stream = TurnStream(connect(REDIS_URL), "hindsight:turns", "hindsight:dead")
    return SchedulerRunner(repo=repo, stream=stream, dispatch=dispatched.append, config=config, clock=utcnow)


def claimed_priorities(repo: Repository, batch_id: int) -> set[int]:
    with repo.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT DISTINCT priority FROM episodes WHERE full_batch_id = %(b)s", {"b": batch_id}
        )
        return {int(r[0]) for r in rows}


def test_backlog_claims_user_turns_first_fairly_and_caps_the_queue(
    clean: None, repo: Repository, unsent_batches: None
) -> None:
    # Tool turns arrive first in scope A; both scopes have more user turns than one batch takes.
    repo.ingest(
        turns("a", "u", "tool", 60, 0)
        + turns("a", "u", "user", 100, 100)
        + turns("b", "u", "user", 100, 300),
        [],
    )
    dispatched: list[int] = []
    r = runner(repo, dispatched, max_waiting=3, max_batch=40)

    first = r.tick()
    assert len(first) == 2  # one per scope; both most urgent (user) with A's oldest user turn first
    assert all(claimed_priorities(repo, b) == {1} for b in first)
    assert len(r.tick()) == 1  # room for one more
    assert repo.waiting_batches() == 3
    assert r.tick() == []  # the queue is full: the rest waits in PostgreSQL, where priorities apply
    assert len(dispatched) == 3
    # Every claim so far took user turns only, though A's tool turns arrived before any user turn.
    assert all(claimed_priorities(repo, b) == {1} for b in dispatched)
    with repo.engine.connect() as conn:
        scopes = [row[0] for row in conn.exec_driver_sql("SELECT agent_id FROM batches ORDER BY id")]
    assert sorted(scopes[:2]) == ["a", "b"]  # both scopes served before either got a second batch
