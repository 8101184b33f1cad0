"""Backlog: 50,000 turns arrive while no review worker runs; then one starts.

The queue drains user turns first (priority user 1 < agent 2 < tool 3), the roles' memory stays bounded,
and `stats` tells the truth about the backlog at every stage. Reviewing all 50,000 would take most of an
hour on 2 shared cores: the turns all really arrive, and a measured part is drained.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.faults.stack import Role, Stack, Traffic, push, record
from tests.helpers import free_port, wait_until

TURNS = 50_000
MAX_WAITING = 4
DRAIN_S = 90.0
MAX_BATCH = 200  # smaller batches than the default 500: more of them finish within the drain
SCHEDULER_RSS_LIMIT_MB = 500
WORKER_RSS_LIMIT_MB = 1500


@pytest.mark.timeout(900)
def test_backlog_drains_user_turns_first_with_bounded_memory(stack: Stack) -> None:
    stack.extra_env["HINDSIGHT_SCHEDULER_MAX_WAITING_BATCHES"] = str(MAX_WAITING)
    stack.extra_env["HINDSIGHT_POLICY__MAX_BATCH"] = str(MAX_BATCH)
    stack.extra_env["HINDSIGHT_POLICY__IDLE_S"] = "86400"  # only full reviews: the order is the claim order
    port = free_port()
    api_env = {"HINDSIGHT_API_PORT": str(port), "HINDSIGHT_API_URL": f"http://127.0.0.1:{port}"}
    scheduler = stack.add("scheduler", "scheduler")
    api = stack.add("api", "api", "--indexer", env=api_env)
    worker = stack.add("worker", "worker", "--loglevel=INFO")
    stack.start("scheduler", "api")

    traffic = Traffic.generate(
        TURNS, seed=50, agents=2, users=5, session_len=(200, 400), duplicate_rate=0.0, end_sessions=False
    )
    assert len(traffic.entries) == TURNS
    stream = stack.stream()
    rss: dict[str, list[float]] = {"scheduler": [], "worker": []}
    pushed = 0
    started = time.monotonic()
    for chunk in traffic.chunks(2000):
        pushed += push(stream, chunk)
        rss["scheduler"].append(scheduler.rss_mb())
    push_s = time.monotonic() - started

    def all_stored() -> bool:
        rss["scheduler"].append(scheduler.rss_mb())
        return bool(stack.scalar("SELECT count(*) FROM episodes") == TURNS)

    wait_until(all_stored, timeout=300, interval=1.0, what="the scheduler to store all 50,000 turns")
    stored_s = time.monotonic() - started
    time.sleep(3)  # a few scheduler ticks with the queue full
    stats = _stats(port, api)
    celery = redis.Redis.from_url(stack.servers.redis_url)
    claimed = stack.scalar("SELECT count(*) FROM episodes WHERE full_batch_id IS NOT NULL")
    # The backlog is where stats says, and adds up to every turn that arrived.
    assert stats["episodes"]["total"] == TURNS
    assert stats["episodes"].get("pending", 0) == TURNS  # nothing reviewed: no worker ran
    assert stats["stream"]["lag"] == 0
    assert stats["stream"]["pending"] == 0
    assert stats["batches"] == {"dispatched": MAX_WAITING}
    assert celery.llen("review") == MAX_WAITING  # Celery's queue holds exactly those
    assert 0 < claimed <= MAX_WAITING * MAX_BATCH
    first_batch_after_start = int(stack.scalar("SELECT max(id) FROM batches")) + 1

    worker.start()
    worker.wait_ready()
    drain_start = time.monotonic()
    while time.monotonic() - drain_start < DRAIN_S:
        rss["worker"].append(worker.rss_mb())
        rss["scheduler"].append(scheduler.rss_mb())
        assert stack.scalar("SELECT count(*) FROM batches WHERE status IN ('pending', 'dispatched')") <= (
            MAX_WAITING
        )
        time.sleep(2)
    reviewed_by_priority = dict(
        stack.rows(
            "SELECT e.priority, count(*) FROM episodes e JOIN batches b ON b.id = e.full_batch_id"
            " WHERE b.status = 'done' AND b.id >= :first GROUP BY e.priority",
            first=first_batch_after_start,
        )
    )
    later_claims = dict(
        stack.rows(
            "SELECT e.priority, count(*) FROM episodes e WHERE e.full_batch_id >= :first GROUP BY e.priority",
            first=first_batch_after_start,
        )
    )
    reviewed = stack.scalar("SELECT count(*) FROM episodes WHERE reviewed_at IS NOT NULL")
    stats = _stats(port, api)
    summary = (
        f"Backlog (`pytest tests/faults/test_backlog.py`): {pushed} turns pushed in {push_s:.1f} s with no review "
        f"worker running; the scheduler stored them all in {stored_s:.0f} s and claimed only {MAX_WAITING} batches "
        f"(the rest waited as pending episodes; `stats` showed {TURNS} episodes, {MAX_WAITING} dispatched "
        f"batches, stream lag 0). Then one worker drained {reviewed} turns in {DRAIN_S:.0f} s; every batch claimed "
        f"meanwhile held user turns only ({later_claims.get(1, 0)} claimed, 0 agent/tool) while "
        f"{len(traffic.by_priority.get(1, ()))} of the {TURNS} were user turns. Peak RSS: scheduler "
        f"{max(rss['scheduler']):.0f} MiB, worker {max(rss['worker']):.0f} MiB (worker at a quarter of the drain "
        f"{rss['worker'][len(rss['worker']) // 4]:.0f} MiB, at the end {rss['worker'][-1]:.0f} MiB). "
        f"Load average {Path('/proc/loadavg').read_text().split()[:3]} (2 cores, shared)."
    )
    print(summary, stats)
    assert reviewed > 0
    assert reviewed_by_priority.get(1, 0) > 0
    # Every batch claimed once workers ran took user turns only: 20,000 of them were still waiting.
    assert set(later_claims) == {1}, later_claims
    assert stats["episodes"].get("pending", 0) + stats["episodes"].get("kept", 0) < TURNS
    assert stats["episodes"]["total"] == TURNS
    assert max(rss["scheduler"]) < SCHEDULER_RSS_LIMIT_MB
    assert max(rss["worker"]) < WORKER_RSS_LIMIT_MB
    # Bounded, not growing with the backlog: the last samples are no higher than the early ones by much.
    assert rss["worker"][-1] - rss["worker"][len(rss["worker"]) // 4] < 200
    record("faults-backlog", "## Faults: a 50,000-turn backlog (`hindsight bench faults`)\n\n" + summary)


def _stats(port: int, api: Role) -> dict[str, Any]:
    def get() -> dict[str, Any] | None:
        if not api.alive():
            raise AssertionError(f"the API exited:\n{api.log()[-2000:]}")
        try:
            response = httpx.get(f"http://127.0.0.1:{port}/v1/stats", timeout=10)
        except httpx.HTTPError:
            return None
        return response.json() if response.status_code == 200 else None

    result: dict[str, Any] = wait_until(get, timeout=180, interval=0.5, what="the API's stats")
    return result
