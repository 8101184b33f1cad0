"""Domain values. Frozen, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
Source = Literal["user", "agent", "tool", "external"]
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
SOURCES: tuple[str, ...] = ("user", "agent", "tool", "external")
SPACES: tuple[str, ...] = ("private", "shared", "system")

# Default source for a role when the caller does not say.
DEFAULT_SOURCE: dict[str, str] = {"user": "user", "assistant": "agent", "tool": "tool", "system": "agent"}
# Lower is reviewed first under backlog (DESIGN §2): user turns, then agent, then tool output.
PRIORITY_BY_SOURCE: dict[str, int] = {"user": 1, "agent": 2, "external": 2, "tool": 3}


@dataclass(frozen=True, slots=True)
class Scope:
    agent_id: str
    user_id: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn as written by an agent service."""

    turn_id: str
    agent_id: str
    user_id: str
    session_id: str
    role: str
    content: str
    ts: datetime
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def priority(self) -> int:
        explicit = self.metadata.get("priority")
        if isinstance(explicit, int) and not isinstance(explicit, bool):
            return explicit
        return PRIORITY_BY_SOURCE[self.source]


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """The agent service says a session is over: review what it left pending."""

    agent_id: str
    user_id: str
    session_id: str
    ts: datetime


StreamEvent = Turn | SessionEnd


@dataclass(frozen=True, slots=True)
class Hit:
    """One recall result (the JSON shape of DESIGN §3)."""

    id: str
    kind: Literal["semantic", "episode"]
    text: str
    score: float
    weight: float
    valid_from: datetime | None
    valid_to: datetime | None
    source_turn_ids: tuple[str, ...]
    session_id: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "score": round(self.score, 6),
            "weight": round(self.weight, 6),
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "source_turn_ids": list(self.source_turn_ids),
            "session_id": self.session_id,
        }
