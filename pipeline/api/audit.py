"""The memory audit log over HTTP: every audited change (forget, update, quarantine release or reject,
supersession undo), with the caller's `actor` and the API key that made it (issue 44)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from pipeline.adapters.postgres.audit_sql import MAX_PAGE, AuditStore
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import MAX_ID_CHARS

router = APIRouter()


@router.get("/v1/audit")
def list_audit(
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    user_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    before_id: Annotated[int | None, Query(ge=1, description="the last id of the previous page")] = None,
) -> dict[str, Any]:
    """The memory audit log, newest first. `actor` is what the caller wrote; `key` is the API key the
    server authenticated (its prefix, "keyless" with auth off, null for the system's own changes)."""
    if (agent_id is None) != (user_id is None):
        raise InvalidTurn("agent_id and user_id: give both or neither")
    guard(caller, agent_id, user_id, "read")  # no scope = every scope's log: operators only
    rows = AuditStore(deps.repo.engine).entries(
        agent_id=agent_id, user_id=user_id, limit=limit, before_id=before_id
    )
    return {"audit": rows, "next_before_id": rows[-1]["id"] if len(rows) == limit else None}
