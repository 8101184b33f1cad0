"""Operating the pipeline: review now, progress of turns and batches, rebuild the vector index, counts."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.api.model_change import ModelChange
from pipeline.core.authz import SHARED, SYSTEM
from pipeline.core.errors import InvalidTurn, InvalidValue
from pipeline.core.models import MAX_ID_CHARS, Scope
from pipeline.ingest.validation import utcnow
from scheduler.policy import on_demand

router = APIRouter()

# How long a review request waits for pending turns another transaction holds, and how often it looks again.
LOCKED_WAIT_S = 3.0
LOCKED_POLL_S = 0.05


class ReviewRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"agent_id": "support-bot", "user_id": "u42", "full": False}]}
    )

    agent_id: str | None = None
    user_id: str | None = None
    full: bool = False
    # Send again the batches given up after their attempts (issue 44), with their attempts reset.
    retry_failed: bool = False


class TurnRef(BaseModel):
    agent_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    user_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    turn_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)


class ProgressRequest(BaseModel):
    turn_ids: list[str] = Field(default_factory=list, max_length=100_000)
    # The same, each with its scope: a turn id is unique only within its scope (`hindsight ingest --wait`).
    turns: list[TurnRef] = Field(default_factory=list, max_length=100_000)
    batch_ids: list[int] = Field(default_factory=list, max_length=100_000)
    # An `outbox_head` read earlier: how many of the index updates queued up to it still wait.
    outbox_through: int | None = Field(None, ge=0)


@router.post("/v1/review", status_code=202)
def review(deps: Deps, caller: Caller, body: ReviewRequest) -> dict[str, Any]:
    """Claim and dispatch whatever is pending (one scope or all), without waiting for a trigger."""
    if (body.agent_id is None) != (body.user_id is None):
        raise InvalidTurn("agent_id and user_id: give both or neither")
    guard(caller, body.agent_id, body.user_id, "write")  # no scope = every scope: operators only
    scope = Scope(body.agent_id, body.user_id) if body.agent_id and body.user_id else None
    batch_ids: list[int] = []
    if body.retry_failed:
        # Their episodes are still theirs (pending, recallable as unreviewed): the same batches run again.
        for failed in deps.repo.requeue_failed(scope):
            deps.dispatch(failed)
            batch_ids.append(failed)
    batch_ids += _claim_pending(deps, full=body.full, scope=scope)
    if batch_ids:
        deps.repo.mark_dispatched(batch_ids, utcnow())
    return {"batch_ids": batch_ids}


def _claim_pending(deps: Deps, *, full: bool, scope: Scope | None) -> list[int]:
    """Claim and dispatch everything pending, looking again for up to LOCKED_WAIT_S while turns are left. A
    claim waits only briefly for a row another transaction holds, then skips it (`SchedulingQueries.claim`):
    a turn held longer (a review writing it, say) would otherwise be left to the next trigger, minutes away
    for an idle session, while the caller waits for "everything"."""
    batch_ids: list[int] = []
    deadline = time.monotonic() + LOCKED_WAIT_S
    while decisions := on_demand(deps.repo.backlog(scope), full=full, scope=scope):
        claimed = False
        for d in decisions:
            # A full review of a large backlog spans several batches of at most claim_limit episodes.
            while (batch_id := deps.repo.claim(d, min_count=1, limit=deps.claim_limit)) is not None:
                deps.dispatch(batch_id)
                batch_ids.append(batch_id)
                claimed = True
                if d.kind == "light":
                    break
        if time.monotonic() >= deadline:
            break  # still held (or still arriving): the scheduler's triggers take the rest
        if not claimed:
            time.sleep(LOCKED_POLL_S)
    return batch_ids


@router.post("/v1/progress")
def progress(deps: Deps, caller: Caller, body: ProgressRequest) -> dict[str, Any]:
    # A key counts only what it may read: another agent's turn ids neither count nor show they exist.
    agents = None if caller.is_admin else [a for a in (caller.agent_id, SHARED, SYSTEM) if a is not None]
    out: dict[str, Any] = {}
    if body.turn_ids and body.turns:
        raise InvalidTurn("turn_ids and turns: give one or the other")
    if body.turn_ids:
        out["turns"] = deps.repo.turn_progress(body.turn_ids, agents)
    if body.turns:
        refs = [(t.agent_id, t.user_id, t.turn_id) for t in body.turns]
        out["turns"] = deps.repo.scoped_turn_progress(refs, agents)
    if body.batch_ids:
        out["batches"] = deps.repo.batch_progress(body.batch_ids, agents)
    # Read after the batches: a batch's index updates commit with its "done", so a head read now covers them.
    outbox = deps.repo.outbox_position(body.outbox_through)
    out["outbox_pending"], out["outbox_head"] = outbox["pending"], outbox["head"]
    if "through" in outbox:
        out["outbox_pending_through"] = outbox["through"]
    return out


class ReindexRequest(BaseModel):
    # Another embedding model than the store's: re-embed every memory with it (pipeline/api/model_change.py).
    model: str | None = Field(None, min_length=1, max_length=500)
    # With `model`: embed at most this many memories now, then stop (asking again continues).
    max_items: int | None = Field(None, ge=1)


def _model_change(deps: Deps) -> ModelChange:
    if deps.model_change is None:
        deps.model_change = ModelChange(deps)
    change: ModelChange = deps.model_change
    return change


@router.post("/v1/reindex", status_code=202)
def reindex(deps: Deps, caller: Caller, body: ReindexRequest | None = None) -> dict[str, Any]:
    """Rebuild the vector index from PostgreSQL: drop points the store does not know, re-queue the rest.

    With a `model` other than the store's: change the embedding model (re-embed into a new collection while
    recall serves the old one, then switch); poll GET /v1/reindex for its progress."""
    guard(caller, None, None, "admin")
    if body is not None and body.model is not None:
        change = _model_change(deps)
        status = change.request(body.model, body.max_items)
        if status["state"] != "current":
            return status
    if deps.model_change is not None and deps.model_change.running:
        raise InvalidValue("an embedding model change is running: GET /v1/reindex shows its progress")
    orphans = sorted(deps.index.ids() - deps.repo.indexable_point_ids())
    if orphans:
        deps.index.delete(orphans)
    queued = deps.repo.enqueue_reindex()
    return {
        "queued": queued,
        "orphans_deleted": len(orphans),
        "outbox_through": deps.repo.outbox_position()["head"],
    }


@router.get("/v1/reindex")
def reindex_status(deps: Deps, caller: Caller) -> dict[str, Any]:
    """The store's embedding model and collection, and the progress of a model change."""
    guard(caller, None, None, "admin")
    return _model_change(deps).status()


@router.get("/v1/stats")
def stats(deps: Deps, caller: Caller) -> dict[str, Any]:
    """Deployment-wide counts (operators only when keys are on)."""
    guard(caller, None, None, "admin")
    return {
        **deps.repo.stats(),
        "stream": deps.stream.stats(deps.settings.scheduler_group),
        "index": {"points": deps.index.count()},
    }
