"""Tool insights: what a scope's tool calls say about each tool, per argument pattern and task (issue 30).

Calls are grouped by (task when given, tool name, argument pattern = the sorted argument keys). Each group
gets one insight: its success rate, counts, median latency, the commonest failure, and the window of calls
it rests on. Pure: calls in, insight plans out, `now` passed in.

Recency without a forgetting knob: a group's rate is estimated over its **current regime**, the calls since
its latest change point. The change point is found by binary segmentation on the right with a likelihood-
ratio test on the Bernoulli outcomes: split the calls where two success rates explain them best; if that
beats one rate by at least `change_llr` nats (and both sides have `min_segment` calls), keep the right side
and look again. A steady tool keeps all its calls (the tightest estimate); a degrading one switches to the
calls after the change as soon as they are evidence enough: a fall from 90% to 30% succeeding needs about a
dozen calls (~1 nat of evidence each). Under no change the largest split statistic grows only like
log log n, so 12 nats keeps false splits rare — and a false split costs precision, not bias.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from pipeline.core.review_records import AgentInsightPlanner, AgentInsightWrite, OpenToolInsight
from pipeline.core.tool_calls import ToolCall


@dataclass(frozen=True, slots=True)
class ToolInsightParams:
    change_llr: float = 12.0  # nats of evidence a change point needs (see the module docstring)
    min_segment: int = 8  # calls on each side of a change point
    call_limit: int = 20_000  # most recent calls of a scope a full review reads
    agent_call_limit: int = 50_000  # most recent calls of an agent, across its users, for agent-wide ones


@dataclass(frozen=True, slots=True)
class GroupKey:
    tool: str
    arg_keys: tuple[str, ...]
    task: str | None

    @property
    def key(self) -> str:
        """A stable text key: task | tool | keys."""
        return f"{self.task or ''}|{self.tool}|{','.join(self.arg_keys)}"


@dataclass(frozen=True, slots=True)
class Estimate:
    calls: int  # in the current regime
    ok: int
    calls_total: int  # every call of the group read
    ok_total: int
    since: datetime | None  # the regime's first call when a change point cut the history, else None
    previous_rate: float | None  # the rate before that change point
    median_latency_ms: float | None
    failures: dict[str, int]  # status -> count, in the regime
    first_ts: datetime
    last_ts: datetime

    @property
    def rate(self) -> float:
        return self.ok / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class InsightPlan:
    group: GroupKey
    estimate: Estimate
    members: tuple[int, ...]  # episode ids of the calls the rate counts, most recent first
    turn_ids: tuple[str, ...]
    text: str
    replaces: int | None

    def details(self) -> dict[str, Any]:
        """What the insight's row keeps beside its text (semantic_memories.details), JSON-ready."""
        e = self.estimate
        return {
            "kind": "tool_insight",
            "key": self.group.key,
            "tool": self.group.tool,
            "arg_keys": list(self.group.arg_keys),
            "task": self.group.task,
            "calls": e.calls,
            "ok": e.ok,
            "success_rate": round(e.rate, 4),
            "calls_total": e.calls_total,
            "ok_total": e.ok_total,
            "median_latency_ms": e.median_latency_ms,
            "failures": e.failures,
            "since": e.since.isoformat() if e.since else None,
            "previous_rate": None if e.previous_rate is None else round(e.previous_rate, 4),
            "window": {"from": e.first_ts.isoformat(), "to": e.last_ts.isoformat()},
        }


def group_of(call: ToolCall) -> GroupKey:
    """The call's group; the task lower-cased ("Flight search" is "flight search")."""
    return GroupKey(call.tool, call.arg_keys, call.task.lower() if call.task else None)


def _loglik(k: int, n: int) -> float:
    """Maximised Bernoulli log-likelihood of k successes in n trials (nats)."""
    if n == 0 or k in (0, n):
        return 0.0
    p = k / n
    return k * math.log(p) + (n - k) * math.log(1 - p)


def best_split(outcomes: Sequence[bool], *, min_segment: int) -> tuple[int, float]:
    """(index, log-likelihood ratio in nats) of the split of `outcomes` that two rates explain best;
    (0, 0.0) when no split leaves `min_segment` on each side."""
    n = len(outcomes)
    prefix = [0]
    for o in outcomes:
        prefix.append(prefix[-1] + int(o))
    whole = _loglik(prefix[n], n)
    best, at = 0.0, 0
    for i in range(min_segment, n - min_segment + 1):
        gain = _loglik(prefix[i], i) + _loglik(prefix[n] - prefix[i], n - i) - whole
        if gain > best:
            best, at = gain, i
    return at, best


def regime_start(outcomes: Sequence[bool], params: ToolInsightParams) -> int:
    """Index of the first call of the current regime (0 when the whole history is one)."""
    start = 0
    while True:
        at, llr = best_split(outcomes[start:], min_segment=params.min_segment)
        if llr < params.change_llr or at == 0:
            return start
        start += at


def estimate(calls: Sequence[ToolCall], params: ToolInsightParams) -> tuple[Estimate, list[ToolCall]]:
    """The group's estimate and the calls it counts. `calls` in time order (oldest first), not empty."""
    outcomes = [c.ok for c in calls]
    start = regime_start(outcomes, params)
    regime = list(calls[start:])
    latencies = [c.latency_ms for c in regime if c.latency_ms is not None]
    before = calls[:start]
    est = Estimate(
        calls=len(regime),
        ok=sum(c.ok for c in regime),
        calls_total=len(calls),
        ok_total=sum(outcomes),
        since=regime[0].ts if start else None,
        previous_rate=(sum(c.ok for c in before) / len(before)) if before else None,
        median_latency_ms=round(statistics.median(latencies), 1) if latencies else None,
        failures=dict(Counter(c.status for c in regime if not c.ok)),
        first_ts=calls[0].ts,
        last_ts=calls[-1].ts,
    )
    return est, regime


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms:.0f} ms"


def statement(group: GroupKey, e: Estimate) -> str:
    """The insight's sentence, e.g. "For flight search, `flights.search` with dates, from, to succeeds 92%
    of the time (46 of 50 calls, median 1.2 s)."."""
    with_args = f" with {', '.join(group.arg_keys)}" if group.arg_keys else " without arguments"
    subject = f"`{group.tool}`{with_args}"
    lead = f"For {group.task}, {subject}" if group.task else subject
    share = round(100 * e.rate)
    if e.rate >= 0.5 or not e.failures:
        verb = f"succeeds {share}% of the time"
    else:
        commonest = max(e.failures, key=lambda s: (e.failures[s], s))
        reason = "timeouts" if commonest == "timeout" else "errors"
        verb = f"fails on {100 - share}% of calls (mostly {reason})"
    failing = not verb.startswith("succeeds")
    parts = [f"{e.ok} of {e.calls} calls" + (" succeeded" if failing else "")]
    if e.since is not None:
        parts[0] += f" since {e.since.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    if e.median_latency_ms is not None:
        parts.append(f"median {_seconds(e.median_latency_ms)}")
    was = f"; was {round(100 * e.previous_rate)}% before" if e.previous_rate is not None else ""
    return f"{lead} {verb} ({', '.join(parts)}{was})."


def plan(
    calls: Iterable[ToolCall],
    open_insights: Iterable[OpenToolInsight],
    params: ToolInsightParams = ToolInsightParams(),
) -> list[InsightPlan]:
    """An insight (or a new version of the open one) for every group with calls its open version has not
    counted; groups with nothing new are left alone."""
    groups: dict[GroupKey, list[ToolCall]] = {}
    for c in sorted(calls, key=lambda c: (c.ts, c.episode_id)):
        groups.setdefault(group_of(c), []).append(c)
    known: Mapping[str, OpenToolInsight] = {o.key: o for o in open_insights}
    out: list[InsightPlan] = []
    for group, members in sorted(groups.items(), key=lambda kv: kv[0].key):
        current = known.get(group.key)
        if current is not None and current.calls_total == len(members) and current.last_ts == members[-1].ts:
            continue
        est, counted = estimate(members, params)
        newest_first = counted[::-1]
        out.append(
            InsightPlan(
                group=group,
                estimate=est,
                members=tuple(c.episode_id for c in newest_first),
                turn_ids=tuple(c.turn_id for c in newest_first),
                text=statement(group, est),
                replaces=current.id if current else None,
            )
        )
    return out


# What an insight weighs against other semantic memories: a cluster's typical quality total.
INSIGHT_IMPORTANCE = 0.6


def plan_agent(
    calls: Sequence[ToolCall],
    open_insights: Sequence[OpenToolInsight],
    params: ToolInsightParams = ToolInsightParams(),
) -> list[AgentInsightWrite]:
    """Agent-wide insights: the same groups, estimates and sentences as `plan`, over the calls of all the
    agent's users (each call carries its `user_id`). Idempotent like `plan`: a group whose open version
    already counts every call read (same total, same newest call) is left alone, so a second review
    planning after the first has written changes nothing.

    Each insight keeps how many users its group's calls came from (`users`) and whose call each member
    was: the read side lists a caller's own turn ids only and hides a group no other user shares with
    enough users to be a task kind rather than one person's (tool_insights_sql.py)."""
    by_episode = {c.episode_id: c.user_id or "" for c in calls}
    users_of: dict[str, set[str]] = {}
    for c in calls:
        users_of.setdefault(group_of(c).key, set()).add(c.user_id or "")
    return [
        AgentInsightWrite(
            text=p.text,
            details=p.details() | {"scope": "agent", "users": len(users_of[p.group.key])},
            members=tuple((e, by_episode[e]) for e in p.members),
            valid_from=p.estimate.last_ts,
            importance=INSIGHT_IMPORTANCE,
            replaces=p.replaces,
        )
        for p in plan(calls, open_insights, params)
    ]


def agent_planner(params: ToolInsightParams) -> AgentInsightPlanner:
    """`plan_agent` with these params, as the store calls it under the agent's lock."""
    return partial(plan_agent, params=params)
