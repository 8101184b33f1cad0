"""Agent-wide tool insights through the real pipeline (issue 30): PostgreSQL, Redis, the scheduler, real
Celery workers, the API on a socket with keys required, and `hindsight mcp --transport http`.

Two users of one agent log calls; the agent-wide insight counts both, while a request for one user's
scope lists that user's turn ids only (another user's ids and a group only another user has are never
in its answer, over HTTP, the prompt block or MCP); full reviews of the two users running at once, in
two workers, leave exactly one current version of each insight."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.agent_insights_sql import agent_lock_key
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.ports import WarmEmbedder
from tests.helpers import wait_until
from tests.integration.harness import REPO_ROOT, Stack, WorkerProcess
from tests.integration.keyed import KeyedSite, fresh_keys
from tests.integration.live_api import live_stack
from tests.integration.mcp_http import mcp_over_http

pytestmark = pytest.mark.integration

AGENT = "alpha"  # fresh_keys makes a key for this agent
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
FLIGHTS = {"tool": "flights.search", "args": {"from": "PVG", "to": "NRT", "dates": ["06-01"]}}
GIFTS = {"tool": "gifts.buy", "args": {"item": "vase"}}
PRIVATE_TASK = "wedding gift for ana"  # only u2's agent ever did this: no task kind, one person's errand


def _call(user: str, i: int, record: dict[str, Any], ok: bool, task: str = "flight search") -> dict[str, Any]:
    return {
        "turn_id": f"{user}-call-{i}",
        "agent_id": AGENT,
        "user_id": user,
        "session_id": f"{user}-s1",
        "role": "tool",
        "content": '{"results": []}' if ok else "Error: upstream timed out",
        "ts": (T0 + timedelta(minutes=i)).isoformat(),
        "metadata": {**record, "status": "ok" if ok else "timeout", "latency_ms": 1000 + i, "task": task},
    }


# u1: 6 flight searches, 5 succeed. u2: 6 flight searches, 3 succeed; 4 gift purchases of its own.
CALLS = {
    "u1": [_call("u1", i, FLIGHTS, i != 0) for i in range(6)],
    "u2": [_call("u2", 10 + i, FLIGHTS, i < 3) for i in range(6)]
    + [_call("u2", 20 + i, GIFTS, True, PRIVATE_TASK) for i in range(4)],
}


def _log_calls(http: httpx.Client, stack: Stack, users: list[str]) -> None:
    for user in users:
        assert http.post("/v1/turns", json=CALLS[user]).status_code == 202
        end = {"agent_id": AGENT, "user_id": user, "session_id": f"{user}-s1"}
        assert http.post("/v1/sessions/end", json=end).status_code == 202
    stack.wait_indexed([c["turn_id"] for u in users for c in CALLS[u]], timeout=120)


def _full_review(http: httpx.Client, user: str) -> list[int]:
    response = http.post("/v1/review", json={"agent_id": AGENT, "user_id": user, "full": True})
    assert response.status_code == 202, response.text
    batch_ids: list[int] = response.json()["batch_ids"]
    assert batch_ids
    return batch_ids


def _wait_done(http: httpx.Client, batch_ids: list[int], timeout: float = 120) -> None:
    wait_until(
        lambda: (
            http.post("/v1/progress", json={"batch_ids": batch_ids}).json()["batches"]["done"]
            == len(batch_ids)
        ),
        timeout=timeout,
        what="the full reviews",
    )


@pytest.fixture(scope="module")
def keyed(
    repo: Repository,
    worker: WorkerProcess,
    embedder: WarmEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[KeyedSite]:
    """Both users' calls logged and fully reviewed, one after the other, on a stack that requires keys."""
    keys = fresh_keys(repo)
    with live_stack(
        repo, embedder, tmp_path_factory.mktemp("agent-insights"), auth={"mode": "required"}
    ) as stack:
        stack.start_scheduler(batch_size=1000)
        world = KeyedSite(stack, keys)
        with world.http("admin") as admin:
            _log_calls(admin, stack, ["u1", "u2"])
            for user in ("u1", "u2"):
                _wait_done(admin, _full_review(admin, user))
        yield world
    time.sleep(0.2)


def _insights(world: KeyedSite, key: str, user: str, **params: Any) -> tuple[list[dict[str, Any]], str]:
    response = world.get(key, "/v1/tool-insights", agent_id=AGENT, user_id=user, **params)
    assert response.status_code == 200, response.text
    return response.json()["insights"], response.text


def _other_users_ids(user: str) -> list[str]:
    return [c["turn_id"] for u, calls in CALLS.items() if u != user for c in calls]


def test_the_agent_wide_insight_counts_both_users_and_lists_only_the_callers_turn_ids(
    keyed: KeyedSite,
) -> None:
    insights, body = _insights(keyed, "alpha", "u1")
    (flights,) = insights  # u2's private errand is not u1's to see
    assert flights["scope"] == "agent"
    assert (flights["calls"], flights["ok"], flights["users"]) == (12, 8, 2)
    assert flights["text"].startswith("For flight search, `flights.search` with dates, from, to succeeds 67%")
    assert flights["user_calls"] == 6
    assert flights["provenance"] == "user"
    assert set(flights["source_turn_ids"]) == {c["turn_id"] for c in CALLS["u1"]}
    for turn_id in _other_users_ids("u1"):
        assert turn_id not in body
    assert PRIVATE_TASK not in body
    assert "gifts.buy" not in body

    # u2 sees its own errand (it has calls in it) and the shared kind, with its own turn ids only.
    theirs, body2 = _insights(keyed, "alpha", "u2")
    by_tool = {i["tool"]: i for i in theirs}
    assert set(by_tool) == {"flights.search", "gifts.buy"}
    assert by_tool["flights.search"]["id"] == flights["id"]
    assert set(by_tool["flights.search"]["source_turn_ids"]) == {f"u2-call-{10 + i}" for i in range(6)}
    assert by_tool["gifts.buy"]["users"] == 1
    for turn_id in _other_users_ids("u2"):
        assert turn_id not in body2

    # The scope's own insight counts its own calls only, as before.
    own, _ = _insights(keyed, "alpha", "u1", scope="user")
    assert [(i["scope"], i["calls"], i["ok"]) for i in own] == [("user", 6, 5)]
    assert own[0]["id"] != flights["id"]


def test_every_users_turn_ids_are_for_operators_only(keyed: KeyedSite) -> None:
    refused = keyed.get("alpha", "/v1/tool-insights", agent_id=AGENT, user_id="u1", provenance="all")
    assert refused.status_code == 403
    assert "u2-call" not in refused.text
    everything, _ = _insights(keyed, "admin", "u1", provenance="all")
    flights = next(i for i in everything if i["tool"] == "flights.search")
    assert flights["provenance"] == "all"
    assert len(flights["source_turn_ids"]) == 12
    assert flights["user_calls"] == 6  # still the u1 share
    assert {i["tool"] for i in everything} == {"flights.search", "gifts.buy"}
    # Another agent's key gets nothing of this agent, agent-wide or not.
    assert keyed.get("beta", "/v1/tool-insights", agent_id=AGENT, user_id="u1").status_code == 403


def test_agent_wide_rows_are_in_no_users_scope(keyed: KeyedSite) -> None:
    flights = _insights(keyed, "alpha", "u1")[0][0]
    listed = keyed.get("alpha", "/v1/memories", agent_id=AGENT, user_id="u1", kind="semantic")
    assert listed.status_code == 200
    assert flights["id"] not in listed.text
    # The per-scope routes do not open it either: it has no user.
    assert (
        keyed.get("alpha", f"/v1/memories/{flights['id']}", agent_id=AGENT, user_id="u1").status_code == 404
    )


def test_the_prompt_block_uses_the_agent_wide_insight_by_default(keyed: KeyedSite) -> None:
    def prompt(user: str, **params: Any) -> str:
        response = keyed.get(
            "alpha", "/v1/prompt", agent_id=AGENT, user_id=user, task="flight search", **params
        )
        assert response.status_code == 200, response.text
        block: str = response.json()["prompt"]
        return block

    assert "succeeds 67% of the time (8 of 12 calls" in prompt("u1")
    assert "succeeds 83% of the time (5 of 6 calls" in prompt("u1", scope="user")
    assert "gifts.buy" not in keyed.get("alpha", "/v1/prompt", agent_id=AGENT, user_id="u1").text


def test_memory_tool_insights_over_mcp_http_acts_with_the_remote_key(
    keyed: KeyedSite, tmp_path: Path
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    env = {
        k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_KEY"
    }  # the server has no key of its own
    env.update({"PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO_ROOT)), "HINDSIGHT_API_URL": keyed.url})

    async def call(url: str, key: str, **arguments: Any) -> tuple[bool, Any, str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60))
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
            result = await client.call_tool("memory_tool_insights", {"agent_id": AGENT, **arguments})
        raw = json.dumps(result.structured_content) + " ".join(getattr(c, "text", "") for c in result.content)
        return result.is_error, result.structured_content, raw

    with mcp_over_http(env, tmp_path / "mcp.log") as url:
        agent_wide = anyio.run(lambda: call(url, keyed.keys["alpha"], user_id="u1"))
        own = anyio.run(lambda: call(url, keyed.keys["alpha"], user_id="u1", scope="user"))
        foreign = anyio.run(lambda: call(url, keyed.keys["beta"], user_id="u1"))
    is_error, content, raw = agent_wide
    assert not is_error, raw
    (flights,) = content["insights"]
    assert (flights["scope"], flights["calls"], flights["users"], flights["user_calls"]) == (
        "agent",
        12,
        2,
        6,
    )
    assert set(flights["source_turn_ids"]) == {c["turn_id"] for c in CALLS["u1"]}
    for turn_id in _other_users_ids("u1"):
        assert turn_id not in raw
    assert PRIVATE_TASK not in raw
    assert not own[0], own[2]
    assert [(i["scope"], i["calls"]) for i in own[1]["insights"]] == [("user", 6)]
    assert foreign[0]
    assert "403" in foreign[2]
    assert "flights.search" not in foreign[2]


def test_concurrent_full_reviews_of_two_users_leave_one_current_version(
    stack: Stack, repo: Repository, tmp_path: Path
) -> None:
    """Two workers review u1 and u2 at once. The test holds the agent's lock until both reviews wait on it,
    so their writes are certain to overlap; the second must find everything counted and add nothing."""
    second = WorkerProcess(tmp_path / "second-worker")
    (tmp_path / "second-worker").mkdir()
    second.start()
    try:
        stack.start_scheduler(batch_size=1000)
        _log_calls(stack.api, stack, ["u1", "u2"])
        with repo.engine.connect() as holder:
            holder.execute(text("SELECT pg_advisory_lock(:k)"), {"k": agent_lock_key(AGENT)})
            holder.commit()
            batches = _full_review(stack.api, "u1") + _full_review(stack.api, "u2")
            wait_until(
                lambda: _lock_waiters(repo) == 2, timeout=120, interval=0.2, what="both reviews at the lock"
            )
            holder.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": agent_lock_key(AGENT)})
            holder.commit()
        _wait_done(stack.api, batches)
    finally:
        second.stop()

    with repo.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT details->>'key' AS key, version, valid_to IS NULL AS open, (details->>'calls')::int AS calls "
                "FROM semantic_memories WHERE agent_id = :a AND user_id IS NULL"
            ),
            {"a": AGENT},
        ).all()
        made = (
            conn.execute(
                text(
                    "SELECT counts->>'agent_insights_created' FROM reviews WHERE batch_id = ANY(:b) ORDER BY id"
                ),
                {"b": batches},
            )
            .scalars()
            .all()
        )
    open_rows = [r for r in rows if r.open]
    assert sorted(r.key for r in open_rows) == sorted({r.key for r in rows})  # one current version per group
    assert len(rows) == len(open_rows) == 2  # and no second version: the later review found all counted
    assert {r.key.split("|")[1]: r.calls for r in open_rows} == {"flights.search": 12, "gifts.buy": 4}
    assert sorted(made) == ["0", "2"]  # the first writer made both, the second none


def _lock_waiters(repo: Repository) -> int:
    """Sessions waiting for the agent's lock (a bigint advisory key shows as classid = high 32 bits,
    objid = low 32 bits, objsubid 1)."""
    key = agent_lock_key(AGENT)
    params = {"hi": (key >> 32) & 0xFFFFFFFF, "lo": key & 0xFFFFFFFF}
    with repo.engine.connect() as conn:
        waiting = conn.scalar(
            text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1"
                " AND classid::bigint = :hi AND objid::bigint = :lo"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ),
            params,
        )
    return int(waiting or 0)
