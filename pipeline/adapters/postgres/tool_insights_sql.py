"""Reading tool insights (issue 30): the open versions of a scope's insights, with their numbers and
provenance, for /v1/tool-insights, MCP and the prompt block."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.store import SqlStore
from pipeline.core.tool_calls import TOOL_INSIGHT_METHOD

# The task filter matches either way round, case-insensitively: "flight search" finds the insights of
# task "flight search for a family", and "cheap flight search to Tokyo" those of "flight search".
_OPEN_INSIGHTS = text(
    """
    SELECT m.id, m.text, m.details, m.version, m.valid_from, m.weight,
           coalesce(array_agg(e.turn_id ORDER BY e.ts DESC, e.id DESC) FILTER (WHERE e.id IS NOT NULL),
                    '{}') AS turn_ids
    FROM semantic_memories m
    LEFT JOIN semantic_members sm ON sm.memory_id = m.id
    LEFT JOIN episodes e ON e.id = sm.episode_id
    WHERE m.agent_id = :a AND m.user_id = :u AND m.method = :method AND m.valid_to IS NULL
      AND m.status = 'kept'
      AND (CAST(:task AS text) IS NULL
           OR strpos(lower(coalesce(m.details->>'task', '')), lower(CAST(:task AS text))) > 0
           OR (m.details->>'task' IS NOT NULL
               AND strpos(lower(CAST(:task AS text)), lower(m.details->>'task')) > 0))
    GROUP BY m.id
    """
)


class ToolInsightReads(SqlStore):
    def tool_insights(
        self, agent_id: str, user_id: str, *, task: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Open tool insights of a scope (those of `task` when given): by task, then best success rate
        first, then most calls. Each with its numbers (`details`) and provenance (call turn ids, newest
        first)."""
        params = {"a": agent_id, "u": user_id, "method": TOOL_INSIGHT_METHOD, "task": task or None}
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.execute(_OPEN_INSIGHTS, params).all()
        out = [_insight(r) for r in rows]
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


def _insight(r: Any) -> dict[str, Any]:
    details = r.details or {}
    return {
        "id": f"semantic:{r.id}",
        "text": r.text,
        **{k: details.get(k) for k in _NUMBERS},
        "version": r.version,
        "valid_from": r.valid_from.isoformat(),
        "weight": r.weight,
        "source_turn_ids": list(r.turn_ids),
    }
