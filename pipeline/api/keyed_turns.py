"""GET /v1/turns/latest: the newest turn of each key a caller gave its turns (metadata entity + attribute);
GET /v1/turns/recall: a recall answered with those keyed turns.

What the framework adapters read a LangGraph store item or an Agents SDK session item back by (issue 41).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from pipeline.adapters.postgres.keyed_sql import KeyedTurns, KeyFilter
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.api.recall_route import run_recall
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import MAX_ID_CHARS

router = APIRouter()
MAX_TURN_IDS = 200
Held = Literal["none", "pending", "all"]  # keyed_sql.HELD
HELD_DOC = (
    "which turns held by the screen count: none (as recall), pending (also those still awaiting review), "
    "all (also quarantined and rejected: a conversation's history as it was said)"
)

LATEST_EXAMPLE = {
    "turns": [
        {
            "turn_id": "lg:5d1c@3c4d",
            "memory_id": "episode:7",
            "entity": "lg:/prefs/",
            "attribute": "food",
            "content": "likes pizza",
            "metadata": {"entity": "lg:/prefs/", "attribute": "food", "value": "..."},
            "role": "assistant",
            "source": "agent",
            "session_id": "langgraph-store",
            "status": "pending",
            "ts": "2026-11-30T20:41:07+00:00",
            "first_ts": "2026-11-29T08:00:00+00:00",
            "versions": ["episode:3", "episode:7"],
            "version_turn_ids": ["lg:5d1c@1a2b", "lg:5d1c@3c4d"],
        }
    ],
    "total": 1,
    "next_offset": None,
}


@router.get(
    "/v1/turns/latest", responses={200: {"content": {"application/json": {"example": LATEST_EXAMPLE}}}}
)
def latest_turns(
    deps: Deps,
    caller: Caller,
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    entity: Annotated[str | None, Query(max_length=2000, description="metadata.entity, exactly")] = None,
    entity_prefix: Annotated[
        str | None, Query(max_length=2000, description="metadata.entity starts with")
    ] = None,
    attribute: Annotated[
        str | None, Query(max_length=2000, description="metadata.attribute, exactly")
    ] = None,
    turn_id: Annotated[list[str] | None, Query(description="the keys these turns carry")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    held: Annotated[Held, Query(description=HELD_DOC)] = "none",
) -> dict[str, Any]:
    """For each (metadata.entity, metadata.attribute) of the scope, its newest turn (most recently said
    first), with `first_ts` (when its first version was said), `versions` and `version_turn_ids` (every
    version's memory id and turn id).
    Forgotten turns never count; turns held as instructions to the agent count as `held` says."""
    guard(caller, agent_id, user_id, "read")
    turn_ids = tuple(turn_id or ())
    if len(turn_ids) > MAX_TURN_IDS:
        raise InvalidTurn(f"turn_id: at most {MAX_TURN_IDS}, got {len(turn_ids)}")
    f = KeyFilter(
        agent_id=agent_id,
        user_id=user_id,
        entity=entity,
        entity_prefix=entity_prefix,
        attribute=attribute,
        turn_ids=turn_ids,
        held=held,
    )
    rows, total = KeyedTurns(deps.repo.engine).latest(f, limit=limit, offset=offset)
    next_offset = offset + len(rows) if offset + len(rows) < total else None
    return {"turns": rows, "total": total, "next_offset": next_offset}


@router.get("/v1/turns/recall")
def recall_keyed(
    deps: Deps,
    caller: Caller,
    q: Annotated[str, Query(min_length=1, max_length=4000)],
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    entity_prefix: Annotated[
        str | None, Query(max_length=2000, description="metadata.entity starts with")
    ] = None,
    held: Annotated[Held, Query(description=HELD_DOC)] = "none",
) -> dict[str, Any]:
    """A recall (as GET /v1/recall serves it) answered with the keyed turns its hits are versions of: `results`
    (each hit's id, score and source turn ids, ranked) and `turns` (the newest turn of each key those turn ids
    carry, as GET /v1/turns/latest gives it). One request where a framework adapter would need two."""
    guard(caller, agent_id, user_id, "read")
    hits = run_recall(deps, q, agent_id=agent_id, user_id=user_id, k=k)
    turn_ids = tuple(dict.fromkeys(t for h in hits for t in h["source_turn_ids"]))[:MAX_TURN_IDS]
    rows: list[dict[str, Any]] = []
    if turn_ids:
        f = KeyFilter(
            agent_id=agent_id, user_id=user_id, entity_prefix=entity_prefix, turn_ids=turn_ids, held=held
        )
        rows, _ = KeyedTurns(deps.repo.engine).latest(f, limit=MAX_TURN_IDS, offset=0)
    results = [{"id": h["id"], "score": h["score"], "source_turn_ids": h["source_turn_ids"]} for h in hits]
    return {"results": results, "turns": rows}
