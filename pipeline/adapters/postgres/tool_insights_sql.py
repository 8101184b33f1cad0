"""Reading tool insights (issue 30): the open versions of a scope's insights, or of its agent's agent-wide
ones, with their numbers and provenance, for /v1/tool-insights, MCP and the prompt block.

Isolation of agent-wide insights, which rest on the calls of every user of the agent. A read is always for
one scope (agent, user) and must return nothing of another user's but aggregates:
- counts, rates, latencies and the time window are the agent's, across users (what agent-wide means);
- provenance (`source_turn_ids`) lists the requesting user's own calls only. The other users' turn ids
  are not aggregates: they name other scopes' episodes, and with an id a caller could go looking.
  Only an operator asks for all of them (`provenance="all"`, the API allows it to admin keys only);
- a group no other user shares is another person's, not a task kind: its task text is free text the
  agent wrote about that person's request ("book flights for Ana's wedding"). An agent-wide insight is
  shown to a user who has calls in it, or when its calls come from at least `min_users` users.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.store import SqlStore
from pipeline.core.tool_calls import TOOL_INSIGHT_METHOD

# The task filter matches either way round, case-insensitively: "flight search" finds the insights of
# task "flight search for a family", and "cheap flight search to Tokyo" those of "flight search".
_TASK_MATCHES = """(CAST(:task AS text) IS NULL
           OR strpos(lower(coalesce(m.details->>'task', '')), lower(CAST(:task AS text))) > 0
           OR (m.details->>'task' IS NOT NULL
               AND strpos(lower(CAST(:task AS text)), lower(m.details->>'task')) > 0))"""

_OPEN_INSIGHTS = text(
    f"""
    SELECT m.id, m.text, m.details, m.version, m.valid_from, m.weight,
           coalesce(array_agg(e.turn_id ORDER BY e.ts DESC, e.id DESC) FILTER (WHERE e.id IS NOT NULL),
                    '{{}}') AS turn_ids
    FROM semantic_memories m
    LEFT JOIN semantic_members sm ON sm.memory_id = m.id
    LEFT JOIN episodes e ON e.id = sm.episode_id
    WHERE m.agent_id = :a AND m.user_id = :u AND m.method = :method AND m.valid_to IS NULL
      AND m.status = 'kept'
      AND {_TASK_MATCHES}
    GROUP BY m.id
    """
)


# Agent-wide insights (user_id NULL), with the requesting user's share of the provenance only.
_OPEN_AGENT_INSIGHTS = text(
    f"""
    SELECT m.id, m.text, m.details, m.version, m.valid_from, m.weight,
           coalesce(own.turn_ids, '{{}}') AS turn_ids, coalesce(own.n, 0) AS user_calls
    FROM semantic_memories m
    LEFT JOIN LATERAL (
        SELECT array_agg(e.turn_id ORDER BY e.ts DESC, e.id DESC) AS turn_ids,
               count(*) FILTER (WHERE am.user_id = :u) AS n
        FROM agent_insight_members am JOIN episodes e ON e.id = am.episode_id
        WHERE am.memory_id = m.id AND (CAST(:all AS boolean) OR am.user_id = :u)
    ) own ON true
    WHERE m.agent_id = :a AND m.user_id IS NULL AND m.method = :method AND m.valid_to IS NULL
      AND m.status = 'kept'
      AND {_TASK_MATCHES}
      AND (CAST(:all AS boolean)
           OR coalesce((m.details->>'users')::int, 0) >= :min_users
           OR own.n > 0)
    """
)

# An agent-wide insight whose calls come from fewer users is shown only to a user with calls in it.
MIN_USERS_FOR_OTHERS = 2


class ToolInsightReads(SqlStore):
    def tool_insights(
        self,
        agent_id: str,
        user_id: str,
        *,
        task: str | None = None,
        limit: int = 50,
        scope: str = "user",
        provenance: str = "user",
        min_users: int = MIN_USERS_FOR_OTHERS,
    ) -> list[dict[str, Any]]:
        """Open tool insights of a scope (`scope="user"`) or of its agent across its users (`"agent"`),
        those of `task` when given: by task, then best success rate first, then most calls. Each with
        its numbers (`details`) and provenance (call turn ids, newest first): for agent-wide ones, the
        turn ids of `user_id`'s calls only unless `provenance="all"` (an operator's read; the caller
        checks who may ask). See the module docstring for why."""
        params: dict[str, Any] = {
            "a": agent_id,
            "u": user_id,
            "method": TOOL_INSIGHT_METHOD,
            "task": task or None,
        }
        with translate_errors(), self.engine.connect() as conn:
            if scope == "agent":
                every = provenance == "all"
                rows = conn.execute(_OPEN_AGENT_INSIGHTS, params | {"all": every, "min_users": min_users})
                out = [_insight(r, scope="agent", provenance=provenance) for r in rows.all()]
            else:
                out = [
                    _insight(r, scope="user", provenance="user") for r in conn.execute(_OPEN_INSIGHTS, params)
                ]
        out.sort(key=lambda i: (i["task"] or "\uffff", -(i["success_rate"] or 0.0), -(i["calls"] or 0)))
        return out[:limit]


_NUMBERS = (
    "tool",
    "arg_keys",
    "task",
    "success_rate",
    "calls",
    "ok",
    "calls_total",
    "median_latency_ms",
    "failures",
    "since",
    "previous_rate",
    "window",
)


def _insight(r: Any, *, scope: str, provenance: str) -> dict[str, Any]:
    details = r.details or {}
    turn_ids = list(r.turn_ids)
    return {
        "id": f"semantic:{r.id}",
        "text": r.text,
        **{k: details.get(k) for k in _NUMBERS},
        "version": r.version,
        "valid_from": r.valid_from.isoformat(),
        "weight": r.weight,
        "source_turn_ids": turn_ids,
        # Added with agent-wide insights (the fields above keep their names and meaning):
        "scope": scope,  # whose calls it counts: "agent" (all its users) or "user" (this scope's)
        "users": details.get("users", 1 if scope == "user" else None),  # distinct users among its calls
        # How many of the calls it counts are this user's (all of them for a user-scope insight).
        "user_calls": int(getattr(r, "user_calls", len(turn_ids))),
        "provenance": provenance,  # whose turn ids source_turn_ids lists: "user" (this user's) or "all"
    }
