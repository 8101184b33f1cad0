"""The API on a real server socket (uvicorn on a free port) around the integration harness, for clients
that live in other processes: the MCP server, spawned by the MCP SDK's own client."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from pipeline.adapters.embedder import SentenceTransformerEmbedder
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.qdrant_edge import EdgeVectorIndex
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.api.app import ApiDeps, create_app
from pipeline.client import MemoryClient
from tasks.app import REVIEW_TASK
from tasks.app import create_app as create_celery_app
from tests.helpers import wait_until
from tests.integration.harness import REDIS_URL, Stack, WorkerProcess, make_settings


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve `app` on 127.0.0.1:<free port> in a thread; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="live-api", daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=30, what="uvicorn to listen")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


@contextmanager
def live_stack(
    repo: Repository,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
    **settings_overrides: Any,
) -> Iterator[Stack]:
    """Like the `stack` fixture, but the API listens on a socket; `stack.api` is an httpx client to it."""
    settings = make_settings(tmp_path, indexer_poll_s=0.5, **settings_overrides)
    stream = TurnStream(connect(REDIS_URL), settings.stream_turns, settings.stream_dead)
    index = EdgeVectorIndex(tmp_path / "qdrant", settings.embedding.dimension)
    celery_app = create_celery_app(settings)
    deps = ApiDeps(
        settings=settings,
        repo=repo,
        stream=stream,
        index=index,
        embedder=embedder,
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id]),
        run_indexer=True,
        claim_limit=settings.policy.max_batch,
        forgetting=ForgettingStore(repo.engine),
    )
    with serve(create_app(deps)) as url:
        settings = settings.model_copy(update={"api_url": url})
        http = httpx.Client(base_url=url, timeout=60)
        stack = Stack(settings, repo, stream, cast(TestClient, http), MemoryClient(settings), index)
        try:
            yield stack
        finally:
            stack.stop()
            stack.client.close()
            http.close()


@pytest.fixture
def live(
    clean: None,
    repo: Repository,
    worker: WorkerProcess,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
) -> Iterator[Stack]:
    with live_stack(repo, embedder, tmp_path) as stack:
        yield stack
