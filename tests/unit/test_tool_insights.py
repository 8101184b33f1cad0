"""pipeline.review.tool_insights and tool_scoring: tool calls grouped, estimated over their current regime,
stated as sentences; scored on outcome, latency and how informative the error is."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.core.review_records import OpenToolInsight
from pipeline.core.tool_calls import ToolCall
from pipeline.review import tool_insights as ti
from pipeline.review.tool_scoring import error_information, latency_score, score_call

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def call(
    i: int,
    ok: bool,
    *,
    tool: str = "flights.search",
    keys: tuple[str, ...] = ("dates", "from", "to"),
    task: str | None = "flight search",
    latency: float | None = 1200.0,
    status: str | None = None,
    error: str | None = None,
) -> ToolCall:
    return ToolCall(
        turn_id=f"t{i}",
        episode_id=i,
        ts=T0 + timedelta(minutes=10 * i),
        tool=tool,
        arg_keys=keys,
        status=status or ("ok" if ok else "timeout"),
        latency_ms=latency,
        error=error,
        task=task,
    )


def bernoulli(rate: float, n: int, rng: random.Random, offset: int = 0, **kw: object) -> list[ToolCall]:
    return [call(offset + i, rng.random() < rate, **kw) for i in range(n)]  # type: ignore[arg-type]


def test_a_steady_tool_keeps_its_whole_history() -> None:
    rng = random.Random(1)
    calls = bernoulli(0.9, 400, rng)
    est, counted = ti.estimate(calls, ti.ToolInsightParams())
    assert est.since is None
    assert len(counted) == est.calls == est.calls_total == 400
    assert abs(est.rate - 0.9) < 0.05


def test_a_degrading_tool_shows_within_a_few_dozen_calls() -> None:
    rng = random.Random(2)
    before = bernoulli(0.9, 300, rng)
    after = bernoulli(0.3, 25, rng, offset=300)
    est, counted = ti.estimate(before + after, ti.ToolInsightParams())
    assert est.since is not None
    assert est.since >= before[-20].ts  # the cut sits near the true change
    assert est.rate < 0.5
    assert est.previous_rate is not None
    assert est.previous_rate > 0.8
    assert {c.turn_id for c in counted} <= {c.turn_id for c in before[-20:] + after}


def test_no_split_without_enough_calls_on_each_side() -> None:
    assert ti.best_split([True] * 5 + [False] * 5, min_segment=8) == (0, 0.0)


def test_the_statement_names_tool_arguments_rate_counts_and_latency() -> None:
    calls = [call(i, i < 46) for i in range(50)]
    calls = [c if c.ok else call(c.episode_id, False, latency=None) for c in calls]
    (insight,) = ti.plan(calls, [])
    assert insight.text == (
        "For flight search, `flights.search` with dates, from, to succeeds 92% of the time "
        "(46 of 50 calls, median 1.2 s)."
    )
    assert insight.members[0] == 49  # newest first
    assert insight.details()["success_rate"] == 0.92
    assert insight.details()["window"] == {"from": T0.isoformat(), "to": calls[-1].ts.isoformat()}


def test_a_mostly_failing_tool_says_how_it_fails() -> None:
    calls = [call(i, i % 5 < 2, tool="travel.scrape", keys=("url",), latency=30_000) for i in range(30)]
    (insight,) = ti.plan(calls, [])
    assert insight.text.startswith("For flight search, `travel.scrape` with url fails on 60% of calls")
    assert "(mostly timeouts)" in insight.text
    assert "median 30.0 s" in insight.text


def test_groups_split_by_tool_argument_pattern_and_task_case_insensitively() -> None:
    calls = [
        call(1, True),
        call(2, True, task="Flight Search"),
        call(3, True, keys=("query",)),
        call(4, False, tool="travel.scrape"),
        call(5, True, task=None),
    ]
    keys = [p.group.key for p in ti.plan(calls, [])]
    assert keys == [
        "flight search|flights.search|dates,from,to",
        "flight search|flights.search|query",
        "flight search|travel.scrape|dates,from,to",
        "|flights.search|dates,from,to",
    ]


def test_an_unchanged_group_is_left_alone_and_a_grown_one_is_versioned() -> None:
    calls = [call(i, True) for i in range(10)]
    key = ti.group_of(calls[0]).key
    same = OpenToolInsight(id=7, key=key, calls_total=10, last_ts=calls[-1].ts)
    assert ti.plan(calls, [same]) == []
    grown = ti.plan([*calls, call(10, False)], [same])
    assert [p.replaces for p in grown] == [7]
    assert grown[0].estimate.calls_total == 11


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        ("ok", None, 1.0),
        ("timeout", None, 0.0),
        ("error", "error", 1 / 6),
        ("error", "HTTP 429 rate limited, retry after 30 s", 1.0),
    ],
)
def test_error_information(status: str, error: str | None, expected: float) -> None:
    assert error_information(call(1, status == "ok", status=status, error=error)) == pytest.approx(expected)


def test_a_call_is_scored_on_tool_dimensions() -> None:
    assert latency_score(0) == 1.0
    assert latency_score(2000) == pytest.approx(0.5)
    assert latency_score(None) == 0.5
    good = score_call(call(1, True, latency=100), trust=0.9)
    bad = score_call(call(2, False, latency=30_000), trust=0.9)
    assert set(good) == {"outcome", "latency", "error_info", "trust", "total", "why"}
    assert good["why"] == "tool_call"
    assert good["total"] > bad["total"] > 0
