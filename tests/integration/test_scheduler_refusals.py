"""A value the parser accepts but the store refuses (real PostgreSQL and Redis): that one entry goes to the
dead-letter stream with the store's reason, the rest of its read are stored, and the scheduler keeps running."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import timedelta

import pytest
import redis

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.core.errors import InvalidValue
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest.validation import encode_event, utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tests.integration.harness import REDIS_URL

pytestmark = pytest.mark.integration

POISON = "store-refuses-this"


class RefusingRepository(Repository):
    """The real repository, refusing (as PostgreSQL refuses a value it cannot hold) any write that
    carries POISON; which values PostgreSQL refuses changes with the schema, the isolation must not."""

    def ingest(
        self, turns: Sequence[Turn], ends: Sequence[SessionEnd], prescreened: Sequence[bool] | None = None
    ) -> int:
        if any(POISON in t.content for t in turns):
            raise InvalidValue("value rejected by PostgreSQL: simulated refusal")
        return super().ingest(turns, ends, prescreened)


class Exploding(RuntimeError):
    pass


def make_turns(n: int) -> list[Turn]:
    now = utcnow()
    return [
        Turn(
            f"t{i}",
            "a",
            "u",
            "s",
            "user",
            POISON if i == 3 else f"fact number {i}",
            now + timedelta(seconds=i),
            "user",
        )
        for i in range(n)
    ]


def runner(repo: Repository, stop: threading.Event | None = None) -> SchedulerRunner:
    config = RunnerConfig(
        group="scheduler",
        read_count=100,
        block_ms=10,
        claim_idle_ms=60_000,
        tick_s=3600,
        batch_size=30,
        idle_s=86_400,
        max_batch=30,
        max_waiting=10,
    )
    stream = TurnStream(connect(REDIS_URL), "hindsight:turns", "hindsight:dead")
    r = SchedulerRunner(repo=repo, stream=stream, dispatch=lambda _b: None, config=config, clock=utcnow)
    if stop is not None:
        r.stop_event = stop
    return r


def test_a_refused_entry_is_dead_lettered_alone_and_the_rest_stored(clean: None, migrated: str) -> None:
    from pipeline.adapters.postgres.engine import make_engine

    repo = RefusingRepository(make_engine(migrated))
    sched = runner(repo)
    sched.stream.ensure_group("scheduler")
    sched.stream.add_many([encode_event(t) for t in make_turns(8)])
    entries = sched.stream.read("scheduler", "c1", count=100, block_ms=10)

    assert sched.process(entries) == 7

    with repo.engine.connect() as conn:
        stored = {r[0] for r in conn.exec_driver_sql("SELECT turn_id FROM episodes")}
    repo.engine.dispose()
    assert stored == {f"t{i}" for i in range(8) if i != 3}
    dead = redis.Redis.from_url(REDIS_URL).xrange("hindsight:dead")
    assert len(dead) == 1
    fields = dead[0][1]
    assert fields[b"turn_id"] == b"t3"
    assert b"rejected by the store" in fields[b"reason"]
    assert b"simulated refusal" in fields[b"reason"]
    assert sched.stream.stats("scheduler")["pending"] == 0  # every entry acknowledged: none re-delivered


def test_an_unexpected_error_does_not_stop_the_scheduler(clean: None, repo: Repository) -> None:
    stop = threading.Event()
    sched = runner(repo, stop)
    calls = {"n": 0}
    real_step = sched.step

    def flaky_step() -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise Exploding("a defect, not an outage")
        if calls["n"] >= 3:
            stop.set()
        real_step()

    sched.step = flaky_step  # type: ignore[method-assign]
    thread = threading.Thread(target=sched.run)
    thread.start()
    thread.join(20)
    assert not thread.is_alive()
    assert calls["n"] >= 3  # it went on stepping after the error
