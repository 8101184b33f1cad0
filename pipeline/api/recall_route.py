"""GET /v1/recall, and recall as every route that needs it serves it (`run_recall`: the inspector, reflect)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from pipeline.api import working_memory
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import ApiDeps, Deps
from pipeline.core.authz import space_name
from pipeline.core.models import MAX_ID_CHARS, Hit
from pipeline.ingest.validation import parse_ts, utcnow
from pipeline.recall.hybrid import recall as recall_use_case

router = APIRouter()


RECALL_EXAMPLE = {
    "results": [
        {
            "id": "episode:1",
            "kind": "episode",
            "text": "I moved to Lisbon last month",
            "score": 0.58,
            "weight": 1.0,
            "valid_from": "2026-11-30T20:41:07+00:00",
            "valid_to": None,
            "source_turn_ids": ["t-1"],
            "session_id": "s1",
            "cold": False,
            "reviewed": True,
        }
    ]
}


@router.get("/v1/recall", responses={200: {"content": {"application/json": {"example": RECALL_EXAMPLE}}}})
def recall(
    deps: Deps,
    caller: Caller,
    q: Annotated[str, Query(min_length=1, max_length=4000, examples=["where does the user live?"])],
    agent_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS, examples=["support-bot"])],
    user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS, examples=["u42"])],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    as_of: Annotated[str | None, Query(examples=["2026-11-30T12:00:00+00:00"])] = None,
    history: bool = False,
    include_cold: bool = False,
    session_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    explain: bool = True,
) -> dict[str, Any]:
    """Ranked memories valid at `as_of` (default now); `history` keeps what newer facts superseded (ranked
    below what replaced them); `include_cold` searches cold storage too, and re-heats the cold memories it
    returns; `explain` (default on) adds each result's score breakdown; `session_id` adds that session's
    working memory beside the results."""
    guard(caller, agent_id, user_id, "read")
    when: datetime | None = parse_ts(as_of, field_name="as_of") if as_of else None
    results = run_recall(
        deps,
        q,
        agent_id=agent_id,
        user_id=user_id,
        k=k,
        as_of=when,
        history=history,
        include_cold=include_cold,
    )
    if not explain:
        for r in results:
            r.pop("explain", None)
    body: dict[str, Any] = {"results": results, "space": space_name(agent_id)}
    if session_id is not None:
        body["working_memory"] = working_memory.state_json(deps, agent_id, user_id, session_id)
    return body


def run_recall(
    deps: ApiDeps,
    q: str,
    *,
    agent_id: str,
    user_id: str,
    k: int,
    as_of: datetime | None = None,
    history: bool = False,
    include_cold: bool = False,
    observe: bool = True,
) -> list[dict[str, Any]]:
    """Recall as the API serves it. With `observe` (agents' recalls) it is timed for /metrics and its hits
    refresh their access; the inspector passes False so that looking at memories does not keep them warm."""
    assert deps.recall_store is not None  # set by create_app
    started = time.perf_counter()
    hits = recall_use_case(
        q,
        agent_id=agent_id,
        user_id=user_id,
        k=k,
        repo=deps.repo,
        store=deps.recall_store,
        index=deps.index,
        embedder=deps.embedder,
        lexicon=deps.lexicon,
        as_of=as_of,
        history=history,
        include_cold=include_cold,
        tuning=deps.tuning,
    )
    if observe:
        _after_recall(deps, hits)
        deps.metrics.recall_latency.observe(time.perf_counter() - started)
    return [h.to_json() for h in hits]


def _after_recall(deps: ApiDeps, hits: list[Hit]) -> None:
    by_kind: dict[str, list[int]] = {"episode": [], "semantic": []}
    cold: dict[str, list[int]] = {"episode": [], "semantic": []}
    for h in hits:
        kind, _, ref = h.id.partition(":")
        (cold if h.cold else by_kind)[kind].append(int(ref))
    for kind, ids in by_kind.items():
        if ids and deps.access is not None:
            deps.access.record(kind, ids)
    for kind, ids in cold.items():
        deps.forgetting.reheat(kind, ids, now=utcnow())
