"""When to review what. Pure: backlog and `now` in, dispatch decisions out (DESIGN §2).

- a scope with >= batch_size episodes not yet through a full review gets a full review
  (light-reviewed episodes count, or users with short sessions would never be clustered);
- otherwise a session that has ended, or has been idle for idle_s, gets a light review of its
  episodes that no review has seen yet.

Under a backlog the decisions come out most urgent first (the lowest priority number waiting: user
turns 1, agent 2, tool 3), so that a scheduler allowed to dispatch only a few batches at a time
spends them on user turns.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pipeline.models import Scope

ReviewKind = Literal["full", "light"]
Trigger = Literal["batch_size", "session_end", "idle", "manual"]


@dataclass(frozen=True, slots=True)
class SessionBacklog:
    session_id: str
    pending_light: int  # episodes no review has claimed yet
    last_received_at: datetime  # when the newest of them reached the store
    ended: bool
    top_priority: int = 2  # the most urgent (lowest) priority among its pending episodes


@dataclass(frozen=True, slots=True)
class ScopeBacklog:
    scope: Scope
    pending_full: int  # episodes not yet claimed by a full review
    sessions: tuple[SessionBacklog, ...]

    @property
    def top_priority(self) -> int:
        return min((s.top_priority for s in self.sessions), default=2)


@dataclass(frozen=True, slots=True)
class Dispatch:
    scope: Scope
    kind: ReviewKind
    trigger: Trigger
    session_id: str | None = None


def decide(backlogs: list[ScopeBacklog], *, now: datetime, batch_size: int, idle_s: float) -> list[Dispatch]:
    """The reviews to start now, most urgent first. `idle_s` is in seconds; `now` must be timezone-aware."""
    ranked: list[tuple[int, Dispatch]] = []
    for backlog in backlogs:
        if backlog.pending_full >= batch_size:
            # A full review takes every pending episode of the scope, sessions included.
            ranked.append((backlog.top_priority, Dispatch(backlog.scope, "full", "batch_size")))
            continue
        for session in backlog.sessions:
            if session.pending_light <= 0:
                continue
            if session.ended:
                d = Dispatch(backlog.scope, "light", "session_end", session.session_id)
            elif (now - session.last_received_at).total_seconds() >= idle_s:
                d = Dispatch(backlog.scope, "light", "idle", session.session_id)
            else:
                continue
            ranked.append((session.top_priority, d))
    # Stable: equally urgent work keeps the backlog's order.
    ranked.sort(key=lambda pair: pair[0])
    return [d for _, d in ranked]


def on_demand(backlogs: list[ScopeBacklog], *, full: bool, scope: Scope | None = None) -> list[Dispatch]:
    """Reviews asked for by a person (`hindsight review`): everything pending, without waiting for a trigger."""
    decisions: list[Dispatch] = []
    for backlog in backlogs:
        if scope is not None and backlog.scope != scope:
            continue
        if full:
            if backlog.pending_full > 0:
                decisions.append(Dispatch(backlog.scope, "full", "manual"))
            continue
        decisions.extend(
            Dispatch(backlog.scope, "light", "manual", s.session_id)
            for s in backlog.sessions
            if s.pending_light > 0
        )
    return decisions
