"""HTTP endpoints of the poisoning defence: the quarantine queue a person works through."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field

from pipeline.adapters.postgres.quarantine_sql import MAX_LIST, QuarantineStore
from pipeline.api.auth import Caller, guard
from pipeline.core.authz import audit_key
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import utcnow

router = APIRouter()


class QuarantineDecision(BaseModel):
    agent_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=2000)
    actor: str = Field("api", min_length=1, max_length=MAX_ID_CHARS)


def _store(request: Request, caller: Caller) -> QuarantineStore:
    # The queue is for a person to work through: operators only, agents never see what was quarantined
    # (it is, by the detector's verdict, an instruction aimed at them).
    guard(caller, None, None, "admin")
    # Built per request from the repository's engine: a sessionmaker costs nothing, and ApiDeps stays as it is.
    return QuarantineStore(request.app.state.deps.repo.engine)


Store = Annotated[QuarantineStore, Depends(_store)]


def _episode_ref(memory_id: str) -> int:
    kind, _, ref = memory_id.partition(":")
    if kind != "episode" or not (ref.isascii() and ref.isdigit()) or len(ref) > 18:
        raise InvalidTurn(f"memory_id: expected 'episode:<n>', got {memory_id[:64]!r}")
    return int(ref)


@router.get("/v1/quarantine")
def list_quarantine(
    store: Store,
    agent_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    user_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = 100,
) -> dict[str, Any]:
    """Turns the review quarantined as instructions to the agent, with the detector's reason and score."""
    return {"quarantined": store.list(agent_id=agent_id, user_id=user_id, limit=limit)}


@router.post("/v1/quarantine/{memory_id}/release")
def release(store: Store, caller: Caller, memory_id: str, body: QuarantineDecision) -> dict[str, Any]:
    """A person vouches for the turn: it goes through the review again, without the detector; audited."""
    key = audit_key(caller)
    return store.release(_episode_ref(memory_id), now=utcnow(), key_prefix=key, **body.model_dump())


@router.post("/v1/quarantine/{memory_id}/reject")
def reject(store: Store, caller: Caller, memory_id: str, body: QuarantineDecision) -> dict[str, Any]:
    """A person confirms the quarantine: kept as evidence, never recalled; audited."""
    key = audit_key(caller)
    return store.reject(_episode_ref(memory_id), now=utcnow(), key_prefix=key, **body.model_dump())
