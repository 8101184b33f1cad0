"""Turns in: POST /v1/turns (validated, then queued on the Redis stream) and POST /v1/sessions/end."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from pipeline.api import working_memory
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.core.errors import InvalidTurn, TurnIdConflict
from pipeline.ingest import session_end
from pipeline.ingest.validation import RepeatedTurnIds, encode_event, parse_event, utcnow

MAX_TURNS_PER_REQUEST = 1000
router = APIRouter()


class SessionEndRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"agent_id": "support-bot", "user_id": "u42", "session_id": "s1"}]}
    )

    agent_id: str
    user_id: str
    session_id: str


TURN_EXAMPLE = {
    "turn_id": "t-1",
    "agent_id": "support-bot",
    "user_id": "u42",
    "session_id": "s1",
    "role": "user",
    "content": "I moved to Lisbon last month",
    "ts": "2026-11-30T20:41:07+00:00",
    "source": "user",
    "metadata": {},
}


@router.post(
    "/v1/turns",
    status_code=202,
    tags=["write"],
    responses={
        202: {"content": {"application/json": {"example": {"accepted": 1, "turn_ids": ["t-1"]}}}},
        422: {
            "content": {
                "application/json": {
                    "example": {
                        "detail": "item 0: content: missing",
                        "errors": [{"index": 0, "reason": "content: missing"}],
                    }
                }
            }
        },
        409: {"description": "two different turns of one scope under one turn_id in this request"},
    },
)
def post_turns(
    deps: Deps,
    caller: Caller,
    items: Annotated[
        list[Any],
        Body(
            description="turns (DESIGN §3 stream entry fields; `metadata` an object), at most 1000",
            openapi_examples={"one turn": {"summary": "a user turn", "value": [TURN_EXAMPLE]}},
        ),
    ],
) -> dict[str, Any]:
    """Validate every item, then push all of them to the stream (all or nothing)."""
    if len(items) > MAX_TURNS_PER_REQUEST:
        raise InvalidTurn(f"body: at most {MAX_TURNS_PER_REQUEST} turns per request, got {len(items)}")
    now = utcnow()
    events, errors, conflicts = [], [], []
    repeats = RepeatedTurnIds()
    for i, item in enumerate(items):
        try:
            event = parse_event(item, now=now)
            repeats.check(event, f"item {i}")
            events.append(event)
        except TurnIdConflict as exc:
            conflicts.append({"index": i, "reason": exc.reason})
        except InvalidTurn as exc:
            errors.append({"index": i, "reason": exc.reason})
    if errors or conflicts:  # a bad item is the plainer fault: 422 before 409
        return _invalid(errors or conflicts, 422 if errors else 409)  # type: ignore[return-value]
    for e in events:  # all or nothing here too: one turn for a scope the key may not write refuses the lot
        guard(caller, getattr(e, "agent_id", None), getattr(e, "user_id", None), "write")
    deps.stream.add_many([encode_event(e) for e in events])
    return {"accepted": len(events), "turn_ids": [getattr(e, "turn_id", None) for e in events]}


@router.post("/v1/sessions/end", status_code=202)
def end_session(deps: Deps, caller: Caller, body: SessionEndRequest) -> dict[str, Any]:
    """End a session: its confirmed working-memory slots go to the light review as facts."""
    guard(caller, body.agent_id, body.user_id, "write")
    slots = session_end.end_session(
        deps.stream, working_memory.store(deps), **body.model_dump(), now=utcnow()
    )
    return {"accepted": 1, "slots_handed_over": slots}


def _invalid(errors: list[dict[str, Any]], status: int = 422) -> JSONResponse:
    first = errors[0]
    return JSONResponse(
        {"detail": f"item {first['index']}: {first['reason']}", "errors": errors[:100]}, status_code=status
    )
