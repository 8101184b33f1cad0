"""The API on a real server socket (uvicorn on a free port) around the integration harness: for HTTP
through a real socket, and for clients in other processes (the MCP server the MCP SDK's client spawns)."""

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

from pipeline.adapters.postgres.repository import Repository
from pipeline.api.app import create_app
from pipeline.api.http_server import server_config
from pipeline.client import MemoryClient
from pipeline.core.ports import WarmEmbedder
from tests.helpers import wait_until
from tests.integration.harness import Stack, WorkerProcess, api_deps, make_settings


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve `app` on 127.0.0.1:<free port> in a thread; yields its base URL."""
    server = uvicorn.Server(server_config(app, host="127.0.0.1", port=0, log_level="warning"))
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
    embedder: WarmEmbedder,
    tmp_path: Path,
    **settings_overrides: Any,
) -> Iterator[Stack]:
    """Like the `stack` fixture, but the API listens on a socket; `stack.api` is an httpx client to it."""
    settings = make_settings(tmp_path, indexer_poll_s=0.5, **settings_overrides)
    deps = api_deps(settings, repo, embedder, tmp_path)
    with serve(create_app(deps)) as url:
        settings = settings.model_copy(update={"api_url": url})
        http = httpx.Client(base_url=url, timeout=60)
        stack = Stack(settings, repo, deps.stream, cast(TestClient, http), MemoryClient(settings), deps.index)
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
    embedder: WarmEmbedder,
    tmp_path: Path,
) -> Iterator[Stack]:
    # Whatever this test left in flight on the worker, the next test's `clean` waits for before it truncates.
    with live_stack(repo, embedder, tmp_path) as stack:
        yield stack
