"""Session working memory over HTTP: read, change and clear the live state of one session."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from pipeline.adapters.working_memory_redis import RedisWorkingMemory
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import ApiDeps, Deps
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import utcnow
from pipeline.ingest.working_memory import parse_change

router = APIRouter(tags=["working memory"])
PATH = "/v1/sessions/{session_id}/working-memory"


Id = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)]


def store(deps: ApiDeps) -> RedisWorkingMemory:
    """A view over the API's Redis connection (cheap: no connection of its own)."""
    return RedisWorkingMemory(deps.stream.client, deps.settings.working_memory)


def state_json(deps: ApiDeps, agent_id: str, user_id: str, session_id: str) -> dict[str, Any]:
    """What recall puts under `working_memory` for a session: the state, empty if none is stored."""
    return {"session_id": session_id, **store(deps).get(agent_id, user_id, session_id).to_json()}


class WorkingMemoryChange(BaseModel):
    agent_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    user_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    task: str | None = Field(None, description='the current task; "" clears it')
    slots: dict[str, str | None] | None = Field(
        None, description="confirmed slots to set; a null value removes that slot"
    )
    pending_questions: list[str] | None = Field(None, description="replaces the list of open questions")
    replace: bool = Field(False, description="start from an empty state instead of merging")

    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "agent_id": "travel-bot",
                    "user_id": "u42",
                    "task": "book a flight to Lisbon",
                    "slots": {"home_city": "Berlin", "seat": "aisle"},
                    "pending_questions": ["which date?"],
                }
            ]
        }
    }


@router.get(PATH)
def get_working_memory(
    deps: Deps, caller: Caller, session_id: str, agent_id: Id, user_id: Id
) -> dict[str, Any]:
    """The session's working memory (empty, with `expires_in_s` null, when none is stored or it expired)."""
    guard(caller, agent_id, user_id, "read")
    return state_json(deps, agent_id, user_id, session_id)


@router.patch(PATH)
def change_working_memory(
    deps: Deps, caller: Caller, session_id: str, body: WorkingMemoryChange
) -> dict[str, Any]:
    """Merge a change into the session's working memory and restart its TTL."""
    guard(caller, body.agent_id, body.user_id, "write")
    wm = store(deps)
    change = parse_change(
        task=body.task,
        slots=body.slots,
        pending_questions=body.pending_questions,
        replace=body.replace,
        limits=wm.limits,
    )
    state = wm.change(body.agent_id, body.user_id, session_id, change, now=utcnow())
    return {"session_id": session_id, **state.to_json()}


@router.delete(PATH)
def clear_working_memory(
    deps: Deps, caller: Caller, session_id: str, agent_id: Id, user_id: Id
) -> dict[str, Any]:
    guard(caller, agent_id, user_id, "write")
    return {"session_id": session_id, "deleted": store(deps).delete(agent_id, user_id, session_id)}
