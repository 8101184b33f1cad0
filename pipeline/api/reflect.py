"""POST /v1/reflect: review what is remembered about a user against a goal (MCP `memory_reflect`)."""

from __future__ import annotations

import threading
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from pipeline.adapters.llm import make_client
from pipeline.api import working_memory
from pipeline.api.auth import Caller, guard
from pipeline.api.deps import ApiDeps
from pipeline.api.recall_route import run_recall
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import parse_ts
from pipeline.recall import reflect as reflect_use_case
from pipeline.review.llm_tasks import JSONCompleter

router = APIRouter(tags=["reflect"])
_llm_lock = threading.Lock()


class ReflectRequest(BaseModel):
    goal: str = Field(min_length=1, max_length=2000)
    agent_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    user_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    session_id: str | None = Field(None, min_length=1, max_length=MAX_ID_CHARS)
    k: int = Field(10, ge=1, le=50, description="related memories to consider")
    as_of: str | None = Field(None, description="ISO-8601; review the memory as it was then")


def _llm(request: Request, deps: ApiDeps) -> JSONCompleter | None:
    """The API process's LLM client, made on first use; its daily budget is shared through Redis."""
    state = request.app.state
    with _llm_lock:
        if not hasattr(state, "reflect_llm"):
            state.reflect_llm = make_client(deps.settings.llm, redis_client=deps.stream.client)
    client: JSONCompleter | None = state.reflect_llm
    return client


@router.post("/v1/reflect")
def post_reflect(request: Request, caller: Caller, body: ReflectRequest) -> dict[str, Any]:
    """Evidence (current facts, superseded versions, related memories, working memory) and, with an LLM
    configured, its review of that evidence against the goal."""
    guard(caller, body.agent_id, body.user_id, "read")
    deps: ApiDeps = request.app.state.deps
    as_of = parse_ts(body.as_of, field_name="as_of") if body.as_of else None
    current = deps.repo.facts(body.agent_id, body.user_id, as_of=as_of)
    history = deps.repo.facts(body.agent_id, body.user_id, history=True)
    # Not `observed`: evidence gathered for a reflection neither refreshes access nor counts as a recall.
    related = run_recall(
        deps, body.goal, agent_id=body.agent_id, user_id=body.user_id, k=body.k, as_of=as_of, observe=False
    )
    evidence = reflect_use_case.Evidence(
        current_facts=current,
        superseded_facts=reflect_use_case.superseded(history),
        related_memories=related,
        working_memory=(
            working_memory.state_json(deps, body.agent_id, body.user_id, body.session_id)
            if body.session_id
            else None
        ),
    )
    return reflect_use_case.reflect(body.goal, evidence, _llm(request, deps))
