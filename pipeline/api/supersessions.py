"""HTTP endpoints of knowledge updates (issue 39): which statement superseded which, and undoing a wrong link.

An undo is a write to the scope (its agent, or an operator's admin key), audited in memory_audit; the
link's row stays, marked undone, so that the next review does not link the pair again.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from pipeline.adapters.postgres.supersession_sql import MAX_LIST, SupersessionStore
from pipeline.api.auth import Caller, guard
from pipeline.core.authz import audit_key
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import utcnow

router = APIRouter()


class UndoRequest(BaseModel):
    agent_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    user_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    reason: str = Field(min_length=1, max_length=2000)
    actor: str = Field("api", min_length=1, max_length=MAX_ID_CHARS)


def _store(request: Request) -> SupersessionStore:
    return SupersessionStore(request.app.state.deps.repo.engine)


@router.get("/v1/supersessions")
def list_supersessions(
    request: Request,
    caller: Caller,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    episode_id: Annotated[int | None, Query(ge=1)] = None,
    include_undone: bool = True,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = 200,
) -> dict[str, Any]:
    """The scope's supersessions, newest first: both statements, when, what found it and why, undone or not."""
    guard(caller, agent_id, user_id, "read")
    links = _store(request).list(
        agent_id, user_id, include_undone=include_undone, episode_id=episode_id, limit=limit
    )
    return {"supersessions": links}


@router.post("/v1/supersessions/{link_id}/undo")
def undo_supersession(request: Request, caller: Caller, link_id: int, body: UndoRequest) -> dict[str, Any]:
    """The older statement holds again (recall stops demoting it); audited; never re-linked by review."""
    guard(caller, body.agent_id, body.user_id, "write")
    return _store(request).undo(
        link_id,
        agent_id=body.agent_id,
        user_id=body.user_id,
        actor=body.actor,
        key_prefix=audit_key(caller),
        reason=body.reason,
        now=utcnow(),
    )
