"""GET /v1/memories: a scope's memories with filters and offset paging (what MCP `memory_list` calls)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from pipeline.adapters.postgres.memory_list_sql import list_memories

router = APIRouter(tags=["memories"])
Status = Literal["pending", "kept", "cold", "merged", "forgotten"]


def _deps(request: Request) -> Any:  # ApiDeps (see pipeline/api/working_memory.py for why Any)
    return request.app.state.deps


@router.get("/v1/memories")
def get_memories(
    deps: Annotated[Any, Depends(_deps)],
    agent_id: Annotated[str, Query(min_length=1, max_length=256)],
    user_id: Annotated[str, Query(min_length=1, max_length=256)],
    kind: Literal["episode", "semantic"] | None = None,
    status: Status | None = None,
    session_id: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> dict[str, Any]:
    """Newest first. `next_offset` is the offset of the next page, null on the last one."""
    page, next_offset = list_memories(
        deps.repo.engine,
        agent_id,
        user_id,
        kind=kind,
        status=status,
        session_id=session_id,
        limit=limit,
        offset=offset,
    )
    return {"memories": page, "next_offset": next_offset}
