"""Read endpoints for operators and developers: memories (list, get), scopes, the review log, dead letters."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from pipeline.adapters.dead_letters import read_dead_letters
from pipeline.adapters.postgres.inspect_sql import InspectStore, MemoryFilter
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps, memory_ref
from pipeline.core.authz import may_see_status, readable
from pipeline.core.errors import InvalidTurn, NotFound
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import parse_ts

router = APIRouter()
STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")

AgentId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS, examples=["support-bot"])]
UserId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS, examples=["u42"])]

MEMORY_EXAMPLE = {
    "id": "episode:12",
    "kind": "episode",
    "text": "I moved to Lisbon last month",
    "status": "kept",
    "weight": 1.0,
    "valid_from": "2026-11-30T20:41:07+00:00",
    "session_id": "s1",
    "source": "user",
    "quality": {"density": 0.62, "timeliness": 0.8, "uniqueness": 1.0, "actionability": 0.4, "total": 0.69},
    "source_turn_ids": ["t-1"],
}


@router.get(
    "/v1/scopes",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "scopes": [
                            {
                                "agent_id": "support-bot",
                                "user_id": "u42",
                                "episodes": 31,
                                "kept": 20,
                                "semantic": 2,
                            }
                        ]
                    }
                }
            }
        }
    },
)
def list_scopes(deps: Deps, caller: Caller) -> dict[str, Any]:
    """Every (agent_id, user_id) with memories the caller may read, most recently active first."""
    scopes = InspectStore(deps.repo.engine).scopes()
    return {"scopes": [s for s in scopes if readable(caller, s["agent_id"])]}


@router.get(
    "/v1/memories",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {"memories": [MEMORY_EXAMPLE], "total": 1, "offset": 0, "next_offset": None}
                }
            }
        }
    },
)
def list_memories(
    deps: Deps,
    caller: Caller,
    agent_id: AgentId,
    user_id: UserId,
    kind: Literal["episode", "semantic"] | None = None,
    status: Annotated[
        Literal["pending", "kept", "cold", "merged", "forgotten", "quarantined", "rejected"] | None,
        Query(description="memory status"),
    ] = None,
    session_id: Annotated[str | None, Query(description="episodes of one session only")] = None,
    since: Annotated[str | None, Query(description="ISO-8601; event time (episodes) or valid_from")] = None,
    until: Annotated[str | None, Query(description="ISO-8601, exclusive")] = None,
    contains: Annotated[
        str | None, Query(max_length=500, description="text contains (case-insensitive)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> dict[str, Any]:
    """Memories of one scope, newest first, with filters; page on with `offset=next_offset`."""
    guard(caller, agent_id, user_id, "read")
    if not may_see_status(caller, status):
        guard(caller, None, None, "admin")  # 403: quarantined turns are for operators
    f = MemoryFilter(
        agent_id=agent_id,
        user_id=user_id,
        kind=kind,
        status=status,
        session_id=session_id,
        since=parse_ts(since, field_name="since") if since else None,
        until=parse_ts(until, field_name="until") if until else None,
        contains=contains,
    )
    rows, total = InspectStore(deps.repo.engine).list_memories(f, limit=limit, offset=offset)
    next_offset = offset + len(rows) if offset + len(rows) < total else None
    return {"memories": rows, "total": total, "offset": offset, "next_offset": next_offset}


@router.get(
    "/v1/memories/{memory_id}",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        **MEMORY_EXAMPLE,
                        "facts": [
                            {
                                "entity": "user",
                                "attribute": "city",
                                "value": "Lisbon",
                                "valid_from": "2026-11-30T20:41:07+00:00",
                                "valid_to": None,
                                "current": True,
                            }
                        ],
                        "provenance": {"turn_ids": ["t-1"], "semantic_memories": []},
                    }
                }
            }
        },
        404: {
            "content": {
                "application/json": {"example": {"detail": "memory episode:99 not found in u42/support-bot"}}
            }
        },
    },
)
def get_memory(
    deps: Deps, caller: Caller, memory_id: str, agent_id: AgentId, user_id: UserId
) -> dict[str, Any]:
    """One memory: quality breakdown, weight, status, provenance and the fact versions its turns support."""
    guard(caller, agent_id, user_id, "read")
    kind, ref = memory_ref(memory_id)
    memory = InspectStore(deps.repo.engine).get_memory(kind, ref, agent_id=agent_id, user_id=user_id)
    if memory is None or not may_see_status(caller, memory["status"]):
        raise NotFound(f"memory {memory_id} not found in scope agent_id={agent_id!r} user_id={user_id!r}")
    return memory


@router.get("/v1/reviews")
def list_reviews(
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str | None, Query(max_length=MAX_ID_CHARS)] = None,
    user_id: Annotated[str | None, Query(max_length=MAX_ID_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: Annotated[int | None, Query(ge=1, description="the last id of the previous page")] = None,
) -> dict[str, Any]:
    """The review audit log, newest first: trigger, counts, per-step timings and the worker that ran it."""
    if (agent_id is None) != (user_id is None):
        raise InvalidTurn("agent_id and user_id: give both or neither")
    guard(caller, agent_id, user_id, "read")  # no scope = every scope's log: operators only
    rows = InspectStore(deps.repo.engine).reviews(
        agent_id=agent_id, user_id=user_id, limit=limit, before_id=before_id
    )
    return {"reviews": rows, "next_before_id": rows[-1]["id"] if len(rows) == limit else None}


@router.get("/v1/dead-letters")
def list_dead_letters(
    deps: Deps,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[
        str | None, Query(description="the last id of the previous page", examples=["1764535267000-0"])
    ] = None,
) -> dict[str, Any]:
    """Entries the scheduler rejected (read-only), newest first, each with the reason (operators only:
    a dead letter is any agent's raw input)."""
    guard(caller, None, None, "admin")
    if before is not None and not STREAM_ID.match(before):
        raise InvalidTurn(f"before: expected a stream id like '1764535267000-0', got {before[:40]!r}")
    letters, total = read_dead_letters(
        deps.stream.client, deps.settings.stream_dead, count=limit, before=before
    )
    return {
        "dead_letters": letters,
        "total": total,
        "next_before": letters[-1]["id"] if len(letters) == limit else None,
    }
