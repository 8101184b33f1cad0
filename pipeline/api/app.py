"""The HTTP API (FastAPI). Errors are JSON `{"detail": ...}` with a status that says whose fault it is."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import text

from pipeline import __version__
from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.api_keys_sql import KeyStore
from pipeline.adapters.postgres.engine import libpq_dsn
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream
from pipeline.api import quarantine, reflect, working_memory
from pipeline.api.auth import Caller, KeyResolver, guard, principal
from pipeline.api.errors import install_error_handlers
from pipeline.api.limits import BodySizeLimit
from pipeline.api.metrics import ApiMetrics
from pipeline.core.authz import SHARED, SYSTEM, auth_required
from pipeline.core.config import Settings
from pipeline.core.errors import InvalidTurn
from pipeline.core.logging import get_logger
from pipeline.core.models import Hit, Scope
from pipeline.core.ports import Embedder, VectorIndex
from pipeline.ingest import session_end
from pipeline.ingest.validation import encode_event, parse_event, parse_ts, utcnow
from pipeline.recall.access import AccessRecorder
from pipeline.recall.hybrid import DEFAULT_TUNING, RecallTuning
from pipeline.recall.hybrid import recall as recall_use_case
from pipeline.runtime.indexer import Indexer
from scheduler.policy import on_demand

log = get_logger(__name__)
MAX_TURNS_PER_REQUEST = 1000
API_DESCRIPTION = """Memory for LLM agents. Push turns (`POST /v1/turns`), end sessions, recall what is current and
relevant, inspect memories, facts and the review log. Every error is JSON `{"detail": "..."}`.
The memory inspector is at [/ui](/ui); Prometheus metrics at `/metrics`.
Unless bound to loopback, every route but health, metrics and these docs needs an API key (`Authorization:
Bearer <key>` or `X-API-Key`); a key may touch its agent's scopes, read `shared` and `system`, and get 401/403
otherwise (README, "Access control")."""
OPENAPI_TAGS = [
    {"name": "write", "description": "turns in: validated, then queued on the Redis stream"},
    {"name": "inspect", "description": "read-only views: memories, scopes, the review log, dead letters"},
]


@dataclass
class ApiDeps:
    settings: Settings
    repo: Repository
    stream: TurnStream
    index: VectorIndex
    embedder: Embedder
    dispatch: Callable[[int], None]
    run_indexer: bool
    claim_limit: int
    forgetting: ForgettingStore
    indexer: Indexer | None = field(default=None)
    access: AccessRecorder | None = field(default=None)
    metrics: ApiMetrics = field(default_factory=ApiMetrics)
    recall_store: RecallStore | None = field(default=None)
    lexicon: Lexicon | None = field(default=None)
    tuning: RecallTuning = field(default=DEFAULT_TUNING)


class ReviewRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"agent_id": "support-bot", "user_id": "u42", "full": False}]}
    )

    agent_id: str | None = None
    user_id: str | None = None
    full: bool = False


class SessionEndRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"agent_id": "support-bot", "user_id": "u42", "session_id": "s1"}]}
    )

    agent_id: str
    user_id: str
    session_id: str


class ProgressRequest(BaseModel):
    turn_ids: list[str] = Field(default_factory=list, max_length=100_000)
    batch_ids: list[int] = Field(default_factory=list, max_length=100_000)
    # An `outbox_head` read earlier: how many of the index updates queued up to it still wait.
    outbox_through: int | None = Field(None, ge=0)


def _deps(request: Request) -> ApiDeps:
    deps: ApiDeps = request.app.state.deps
    return deps


Deps = Annotated[ApiDeps, Depends(_deps)]
# Every route of these routers needs a key when auth is on; the open ones (health, metrics, docs, the
# inspector's login and static files) are on other routers.
AUTHENTICATED = [Depends(principal)]
router = APIRouter(dependencies=AUTHENTICATED)
open_router = APIRouter()


def create_app(deps: ApiDeps) -> FastAPI:
    if deps.recall_store is None:
        deps.recall_store = RecallStore(deps.repo.engine)
    if deps.settings.recall.decay_exponent is not None:
        deps.tuning = replace(deps.tuning, decay_exponent=deps.settings.recall.decay_exponent)
    if deps.lexicon is None:
        deps.lexicon = Lexicon(
            deps.recall_store,
            refresh_s=deps.settings.recall.lexicon_refresh_s,
            max_bytes=deps.settings.recall.lexicon_max_mb << 20,
            vectors=deps.settings.recall.lexicon_vectors,
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if deps.run_indexer:
            dsn = libpq_dsn(deps.settings.db_url)
            deps.indexer = Indexer(
                deps.repo,
                deps.index,
                dsn=dsn,
                poll_s=deps.settings.indexer_poll_s,
                batch=deps.settings.indexer_batch,
            )
            deps.indexer.start()
        deps.access = AccessRecorder(deps.forgetting.record_access, utcnow)
        deps.access.start()
        warm = getattr(deps.embedder, "warm_up", None)
        if warm is not None:  # load the model now rather than on the first recall
            threading.Thread(target=warm, name="embedder-warm-up", daemon=True).start()
        yield
        deps.access.stop()
        if deps.indexer is not None:
            deps.indexer.stop()
        deps.index.close()

    # Imported here: these routers import ApiDeps from this module.
    from pipeline.api import memories, metrics, ui

    app = FastAPI(
        title="Hindsight",
        version=__version__,
        lifespan=lifespan,
        description=API_DESCRIPTION,
        openapi_tags=OPENAPI_TAGS,
    )
    app.state.deps = deps
    # Refuses (ConfigError) to serve without keys on a non-loopback bind.
    needs_keys = auth_required(deps.settings.auth.mode, deps.settings.api_host)
    app.state.key_resolver = (
        KeyResolver(KeyStore(deps.repo.engine), ttl_s=deps.settings.auth.key_cache_s, now=utcnow)
        if needs_keys
        else None
    )
    deps.metrics.attach(deps)
    app.add_middleware(BodySizeLimit, max_bytes=deps.settings.max_request_bytes)
    install_error_handlers(app)

    app.include_router(router)
    app.include_router(open_router)
    for extra in (working_memory.router, reflect.router, quarantine.router):
        app.include_router(extra, dependencies=AUTHENTICATED)
    app.include_router(memories.router, tags=["inspect"], dependencies=AUTHENTICATED)
    app.include_router(metrics.router)
    app.include_router(ui.login_router)
    app.include_router(ui.router, dependencies=AUTHENTICATED)
    ui.mount_static(app)
    return app


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
    events, errors = [], []
    for i, item in enumerate(items):
        try:
            events.append(parse_event(item, now=now))
        except InvalidTurn as exc:
            errors.append({"index": i, "reason": exc.reason})
    if errors:
        return _invalid(errors)  # type: ignore[return-value]
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
        }
    ]
}


@router.get("/v1/recall", responses={200: {"content": {"application/json": {"example": RECALL_EXAMPLE}}}})
def recall(
    deps: Deps,
    caller: Caller,
    q: Annotated[str, Query(min_length=1, max_length=4000, examples=["where does the user live?"])],
    agent_id: Annotated[str, Query(min_length=1, examples=["support-bot"])],
    user_id: Annotated[str, Query(min_length=1, examples=["u42"])],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    as_of: Annotated[str | None, Query(examples=["2026-11-30T12:00:00+00:00"])] = None,
    history: bool = False,
    include_cold: bool = False,
    session_id: Annotated[str | None, Query(min_length=1, max_length=256)] = None,
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


def space_name(agent_id: str) -> str:
    """Which space a scope is: `shared`, `system` or an agent's `private` one."""
    return agent_id if agent_id in (SHARED, SYSTEM) else "private"


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
    actor: str = Field("api", min_length=1, max_length=200)


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
    actor: str = Field("api", min_length=1, max_length=200)


def memory_ref(memory_id: str) -> tuple[str, int]:
    kind, _, ref = memory_id.partition(":")
    if kind not in ("episode", "semantic") or not (ref.isascii() and ref.isdigit()) or len(ref) > 18:
        raise InvalidTurn(f"memory_id: expected 'episode:<n>' or 'semantic:<n>', got {memory_id[:64]!r}")
    return kind, int(ref)


@router.post("/v1/memories/{memory_id}/forget")
def forget(deps: Deps, caller: Caller, memory_id: str, body: ForgetRequest) -> dict[str, Any]:
    """Soft forget (out of recall, kept for audit, reversible) or hard forget (purged everywhere)."""
    guard(caller, body.agent_id, body.user_id, "write")
    kind, ref = memory_ref(memory_id)
    scope = {"agent_id": body.agent_id, "user_id": body.user_id, "actor": body.actor, "reason": body.reason}
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
    agent_id: Annotated[str, Query(min_length=1)],
    user_id: Annotated[str, Query(min_length=1)],
    entity: str | None = None,
    attribute: str | None = None,
    as_of: str | None = None,
    history: bool = False,
) -> dict[str, Any]:
    """What is true now (or was true at `as_of`); with `history`, every version of every chain."""
    guard(caller, agent_id, user_id, "read")
    when = parse_ts(as_of, field_name="as_of") if as_of else None
    rows = deps.repo.facts(agent_id, user_id, entity=entity, attribute=attribute, as_of=when, history=history)
    return {"facts": rows}


@router.post("/v1/review", status_code=202)
def review(deps: Deps, caller: Caller, body: ReviewRequest) -> dict[str, Any]:
    """Claim and dispatch whatever is pending (one scope or all), without waiting for a trigger."""
    if (body.agent_id is None) != (body.user_id is None):
        raise InvalidTurn("agent_id and user_id: give both or neither")
    guard(caller, body.agent_id, body.user_id, "write")  # no scope = every scope: operators only
    scope = Scope(body.agent_id, body.user_id) if body.agent_id and body.user_id else None
    batch_ids: list[int] = []
    for d in on_demand(deps.repo.backlog(), full=body.full, scope=scope):
        # A full review of a large backlog spans several batches of at most claim_limit episodes.
        while (batch_id := deps.repo.claim(d, min_count=1, limit=deps.claim_limit)) is not None:
            deps.dispatch(batch_id)
            batch_ids.append(batch_id)
            if d.kind == "light":
                break
    if batch_ids:
        deps.repo.mark_dispatched(batch_ids, utcnow())
    return {"batch_ids": batch_ids}


@router.post("/v1/progress")
def progress(deps: Deps, caller: Caller, body: ProgressRequest) -> dict[str, Any]:
    # A key counts only what it may read: another agent's turn ids neither count nor show they exist.
    agents = None if caller.is_admin else [a for a in (caller.agent_id, SHARED, SYSTEM) if a is not None]
    out: dict[str, Any] = {}
    if body.turn_ids:
        out["turns"] = deps.repo.turn_progress(body.turn_ids, agents)
    if body.batch_ids:
        out["batches"] = deps.repo.batch_progress(body.batch_ids, agents)
    # Read after the batches: a batch's index updates commit with its "done", so a head read now covers them.
    outbox = deps.repo.outbox_position(body.outbox_through)
    out["outbox_pending"], out["outbox_head"] = outbox["pending"], outbox["head"]
    if "through" in outbox:
        out["outbox_pending_through"] = outbox["through"]
    return out


@router.post("/v1/reindex", status_code=202)
def reindex(deps: Deps, caller: Caller) -> dict[str, Any]:
    """Rebuild the vector index from PostgreSQL: drop points the store does not know, re-queue the rest."""
    guard(caller, None, None, "admin")
    orphans = sorted(deps.index.ids() - deps.repo.indexable_point_ids())
    if orphans:
        deps.index.delete(orphans)
    queued = deps.repo.enqueue_reindex()
    return {
        "queued": queued,
        "orphans_deleted": len(orphans),
        "outbox_through": deps.repo.outbox_position()["head"],
    }


@router.get("/v1/stats")
def stats(deps: Deps, caller: Caller) -> dict[str, Any]:
    """Deployment-wide counts (operators only when keys are on)."""
    guard(caller, None, None, "admin")
    return {
        **deps.repo.stats(),
        "stream": deps.stream.stats(deps.settings.scheduler_group),
        "index": {"points": deps.index.count()},
    }


@open_router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@open_router.get("/readyz")
def readyz(deps: Deps) -> JSONResponse:
    checks: dict[str, str] = {}
    for name, probe in (
        ("postgres", lambda: _ping_postgres(deps)),
        ("redis", lambda: deps.stream.client.ping()),
        ("qdrant", lambda: deps.index.count()),
    ):
        try:
            probe()
            checks[name] = "ok"
        except Exception as exc:  # readiness reports every failure instead of raising
            # /readyz needs no key, so the answer names the kind of failure only: a driver's message can
            # carry host names, user names and paths. The log has it whole.
            log.warning("readyz.failed", dependency=name, error=str(exc)[:500])
            checks[name] = f"error: {type(exc).__name__}"
    ok = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if ok else "unavailable", "checks": checks}, status_code=200 if ok else 503
    )


def _ping_postgres(deps: ApiDeps) -> None:
    with deps.repo.engine.connect() as conn:
        conn.execute(text("SELECT 1"))


def _invalid(errors: list[dict[str, Any]]) -> JSONResponse:
    first = errors[0]
    return JSONResponse(
        {"detail": f"item {first['index']}: {first['reason']}", "errors": errors[:100]}, status_code=422
    )
