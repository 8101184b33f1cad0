"""A tool call as an agent service logs it: a `tool` turn whose metadata names the tool (issue 30).

Pure values. `metadata.tool` (name), `args` (object), `status` (ok | error | timeout), `latency_ms`,
`error` and `task` (what the agent was doing) turn a tool turn into a call record that review scores on its
own dimensions and folds into tool insights; a tool turn without them is an ordinary turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

TOOL_ROLE = "tool"
TOOL_STATUSES: tuple[str, ...] = ("ok", "error", "timeout")
# The metadata keys that describe a call; `tool` is the one that makes a tool turn a call record.
TOOL_KEYS: tuple[str, ...] = ("tool", "args", "status", "latency_ms", "error", "task")
# The semantic memories a full review writes from tool calls (semantic_memories.method).
TOOL_INSIGHT_METHOD = "tool_insight"
# Whose calls an insight counts: the agent's across all its users (stored with user_id NULL), or one
# scope's (agent, user). Agent-wide is what the API serves by default: tool skill is the agent's.
INSIGHT_SCOPES: tuple[str, ...] = ("agent", "user")


def is_tool_call(role: str, metadata: Mapping[str, Any]) -> bool:
    """A tool turn that names its tool: a call record, reviewed as one."""
    return role == TOOL_ROLE and isinstance(metadata.get("tool"), str)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call, as review reads it back from its episode."""

    turn_id: str
    episode_id: int
    ts: datetime
    tool: str
    arg_keys: tuple[str, ...]  # sorted: the call's argument pattern
    status: str  # ok | error | timeout
    latency_ms: float | None
    error: str | None
    task: str | None
    user_id: str | None = None  # read back for agent-wide insights only: whose call it was

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def tool_call_of(
    episode_id: int, turn_id: str, ts: datetime, metadata: Mapping[str, Any], user_id: str | None = None
) -> ToolCall:
    """The call record of a validated tool turn's metadata (validation guarantees the types)."""
    args = metadata.get("args")
    latency = metadata.get("latency_ms")
    error = metadata.get("error")
    task = metadata.get("task")
    return ToolCall(
        turn_id=turn_id,
        episode_id=episode_id,
        ts=ts,
        tool=str(metadata["tool"]),
        arg_keys=tuple(sorted(args)) if isinstance(args, dict) else (),
        status=str(metadata.get("status", "ok")),
        latency_ms=float(latency)
        if isinstance(latency, int | float) and not isinstance(latency, bool)
        else None,
        error=error if isinstance(error, str) and error.strip() else None,
        task=task.strip() if isinstance(task, str) and task.strip() else None,
        user_id=user_id,
    )
