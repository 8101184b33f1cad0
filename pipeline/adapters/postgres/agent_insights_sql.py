"""Agent-wide tool insights in PostgreSQL (issue 30): read under the agent's lock, let the planner decide,
write — inside a full review's transaction, like a fact chain (fact_chains.py).

An agent-wide insight counts the calls of all the agent's users, so full reviews of two users of one
agent both want to re-version it. Each takes a transaction-scoped advisory lock on the agent, then reads
the agent's calls and its open agent-wide insights, and only then plans: the second review sees what
the first committed, and a group the first already counted in full is left alone (the planner is
idempotent). The partial unique index `ux_semantic_agent_insight_open` (migration 0020) backs "one
current version per group" even if some writer forgot the lock.

Lock order: a review already holds its scope's lock (review_writes.scope_lock_key) and its fact chains'
locks when it gets here; nothing takes this lock first and then one of those, so no deadlock.

Storage: `semantic_memories` with user_id NULL (no user scope: every per-scope query says
`user_id = :u`, which a NULL never matches, so recall, listings, forget and the inspector of a user
scope cannot reach these rows by accident), no embedding (never indexed: recall is per user scope, and
these rows are served by /v1/tool-insights and /v1/prompt only) and their provenance in
`agent_insight_members` with the user each call belongs to, not in `semantic_members` (which per-scope
code joins from an episode to "its" memories).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, text
from sqlalchemy.orm import Session

from pipeline.adapters.postgres import fact_chains
from pipeline.adapters.postgres.tables import semantic_memories
from pipeline.core.review_records import AgentInsightPlanner, AgentInsightWrite, OpenToolInsight
from pipeline.core.tool_calls import TOOL_INSIGHT_METHOD, ToolCall, tool_call_of


def agent_lock_key(agent_id: str) -> int:
    """The agent's tool-insight lock. "\\x00agent" is no user id (ids are printable, validation.py), so
    this key never equals a scope's or a chain's."""
    return fact_chains.chain_lock_key(agent_id, "\x00agent", "\x00tool_insights", "")


# Every call of the agent a review may count, whatever the user: as review_sql._TOOL_CALLS, without the
# user (served by ix_episodes_agent_tool_calls, 0020).
_AGENT_CALLS = text(
    """
    SELECT e.id, e.turn_id, e.ts, e.metadata, e.user_id FROM episodes e
    WHERE e.agent_id = :a AND e.role = 'tool' AND (e.metadata->>'tool') IS NOT NULL
      AND e.status NOT IN ('forgotten', 'quarantined', 'rejected')
    ORDER BY e.ts DESC, e.id DESC
    LIMIT :limit
    """
)

_OPEN_AGENT_INSIGHTS = text(
    """
    SELECT m.id, m.details, m.version FROM semantic_memories m
    WHERE m.agent_id = :a AND m.user_id IS NULL AND m.method = :method AND m.valid_to IS NULL
    """
)

_HAS_TOOL_WORK = text(
    """
    SELECT EXISTS (
        SELECT 1 FROM episodes e
        WHERE e.agent_id = :a AND e.role = 'tool' AND (e.metadata->>'tool') IS NOT NULL
    ) OR EXISTS (
        SELECT 1 FROM semantic_memories m
        WHERE m.agent_id = :a AND m.user_id IS NULL AND m.method = :method AND m.valid_to IS NULL
    )
    """
)

_CLOSE = text(
    """
    UPDATE semantic_memories SET valid_to = :now
    WHERE id = ANY(CAST(:ids AS bigint[])) AND valid_to IS NULL
    RETURNING id, version
    """
)

_ATTACH = text(
    "INSERT INTO agent_insight_members (memory_id, episode_id, user_id)"
    " SELECT * FROM unnest(CAST(:memory_ids AS bigint[]), CAST(:episode_ids AS bigint[]),"
    " CAST(:user_ids AS text[]))"
)


def agent_calls(s: Session, agent_id: str, limit: int) -> list[ToolCall]:
    rows = s.execute(_AGENT_CALLS, {"a": agent_id, "limit": limit})
    return [tool_call_of(r.id, r.turn_id, r.ts, r.metadata, r.user_id) for r in rows]


def open_agent_insights(s: Session, agent_id: str) -> list[OpenToolInsight]:
    rows = s.execute(_OPEN_AGENT_INSIGHTS, {"a": agent_id, "method": TOOL_INSIGHT_METHOD})
    return [open_insight_of(r.id, r.details) for r in rows]


def open_insight_of(memory_id: int, details: dict[str, Any] | None) -> OpenToolInsight:
    """An open insight as the next review plans against it: its group key, the calls it counted and the
    time of the last one (from `semantic_memories.details`), per scope or agent-wide alike."""
    d = details or {}
    last = d.get("window", {}).get("to")
    return OpenToolInsight(
        memory_id,
        str(d.get("key", "")),
        int(d.get("calls_total", 0)),
        datetime.fromisoformat(last) if last else None,
    )


def refresh_agent_insights(
    s: Session, agent_id: str, planner: AgentInsightPlanner, now: datetime, *, call_limit: int
) -> dict[str, int]:
    """Re-plan and write the agent's agent-wide insights inside the caller's transaction.

    An agent that has logged no call record and holds no insight has nothing to plan: its full reviews
    skip the agent lock, which would otherwise queue the commits of every user's full review of a
    conversational agent behind one another for nothing (both reads use partial indexes)."""
    if not s.execute(_HAS_TOOL_WORK, {"a": agent_id, "method": TOOL_INSIGHT_METHOD}).scalar():
        return {"agent_insights_created": 0, "agent_insights_updated": 0}
    s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": agent_lock_key(agent_id)})
    writes = planner(agent_calls(s, agent_id, call_limit), open_agent_insights(s, agent_id))
    return write_agent_insights(s, agent_id, writes, now)


def write_agent_insights(
    s: Session, agent_id: str, writes: Sequence[AgentInsightWrite], now: datetime
) -> dict[str, int]:
    """New agent-wide insights and new versions, set-based. The caller holds the agent's lock."""
    counts = {"agent_insights_created": 0, "agent_insights_updated": 0}
    if not writes:
        return counts
    replaced = sorted({w.replaces for w in writes if w.replaces is not None})
    closed: dict[int, int] = {}
    if replaced:
        closed = {int(r.id): int(r.version) for r in s.execute(_CLOSE, {"ids": replaced, "now": now})}
    rows: list[dict[str, Any]] = []
    for w in writes:
        previous = w.replaces if w.replaces in closed else None
        rows.append(
            {
                "agent_id": agent_id,
                "user_id": None,
                "text": w.text,
                "embedding": None,
                "importance": w.importance,
                "valid_from": w.valid_from,
                "version": closed[previous] + 1 if previous is not None else 1,
                "previous_id": previous,
                "method": TOOL_INSIGHT_METHOD,
                "details": w.details,
            }
        )
        counts["agent_insights_updated" if previous is not None else "agent_insights_created"] += 1
    m = semantic_memories
    ids = [
        int(i) for i in s.execute(insert(m).returning(m.c.id, sort_by_parameter_order=True), rows).scalars()
    ]
    pairs = [(mid, episode, user) for mid, w in zip(ids, writes, strict=True) for episode, user in w.members]
    if pairs:
        s.execute(
            _ATTACH,
            {
                "memory_ids": [p[0] for p in pairs],
                "episode_ids": [p[1] for p in pairs],
                "user_ids": [p[2] for p in pairs],
            },
        )
    return counts
