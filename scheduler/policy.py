"""When to review what. Pure: backlog and `now` in, dispatch decisions out (DESIGN §2).

- a scope with >= batch_size episodes not yet through a full review gets a full review
  (light-reviewed episodes count, or users with short sessions would never be clustered);
- otherwise a session that has ended, or has been idle for idle_s, gets a light review of its
  episodes that no review has seen yet.

Under a backlog the decisions come out most urgent first (the lowest priority number waiting: user
turns 1, agent 2, tool 3; then the longest waiting), so that a scheduler allowed to dispatch only a
few batches at a time spends them on user turns, fairly across scopes.
"""

from __future__ import annotations

from datetime import datetime

from pipeline.core.models import Dispatch, Scope, ScopeBacklog


def decide(backlogs: list[ScopeBacklog], *, now: datetime, batch_size: int, idle_s: float) -> list[Dispatch]:
    """The reviews to start now, most urgent first. `idle_s` is in seconds; `now` must be timezone-aware."""
    ranked: list[tuple[tuple[int, int], Dispatch]] = []
    for backlog in backlogs:
        if backlog.pending_full >= batch_size:
            # A full review takes every pending episode of the scope, sessions included.
            ranked.append((backlog.urgency, Dispatch(backlog.scope, "full", "batch_size")))
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
            ranked.append(((session.top_priority, session.first_pending_id), d))
    # Most urgent priority first; among equals, the one whose oldest such episode waited longest, so that
    # a scheduler dispatching one batch at a time rotates over scopes instead of draining one of them.
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
