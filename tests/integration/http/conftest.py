"""The API served by a real uvicorn on a free port, around the real pipeline (scheduler, worker, indexer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

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


class LiveServer:
    """uvicorn in a thread, bound to port 0 (the OS picks a free one)."""

    def __init__(self, app: object) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    def start(self) -> str:
        self.thread.start()
        wait_until(lambda: self.server.started, timeout=30, interval=0.05, what="uvicorn to start")
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@pytest.fixture
def live(
    clean: None,
    repo: Repository,
    worker: WorkerProcess,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
) -> Iterator[Stack]:
    """A Stack whose `api` is an httpx client talking to the real server socket (`live.api.base_url`)."""
    settings = make_settings(tmp_path, indexer_poll_s=0.5, api_url="http://unused")
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
    server = LiveServer(create_app(deps))
    base_url = server.start()
    settings = settings.model_copy(update={"api_url": base_url})
    api = httpx.Client(base_url=base_url, timeout=60.0)
    s = Stack(settings, repo, stream, api, MemoryClient(settings), index)  # type: ignore[arg-type]
    try:
        yield s
    finally:
        s.stop()
        s.client.close()
        api.close()
        server.stop()
    time.sleep(0.2)  # let the worker finish what this test left in flight before the next truncates
