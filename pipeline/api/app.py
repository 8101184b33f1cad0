"""The HTTP API (FastAPI), assembled from its routers. Errors are JSON `{"detail": ...}` with a status that
says whose fault it is.

The routes live in their own modules (turns, recall_route, memory_writes, operations, health,
working_memory, reflect, quarantine, tool_insights, memories, metrics, ui); what they share (ApiDeps, `Deps`,
`memory_ref`) is in deps.py, and recall as the API serves it (`run_recall`) in recall_route.py.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from pipeline import __version__
from pipeline.adapters.indexer import Indexer
from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.api_keys_sql import KeyStore
from pipeline.adapters.postgres.engine import libpq_dsn
from pipeline.adapters.postgres.recall_sql import RecallStore
from pipeline.api import (
    audit,
    health,
    keyed_turns,
    memories,
    memory_writes,
    metrics,
    operations,
    quarantine,
    recall_route,
    reflect,
    supersessions,
    tool_insights,
    turns,
    ui,
    ui_updates,
    working_memory,
)
from pipeline.api.auth import KeyResolver, principal
from pipeline.api.deps import ApiDeps as ApiDeps
from pipeline.api.errors import install_error_handlers
from pipeline.api.limits import BodySizeLimit
from pipeline.api.security_headers import SecurityHeaders
from pipeline.core.authz import auth_required
from pipeline.core.config import Settings
from pipeline.ingest.validation import utcnow
from pipeline.recall.access import AccessRecorder
from pipeline.recall.tuning import configured

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


# Every route of these routers needs a key when auth is on; the open ones (health, metrics, docs, the
# inspector's login and static files) are on other routers.
AUTHENTICATED = [Depends(principal)]


def configured_lexicon(settings: Settings, store: RecallStore) -> Lexicon:
    """Recall's lexical side as the API builds it from the settings. Benches that stand in for the API use
    it too: one that passed no lexicon ranked by the vectors alone and called that the product."""
    return Lexicon(
        store,
        refresh_s=settings.recall.lexicon_refresh_s,
        max_bytes=settings.recall.lexicon_max_mb << 20,
        vectors=settings.recall.lexicon_vectors,
    )


def create_app(deps: ApiDeps) -> FastAPI:
    if deps.recall_store is None:
        deps.recall_store = RecallStore(deps.repo.engine)
    deps.tuning = configured(deps.settings, deps.tuning)
    if deps.lexicon is None:
        deps.lexicon = configured_lexicon(deps.settings, deps.recall_store)

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
                # Recall's own model: it embeds the turns recallable before their review (read your writes).
                embedder=deps.embedder if deps.settings.recall.unreviewed else None,
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
    auth = deps.settings.auth
    app.state.key_resolver = (
        KeyResolver(
            KeyStore(deps.repo.engine),
            ttl_s=auth.key_cache_s,
            now=utcnow,
            session_secret=auth.session_secret.get_secret_value().encode() if auth.session_secret else None,
            session_ttl_s=auth.ui_session_s,
        )
        if needs_keys
        else None
    )
    deps.metrics.attach(deps)
    app.add_middleware(BodySizeLimit, max_bytes=deps.settings.max_request_bytes)
    app.add_middleware(SecurityHeaders)  # outermost: its headers go on every response, refusals too
    install_error_handlers(app)

    # In this order: the routes (and the OpenAPI paths) keep the order they were written in.
    for routes in (turns.router, recall_route.router, memory_writes.router, operations.router):
        app.include_router(routes, dependencies=AUTHENTICATED)
    app.include_router(health.router)
    for extra in (
        working_memory.router,
        reflect.router,
        quarantine.router,
        tool_insights.router,
        supersessions.router,
        keyed_turns.router,
    ):
        app.include_router(extra, dependencies=AUTHENTICATED)
    app.include_router(memories.router, tags=["inspect"], dependencies=AUTHENTICATED)
    app.include_router(audit.router, tags=["inspect"], dependencies=AUTHENTICATED)
    app.include_router(metrics.router)
    app.include_router(ui.login_router)
    app.include_router(ui.router, dependencies=AUTHENTICATED)
    app.include_router(ui_updates.router, dependencies=AUTHENTICATED)
    ui.mount_static(app)
    return app
