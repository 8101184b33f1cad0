"""Ending a session: hand its confirmed working-memory slots to the light review, then the end event.

Shared by the Python client (straight to Redis) and the HTTP API, so both behave the same.
"""

from __future__ import annotations

from datetime import datetime

from pipeline.core.ports import EventSink
from pipeline.ingest.validation import encode_event, parse_event
from pipeline.ingest.working_memory import WorkingMemoryStore, slot_turns


def end_session(
    stream: EventSink,
    memory: WorkingMemoryStore,
    *,
    agent_id: str,
    user_id: str,
    session_id: str,
    now: datetime,
) -> int:
    """Push one turn per confirmed slot, then the session_end event (one pipeline, in that order, so the
    light review the end triggers sees the slots). Returns how many slots were handed over."""
    end = parse_event(
        {"kind": "session_end", "agent_id": agent_id, "user_id": user_id, "session_id": session_id}, now=now
    )
    state = memory.get(agent_id, user_id, session_id)
    turns = [
        parse_event(fields, now=now)
        for fields in slot_turns(state, agent_id=agent_id, user_id=user_id, session_id=session_id, now=now)
    ]
    stream.add_many([encode_event(e) for e in [*turns, end]])
    if not state.empty:
        # The session is over; its state has been handed on. Deleting only after the XADD means a
        # failure in between leaves the state for a retried end (the slot turn_ids are idempotent).
        memory.delete(agent_id, user_id, session_id)
    return len(turns)
