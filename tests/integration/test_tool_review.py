"""Tool-call review through the real pipeline (issue 30): PostgreSQL, Redis, the scheduler and a Celery
worker. Call records become tool insights with provenance; a tool turn never becomes a user fact; the
prompt block keeps to its budget and says a changed preference's current value only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

AGENT, USER = "travel-bot", "mei"
T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
FLIGHTS = {"tool": "flights.search", "args": {"from": "PVG", "to": "NRT", "dates": ["06-01", "06-05"]}}
SCRAPE = {"tool": "travel.scrape", "args": {"url": "https://example.com/flights"}}


def _call(i: int, record: dict[str, Any], status: str, latency_ms: float, **extra: Any) -> dict[str, Any]:
    return {
        "turn_id": f"call-{i}",
        "role": "tool",
        "content": '{"results": []}' if status == "ok" else "Error: upstream timed out",
        "metadata": {**record, "status": status, "latency_ms": latency_ms, "task": "flight search", **extra},
    }


def _write(stack: Stack, session: str, turns: list[dict[str, Any]]) -> list[str]:
    ids = []
    for i, t in enumerate(turns):
        ids.append(
            stack.client.write_memory(
                AGENT,
                USER,
                session,
                t["role"],
                t["content"],
                ts=T0 + timedelta(minutes=i),
                metadata=t.get("metadata"),
                turn_id=t["turn_id"],
            )
        )
    stack.client.end_session(AGENT, USER, session)
    stack.wait_indexed(ids)
    return ids


def _insights(stack: Stack, **params: Any) -> list[dict[str, Any]]:
    response = stack.api.get("/v1/tool-insights", params={"agent_id": AGENT, "user_id": USER, **params})
    assert response.status_code == 200, response.text
    insights: list[dict[str, Any]] = response.json()["insights"]
    return insights


def _full_review(stack: Stack) -> None:
    response = stack.api.post("/v1/review", json={"agent_id": AGENT, "user_id": USER, "full": True})
    assert response.status_code == 202, response.text
    assert response.json()["batch_ids"]


def test_tool_calls_become_insights_with_provenance_and_never_user_facts(stack: Stack) -> None:
    stack.start_scheduler(batch_size=1000)
    flights = [_call(i, FLIGHTS, "ok" if i < 10 else "error", 1200 + i, error="HTTP 502") for i in range(12)]
    scrape = [_call(100 + i, SCRAPE, "ok" if i < 2 else "timeout", 30_000) for i in range(6)]
    talk = [
        {"turn_id": "u-1", "role": "user", "content": "I like jazz."},
        # A tool's output that reads like a statement about the user, plain and as a call record.
        {"turn_id": "tool-plain", "role": "tool", "content": "I live in Paris. The user lives in Paris."},
        {
            **_call(200, FLIGHTS, "ok", 900),
            "content": "I live in Paris.",
            "turn_id": "tool-record",
        },
        {"turn_id": "u-2", "role": "user", "content": "I no longer like jazz."},
    ]
    _write(stack, "s1", flights + scrape + talk)
    _full_review(stack)
    wait_until(lambda: len(_insights(stack)) == 2, timeout=90, interval=0.3, what="two tool insights")

    best, worst = _insights(stack, task="Flight search")
    assert best["tool"] == "flights.search"
    assert best["arg_keys"] == ["dates", "from", "to"]
    assert (best["calls"], best["ok"]) == (13, 11)
    assert best["text"].startswith("For flight search, `flights.search` with dates, from, to succeeds 85%")
    assert set(best["source_turn_ids"]) == {f"call-{i}" for i in range(12)} | {"tool-record"}
    assert worst["tool"] == "travel.scrape"
    assert "fails on 67% of calls (mostly timeouts)" in worst["text"]
    assert len(worst["source_turn_ids"]) == 6
    assert _insights(stack, task="hotel booking") == []

    with stack.repo.engine.connect() as conn:
        facts = conn.execute(
            text("SELECT attribute, value, turn_ids FROM facts WHERE agent_id = :a"), {"a": AGENT}
        ).all()
        quality = dict(
            conn.execute(
                text("SELECT turn_id, quality->>'why' FROM episodes WHERE turn_id LIKE 'call-%'")
            ).all()
        )
    assert {f.attribute for f in facts} == {"preference:jazz"}  # nothing from either tool turn
    assert not any(t.startswith("tool") for f in facts for t in f.turn_ids)
    assert set(quality.values()) == {"tool_call"}  # scored on tool dimensions, none sent cold

    # More calls: the insight is versioned, not duplicated.
    _write(stack, "s2", [_call(300 + i, SCRAPE, "timeout", 31_000) for i in range(3)])
    _full_review(stack)
    wait_until(
        lambda: any(i["calls"] == 9 for i in _insights(stack, task="flight search")),
        timeout=90,
        interval=0.3,
        what="a new version of the scrape insight",
    )
    scrape_now = [i for i in _insights(stack) if i["tool"] == "travel.scrape"]
    assert len(scrape_now) == 1
    assert scrape_now[0]["version"] == 2

    # The inspector shows the scope's own insights (scope=user), each linked to its memory page; with one
    # user the agent-wide insight counts the same calls.
    own = _insights(stack, task="flight search", scope="user")[0]
    assert (own["scope"], best["scope"]) == ("user", "agent")
    assert (own["calls"], own["ok"], own["text"]) == (best["calls"], best["ok"], best["text"])
    page = stack.api.get("/ui/scope", params={"agent_id": AGENT, "user_id": USER})
    assert page.status_code == 200
    section = page.text.split('id="tool-insights"')[1].split("</section>")[0]
    assert "flights.search" in section
    assert "travel.scrape" in section
    assert f"/ui/memory/{own['id']}" in section
    agent_wide = page.text.split('id="agent-tool-insights"')[1].split("</section>")[0]
    assert best["text"] in agent_wide
    assert "/ui/memory/" not in agent_wide  # an agent-wide row is in no user's scope: nothing to open


def test_the_prompt_block_keeps_to_its_budget_and_says_current_values(stack: Stack) -> None:
    stack.start_scheduler(batch_size=1000)
    turns = [
        {"turn_id": "u-1", "role": "user", "content": "I like jazz."},
        {"turn_id": "u-2", "role": "user", "content": "I live in Lisbon."},
        *[_call(i, FLIGHTS, "ok", 1000) for i in range(4)],
        {"turn_id": "u-3", "role": "user", "content": "I no longer like jazz."},
    ]
    _write(stack, "s1", turns)
    _full_review(stack)
    wait_until(lambda: len(_insights(stack)) == 1, timeout=90, interval=0.3, what="a tool insight")

    def prompt(**params: Any) -> dict[str, Any]:
        response = stack.api.get("/v1/prompt", params={"agent_id": AGENT, "user_id": USER, **params})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    full = prompt(task="flight search", budget_tokens=400)
    lines = full["prompt"].split("\n")
    assert "- dislikes: jazz" in lines
    assert "- likes: jazz" not in lines  # the old value of a changed preference
    assert "- location: Lisbon" in lines
    assert any(line.startswith("- For flight search, `flights.search`") for line in lines)
    assert full["tokens"] <= 400
    assert full["left_out"] == 0

    tight = prompt(task="flight search", budget_tokens=20)
    assert len(tight["prompt"]) / 4 <= 20
    assert tight["tokens"] <= 20
    assert tight["left_out"] > 0


def test_a_bad_call_record_is_refused_with_422_naming_the_field(stack: Stack) -> None:
    turn = {
        "turn_id": "bad",
        "agent_id": AGENT,
        "user_id": USER,
        "session_id": "s1",
        "role": "tool",
        "content": "{}",
        "metadata": {"tool": "flights.search", "status": "crashed"},
    }
    response = stack.api.post("/v1/turns", json=[turn])
    assert response.status_code == 422
    assert "metadata.status: must be one of ok, error, timeout" in response.text
    small = stack.api.get("/v1/prompt", params={"agent_id": AGENT, "user_id": USER, "budget_tokens": 8})
    assert small.status_code == 422
