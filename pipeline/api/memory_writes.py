"""Changing a memory (forget it, or change its weight, tags, core flag or status; audited) and reading
the fact chains (what is true now, or was at `as_of`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from pipeline.adapters.postgres.supersession_sql import SupersessionStore
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps, memory_ref
from pipeline.core.authz import audit_key
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import parse_ts, utcnow

router = APIRouter()


class ForgetRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"agent_id": "support-bot", "user_id": "u42", "hard": False, "reason": "user request"}
            ]
        }
    )

    agent_id: str
    user_id: str
    hard: bool = False
    reason: str = Field(min_length=1, max_length=2000)
    actor: str = Field("api", min_length=1, max_length=MAX_ID_CHARS)


class UpdateRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "agent_id": "support-bot",
                    "user_id": "u42",
                    "weight": 2.0,
                    "core": True,
                    "reason": "allergy",
                }
            ]
        }
    )

    agent_id: str
    user_id: str
    weight: float | None = Field(None, ge=0, le=10)
    tags: list[Annotated[str, Field(min_length=1, max_length=100)]] | None = Field(None, max_length=50)
    core: bool | None = None
    status: Literal["kept", "cold", "forgotten"] | None = None
    reason: str = Field(min_length=1, max_length=2000)
    actor: str = Field("api", min_length=1, max_length=MAX_ID_CHARS)


@router.post("/v1/memories/{memory_id}/forget")
def forget(deps: Deps, caller: Caller, memory_id: str, body: ForgetRequest) -> dict[str, Any]:
    """Soft forget (out of recall, kept for audit, reversible) or hard forget (purged everywhere)."""
    guard(caller, body.agent_id, body.user_id, "write")
    kind, ref = memory_ref(memory_id)
    scope = {
        "agent_id": body.agent_id,
        "user_id": body.user_id,
        "actor": body.actor,
        "key_prefix": audit_key(caller),
        "reason": body.reason,
    }
    if body.hard:
        return {
            "forgotten": memory_id,
            "mode": "hard",
            "purged": deps.forgetting.hard_forget(kind, ref, **scope),
        }
    deps.forgetting.soft_forget(kind, ref, now=utcnow(), **scope)
    return {"forgotten": memory_id, "mode": "soft"}


@router.patch("/v1/memories/{memory_id}")
def update_memory(deps: Deps, caller: Caller, memory_id: str, body: UpdateRequest) -> dict[str, Any]:
    """Change weight, tags, the core flag or status (kept / cold / forgotten); audited."""
    guard(caller, body.agent_id, body.user_id, "write")
    kind, ref = memory_ref(memory_id)
    changes = body.model_dump(include={"weight", "tags", "core", "status"}, exclude_none=True)
    if not changes:
        raise InvalidTurn("body: nothing to update (weight, tags, core or status)")
    try:
        result = deps.forgetting.update(
            kind,
            ref,
            agent_id=body.agent_id,
            user_id=body.user_id,
            changes=changes,
            actor=body.actor,
            key_prefix=audit_key(caller),
            reason=body.reason,
            now=utcnow(),
        )
    except ValueError as exc:
        raise InvalidTurn(str(exc)) from exc
    return {"updated": memory_id, **result}


@router.get("/v1/facts")
def get_facts(
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    entity: str | None = None,
    attribute: str | None = None,
    as_of: str | None = None,
    history: bool = False,
) -> dict[str, Any]:
    """What is true now (or was true at `as_of`); with `history`, every version of every chain."""
    guard(caller, agent_id, user_id, "read")
    when = parse_ts(as_of, field_name="as_of") if as_of else None
    rows = deps.repo.facts(agent_id, user_id, entity=entity, attribute=attribute, as_of=when, history=history)
    if not history:
        return {"facts": rows}
    # The chains review found beyond the rule table's attributes (issue 39): statement superseded by statement.
    links = SupersessionStore(deps.repo.engine).list(agent_id, user_id)
    return {"facts": rows, "updates": links}
