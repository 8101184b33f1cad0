"""A batch that fills, or a session that ends, is dispatched as soon as the scheduler reads it, not at the next
regular tick (real PostgreSQL and Redis; the regular tick here is a minute away)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest.validation import encode_event, utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tests.integration.harness import REDIS_URL

pytestmark = pytest.mark.integration

BATCH = 5


def turn(user: str, i: int) -> Turn:
    return Turn(
        f"{user}-{i}", "agent", user, "s1", "user", f"turn {i}", utcnow() + timedelta(seconds=i), "user"
    )


@pytest.fixture
def running(
    clean: None, repo: Repository, unsent_batches: None
) -> Iterator[tuple[TurnStream, list[int], list[float]]]:
    config = RunnerConfig(
        group="scheduler",
        read_count=100,
        block_ms=20,
        claim_idle_ms=60_000,
        tick_s=60.0,  # after the first tick at start, the next regular one is a minute away
        batch_size=BATCH,
        idle_s=86_400,
        max_batch=100,
    )
    stream = TurnStream(connect(REDIS_URL), "hindsight:turns", "hindsight:dead")
    dispatched: list[int] = []
    runner = SchedulerRunner(
        repo=repo, stream=stream, dispatch=dispatched.append, config=config, clock=utcnow
    )
    ticks: list[float] = []
    regular_tick = runner.tick

    def counted_tick() -> list[int]:
        ticks.append(time.monotonic())
        return regular_tick()

    runner.tick = counted_tick  # type: ignore[method-assign]
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: len(ticks) == 1)  # the start's own tick
        ticks.clear()
        yield stream, dispatched, ticks
    finally:
        runner.stop_event.set()
        thread.join(5)


def received(repo: Repository, n: int) -> Callable[[], bool]:
    def check() -> bool:
        with repo.engine.connect() as conn:
            return int(conn.exec_driver_sql("SELECT count(*) FROM episodes").scalar_one()) >= n

    return check


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_a_filled_batch_is_dispatched_without_waiting_for_the_tick(
    running: tuple[TurnStream, list[int], list[float]], repo: Repository
) -> None:
    stream, dispatched, ticks = running
    stream.add_many([encode_event(turn("u", i)) for i in range(BATCH - 1)])
    assert wait_until(received(repo, BATCH - 1))
    time.sleep(0.5)
    assert (ticks, dispatched) == ([], [])  # one short of a batch: nothing is due before the regular tick

    stream.add_many([encode_event(turn("u", BATCH - 1))])
    assert wait_until(lambda: len(dispatched) == 1, timeout=5.0)
    with repo.engine.connect() as conn:
        claimed = conn.exec_driver_sql(
            "SELECT count(*) FROM episodes WHERE full_batch_id = %(b)s", {"b": dispatched[0]}
        ).scalar_one()
    assert claimed == BATCH


def test_a_session_end_is_dispatched_without_waiting_for_the_tick(
    running: tuple[TurnStream, list[int], list[float]], repo: Repository
) -> None:
    stream, dispatched, ticks = running
    stream.add_many([encode_event(turn("v", i)) for i in range(2)])
    assert wait_until(received(repo, 2))
    time.sleep(0.3)
    assert (ticks, dispatched) == ([], [])

    stream.add_many([encode_event(SessionEnd("agent", "v", "s1", utcnow()))])
    assert wait_until(lambda: len(dispatched) == 1, timeout=5.0)
    with repo.engine.connect() as conn:
        kind, trigger = conn.exec_driver_sql(
            "SELECT kind, trigger FROM batches WHERE id = %(b)s", {"b": dispatched[0]}
        ).one()
    assert (kind, trigger) == ("light", "session_end")


def test_arrivals_in_other_scopes_do_not_add_up_to_a_batch(
    running: tuple[TurnStream, list[int], list[float]], repo: Repository
) -> None:
    stream, dispatched, ticks = running
    # BATCH turns in all, but no scope holds a batch's worth: no early tick.
    stream.add_many([encode_event(turn(f"w{i}", 0)) for i in range(BATCH)])
    assert wait_until(received(repo, BATCH))
    time.sleep(0.5)
    assert (ticks, dispatched) == ([], [])
