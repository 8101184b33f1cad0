"""When to review what. Pure: backlog and `now` in, dispatch decisions out (DESIGN §2).

- a scope with >= batch_size episodes not yet through a full review gets a full review
  (light-reviewed episodes count, or users with short sessions would never be clustered);
- otherwise a session that has ended, or has been idle for idle_s, gets a light review of its
  episodes that no review has seen yet.

Under a backlog the decisions come out most urgent first (the lowest priority number waiting: user
turns 1, agent 2, tool 3; then the longest waiting), so that a scheduler allowed to dispatch only a
few batches at a time spends them on user turns, fairly across scopes.

A scope's episodes already in flight (in batches claimed, queued or running) count too (issue 44): a scope
with fewer goes first, and a scope gets a new batch only while its episodes in flight stay within
`per_scope`. Without that, a busy scope (thousands of statements, its oldest pending episode always the
oldest of all) had every batch it could fill dispatched first, and another scope's review queued behind all
of them in the worker's FIFO queue. Episodes, not batches: a scope of many short sessions (one light review
each, a turn or two) capped at two batches got one review per busy batch ahead of it and fell behind
(`hindsight bench busy-scope`: its latency grew through the run), though its reviews hold nobody up.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from pipeline.core.models import Dispatch, Scope, ScopeBacklog


def decide(
    backlogs: list[ScopeBacklog],
    *,
    now: datetime,
    batch_size: int,
    idle_s: float,
    in_flight: Mapping[Scope, int] | None = None,
    per_scope: int | None = None,
    max_batch: int | None = None,
) -> list[Dispatch]:
    """The reviews to start now, most urgent first. `idle_s` is in seconds; `now` must be timezone-aware.

    `in_flight`: each scope's episodes in batches not finished yet; `per_scope`: the most a scope may have
    (None: no cap); `max_batch`: the most episodes one batch claims (None: all pending). A scope with nothing
    in flight always gets its batch, however large.
    """
    flying = in_flight or {}
    ranked: list[tuple[tuple[int, int, int], Dispatch]] = []

    def size(pending: int) -> int:
        return pending if max_batch is None else min(pending, max_batch)

    for backlog in backlogs:
        busy = flying.get(backlog.scope, 0)
        room = None if per_scope is None else per_scope - busy
        if room is not None and room <= 0:
            continue  # its turn comes when one of its batches is done
        if backlog.pending_full >= batch_size:
            # A full review takes every pending episode of the scope (up to max_batch), sessions included.
            if room is not None and busy > 0 and size(backlog.pending_full) > room:
                continue
            top, first = backlog.urgency
            ranked.append(((top, busy, first), Dispatch(backlog.scope, "full", "batch_size")))
            continue
        due: list[tuple[tuple[int, int, int], int, Dispatch]] = []
        for session in backlog.sessions:
            if session.pending_light <= 0:
                continue
            if session.ended:
                d = Dispatch(backlog.scope, "light", "session_end", session.session_id)
            elif (now - session.last_received_at).total_seconds() >= idle_s:
                d = Dispatch(backlog.scope, "light", "idle", session.session_id)
            else:
                continue
            due.append(
                ((session.top_priority, busy, session.first_pending_id), size(session.pending_light), d)
            )
        taken = busy
        for key, n, d in sorted(due, key=lambda x: x[0]):
            if per_scope is not None and taken > 0 and taken + n > per_scope:
                break  # the most urgent sessions first, as many as the scope's room holds
            ranked.append((key, d))
            taken += n
    # Most urgent priority first; among equals, the scope with fewer batches in flight, then the one whose
    # oldest such episode waited longest, so that a scheduler dispatching one batch at a time rotates over
    # scopes instead of draining one of them.
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
