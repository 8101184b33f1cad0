"""Turns in: POST /v1/turns (validated, then queued on the Redis stream) and POST /v1/sessions/end."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from pipeline.adapters.postgres.turn_fingerprints_sql import stored_fingerprints
from pipeline.adapters.turn_id_ledger import TurnIdLedger
from pipeline.api import working_memory
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.core.errors import InvalidTurn, StoreUnavailable, TurnIdConflict
from pipeline.core.logging import get_logger
from pipeline.core.models import StreamEvent, Turn
from pipeline.ingest import session_end, turn_ids
from pipeline.ingest.validation import RepeatedTurnIds, encode_event, parse_event, utcnow

log = get_logger(__name__)

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
        409: {
            "description": "a turn_id its scope already used for a different turn, in this request, an "
            "earlier one or a stored turn (the same id with the same role and text is a retry: 202)"
        },
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
    ledger = TurnIdLedger(
        deps.stream.client, f"{deps.stream.stream}:turn-ids", ttl_s=deps.settings.turn_id_ledger_s
    )
    reused, recorded = _reused_turn_ids(deps, ledger, events)
    if reused:
        return _invalid(reused, 409)  # type: ignore[return-value]
    try:
        deps.stream.add_many([encode_event(e) for e in events])
    except Exception:
        ledger.forget(recorded)  # not accepted: a retry may carry another turn under these ids
        raise
    return {"accepted": len(events), "turn_ids": [getattr(e, "turn_id", None) for e in events]}


@router.post("/v1/sessions/end", status_code=202)
def end_session(deps: Deps, caller: Caller, body: SessionEndRequest) -> dict[str, Any]:
    """End a session: its confirmed working-memory slots go to the light review as facts."""
    guard(caller, body.agent_id, body.user_id, "write")
    slots = session_end.end_session(
        deps.stream, working_memory.store(deps), **body.model_dump(), now=utcnow()
    )
    return {"accepted": 1, "slots_handed_over": slots}


def _reused_turn_ids(
    deps: Deps, ledger: TurnIdLedger, events: list[StreamEvent]
) -> tuple[list[dict[str, Any]], list[turn_ids.TurnKey]]:
    """Items whose turn_id an earlier request or a stored turn used for another turn (nothing recorded
    then), else none and the ids recorded now. The ledger knows turns that may still be in the stream;
    PostgreSQL the stored ones whose ledger entry expired (or predates it)."""
    indexed = [(i, e) for i, e in enumerate(events) if isinstance(e, Turn)]
    keys = [turn_ids.key(t) for _, t in indexed]
    recorded = ledger.check_and_record(keys, [turn_ids.turn_fingerprint(t) for _, t in indexed])
    if recorded.conflicts:
        return [
            {
                "index": indexed[j][0],
                "reason": turn_ids.conflict_reason(indexed[j][1].turn_id, "by an earlier request"),
            }
            for j in recorded.conflicts
        ], []
    fresh = [keys[j] for j in recorded.fresh]
    try:
        stored = stored_fingerprints(deps.repo.engine, fresh)
    except StoreUnavailable as exc:
        # Turns are taken in while PostgreSQL is down (they wait in the stream); a conflict with a stored
        # turn then reaches the scheduler, which dead-letters it with its reason.
        log.warning("turns.reuse_check_skipped", error=str(exc)[:200])
        stored = {}
    found = turn_ids.conflicts([indexed[j][1] for j in recorded.fresh], stored, "by a stored turn")
    if found:
        ledger.forget(fresh)
        return [{"index": indexed[recorded.fresh[j]][0], "reason": r} for j, r in found.items()], []
    return [], fresh


def _invalid(errors: list[dict[str, Any]], status: int = 422) -> JSONResponse:
    first = errors[0]
    return JSONResponse(
        {"detail": f"item {first['index']}: {first['reason']}", "errors": errors[:100]}, status_code=status
    )
