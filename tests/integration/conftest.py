"""Integration fixtures around the harness: real PostgreSQL, Redis and a Celery worker process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from pipeline.adapters.embedder import make_embedder
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.api.app import create_app
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.ports import WarmEmbedder
from pipeline.runtime.embedded import EmbeddedServer
from tests.integration.harness import (
    DB_URL,
    REDIS_URL,
    Stack,
    WorkerProcess,
    api_deps,
    make_settings,
    reset_store,
    truncate_all,
)


@pytest.fixture(scope="session")
def migrated() -> str:
    upgrade(DB_URL)
    # Empty before the session's worker starts: it checks the store's recorded model at start, and what an
    # earlier run left (another default model's record or vectors) would stop it.
    truncate_all(make_engine(DB_URL))
    return DB_URL


@pytest.fixture(scope="session")
def repo(migrated: str) -> Repository:
    return Repository(make_engine(migrated))


@pytest.fixture
def clean(repo: Repository) -> None:
    """Every test starts with empty tables (the default model recorded) and an empty Redis database."""
    reset_store(repo.engine)
    redis.Redis.from_url(REDIS_URL).flushdb()
    return None


@pytest.fixture
def forget_model(repo: Repository) -> Iterator[None]:
    """For a test that records another model or leaves vectors of another: the session's worker (the
    default model) checks the record at each review and at its start, so the store is reset to the default
    for the next test."""
    yield
    reset_store(repo.engine)


@pytest.fixture
def unsent_batches(repo: Repository) -> Iterator[None]:
    """For a test whose batches are never sent to a worker (its dispatch only records the id, or it makes
    them by hand): they stay `dispatched` or `running` for good, so the next test's reset would wait its
    whole in-flight timeout (15 s) for them. Nothing of such a test is in flight on the session's worker,
    so the store is reset right after it, without that wait. List it after `forget_model`, whose reset
    would wait too."""
    yield
    reset_store(repo.engine, wait_for_in_flight=False)


@pytest.fixture(scope="session")
def embedder() -> WarmEmbedder:
    """The default model, as the API of a test stack embeds (the worker process loads its own)."""
    e = make_embedder(Settings(embedding={"torch_threads": 1}))
    e.warm_up()
    return e


@pytest.fixture(scope="session")
def worker(migrated: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    w = WorkerProcess(tmp_path_factory.mktemp("worker-logs"))
    w.start()
    yield w
    w.stop()


@pytest.fixture
def stack(
    clean: None,
    repo: Repository,
    worker: WorkerProcess,
    embedder: WarmEmbedder,
    tmp_path: Path,
) -> Iterator[Stack]:
    settings = make_settings(tmp_path, indexer_poll_s=0.5)
    deps = api_deps(settings, repo, embedder, tmp_path)
    with TestClient(create_app(deps)) as api:
        s = Stack(settings, repo, deps.stream, api, MemoryClient(settings), deps.index)
        try:
            yield s
        finally:
            s.stop()
            s.client.close()
    # Whatever this test left in flight on the worker, the next test's `clean` waits for before it truncates.


@pytest.fixture
def servers() -> Iterator[list[EmbeddedServer]]:
    """Servers a test starts; stopped (newest first) even when the test fails."""
    started: list[EmbeddedServer] = []
    yield started
    for server in reversed(started):
        server.stop(timeout_s=15)


# The API on a real socket, for clients in other processes (the MCP server).
from tests.integration.live_api import live  # noqa: E402, F401
