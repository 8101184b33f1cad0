"""The API the fuzz suites call: real PostgreSQL and Redis, in-memory embedder and index. They fuzz request
handling and the store, not the model (recall over the real ones is covered by the integration tests)."""

from __future__ import annotations

from pathlib import Path

import redis

from pipeline.adapters.fakes import HashingEmbedder, InMemoryVectorIndex
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.api.app import ApiDeps
from tests.integration.harness import DB_URL, REDIS_URL, make_settings


def fuzz_api_deps(tmp: Path, stream: str, dead: str) -> ApiDeps:
    """Deps on the migrated test database, writing turns to `stream` (emptied first, with `dead`)."""
    upgrade(DB_URL)
    repo = Repository(make_engine(DB_URL))
    redis.Redis.from_url(REDIS_URL).delete(stream, dead)
    return ApiDeps(
        settings=make_settings(tmp),
        repo=repo,
        stream=TurnStream(connect(REDIS_URL), stream, dead),
        index=InMemoryVectorIndex(384),
        embedder=HashingEmbedder(),
        dispatch=lambda _batch_id: None,
        run_indexer=False,
        claim_limit=500,
        forgetting=ForgettingStore(repo.engine),
    )
