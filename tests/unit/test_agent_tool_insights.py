"""Agent-wide tool insights (pipeline.review.tool_insights.plan_agent): the calls of all an agent's users
in one estimate per group, each member remembered with its user, re-planned idempotently."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from pipeline.core.review_records import OpenToolInsight
from pipeline.core.tool_calls import ToolCall, tool_call_of
from pipeline.review import tool_insights as ti

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def call(
    i: int, user: str, ok: bool = True, *, tool: str = "flights.search", task: str = "flight search"
) -> ToolCall:
    return ToolCall(
        turn_id=f"{user}-t{i}",
        episode_id=i,
        ts=T0 + timedelta(minutes=i),
        tool=tool,
        arg_keys=("dates", "from", "to"),
        status="ok" if ok else "timeout",
        latency_ms=1000.0 + i,
        error=None,
        task=task,
        user_id=user,
    )


def test_one_insight_counts_every_users_calls_and_remembers_whose_each_was() -> None:
    calls = [call(i, "u1", ok=i != 0) for i in range(4)] + [call(10 + i, "u2", ok=i < 4) for i in range(6)]
    (insight,) = ti.plan_agent(calls, [])
    assert (insight.details["calls"], insight.details["ok"]) == (10, 7)
    assert insight.details["users"] == 2
    assert insight.details["scope"] == "agent"
    assert insight.text.startswith("For flight search, `flights.search` with dates, from, to succeeds 70%")
    assert insight.members[0] == (15, "u2")  # newest first
    assert sorted(e for e, u in insight.members if u == "u1") == [0, 1, 2, 3]
    assert sorted(e for e, u in insight.members if u == "u2") == list(range(10, 16))
    assert insight.valid_from == calls[-1].ts
    assert insight.replaces is None


def test_users_are_counted_per_group_over_every_call_read() -> None:
    calls = [call(0, "u1"), call(1, "u2"), call(2, "u1", tool="travel.scrape")]
    by_tool = {i.details["tool"]: i for i in ti.plan_agent(calls, [])}
    assert by_tool["flights.search"].details["users"] == 2
    assert by_tool["travel.scrape"].details["users"] == 1


def test_a_second_plan_over_what_the_first_counted_changes_nothing_and_new_calls_version_it() -> None:
    calls = [call(i, "u1" if i % 2 else "u2") for i in range(6)]
    (first,) = ti.plan_agent(calls, [])
    written = OpenToolInsight(
        41,
        str(first.details["key"]),
        int(first.details["calls_total"]),
        datetime.fromisoformat(first.details["window"]["to"]),
    )
    # The second of two concurrent reviews reads what the first wrote (under the agent's lock): nothing.
    assert ti.plan_agent(calls, [written]) == []
    (grown,) = ti.plan_agent([*calls, call(9, "u3", ok=False)], [written])
    assert grown.replaces == 41
    assert (grown.details["calls"], grown.details["users"]) == (7, 3)


def test_the_planner_passed_to_the_store_uses_the_review_params() -> None:
    params = ti.ToolInsightParams(change_llr=1e9)
    calls = [call(i, "u1", ok=i < 20) for i in range(40)]  # a sharp fall, never a change at 1e9 nats
    (insight,) = ti.agent_planner(params)(calls, [])
    assert insight.details["since"] is None
    assert insight.details["calls"] == 40


def test_a_call_record_carries_its_user_only_when_read_for_the_agent() -> None:
    meta = {"tool": "weather.get", "args": {"city": "Lisbon"}, "status": "ok", "latency_ms": 300}
    scoped = tool_call_of(1, "t1", T0, meta)
    agent_wide = tool_call_of(1, "t1", T0, meta, "u7")
    assert scoped.user_id is None
    assert agent_wide.user_id == "u7"
    assert dataclasses.replace(agent_wide, user_id=None) == scoped
