"""Integration harness: the machine's real PostgreSQL and Redis, a real Celery worker process.

Defaults: database `hindsight_test` on 127.0.0.1:5432 and Redis database 13 on 127.0.0.1:6379
(override with HINDSIGHT_TEST_DATABASE_URL / HINDSIGHT_TEST_REDIS_URL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from psycopg.errors import DeadlockDetected
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.qdrant_edge import EdgeVectorIndex
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.api.app import ApiDeps
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.ports import Embedder
from pipeline.ingest.validation import utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tasks.app import REVIEW_TASK
from tasks.app import create_app as create_celery_app
from tasks.deps import write_side_screen
from tests.helpers import wait_until

DB_URL = os.environ.get(
    "HINDSIGHT_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_test"
)
REDIS_URL = os.environ.get("HINDSIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"

# Short timeouts so that recovery paths run within a test: a task of a SIGKILLed worker comes back
# after VISIBILITY_S plus one restore sweep.
VISIBILITY_S = 6
RETRY_BASE_S = 0.25
RETRY_MAX_DELAY_S = 2.0
WORKER_ENV = {
    "HINDSIGHT_DATABASE_URL": DB_URL,
    "HINDSIGHT_REDIS_URL": REDIS_URL,
    "HINDSIGHT_CELERY__VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
    "HINDSIGHT_CELERY__RESTORE_INTERVAL_S": "1",
    # A failed review is retried after 0.25, 0.5, 1, 2 s, not 1, 2, 4, 8 s: the give-up tests wait out every one.
    "HINDSIGHT_CELERY__RETRY_BASE_S": str(RETRY_BASE_S),
    "HINDSIGHT_CELERY__RETRY_MAX_DELAY_S": str(RETRY_MAX_DELAY_S),
    "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
    "HINDSIGHT_LOG_JSON": "true",
}

TABLES = "embedding_model, reindex_job, reindex_vectors, api_keys, memory_audit, supersessions, reviews, agent_insight_members, semantic_members, semantic_memories, facts, index_outbox, episodes, batches, sessions"


def truncate_all(engine: Engine, attempts: int = 5) -> None:
    """Every table emptied and its ids restarted. TRUNCATE takes its locks table by table while a worker or
    an API process of the test may hold a read lock on one and wait for another (the model check reads
    embedding_model beside the episodes): PostgreSQL then aborts one side as a deadlock, and trying again
    after it is the documented answer (it failed a fresh clone's setup once)."""
    for attempt in range(attempts):
        try:
            with engine.begin() as conn:
                conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
            return
        except OperationalError as exc:
            if not isinstance(exc.orig, DeadlockDetected) or attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def reset_store(engine: Engine, *, wait_for_in_flight: bool = True) -> None:
    """Empty, with the default model recorded, as every running deployment's store is (each role records
    its model at start). Without the record, vectors the session's worker writes next would read, to a
    worker restarted later in the test, as a store from before the record, taken as MiniLM's, and the
    default model would refuse it.

    wait_for_in_flight=False only for a store whose batches were never sent to a worker (the
    `unsent_batches` fixture): theirs stay `dispatched` or `running` for good, and waiting for them only
    runs out the timeout."""
    from pipeline.runtime.model_check import checked_model

    # A batch the worker finishes after the TRUNCATE (which restarts the ids) would write its review over
    # the next test's batch of the same id (seen under load: a third review in the inspector's log of two;
    # a module's first ingest left half unreviewed).
    if wait_for_in_flight:
        _wait_for_in_flight_batches(engine)
    truncate_all(engine)
    checked_model(Settings(database_url=DB_URL, redis_url=REDIS_URL), engine)


def _wait_for_in_flight_batches(engine: Engine, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            busy = conn.scalar(text("SELECT count(*) FROM batches WHERE status IN ('dispatched', 'running')"))
        if not busy:
            return
        time.sleep(0.1)


def make_settings(tmp: Path, **overrides: object) -> Settings:
    return Settings(
        database_url=DB_URL,
        redis_url=REDIS_URL,
        data_dir=tmp,
        celery={"visibility_timeout_s": VISIBILITY_S, "restore_interval_s": 1},  # type: ignore[arg-type]
        **overrides,  # type: ignore[arg-type]
    )


def api_deps(settings: Settings, repo: Repository, embedder: Embedder, tmp: Path) -> ApiDeps:
    """What the API needs, wired as `hindsight api` wires it: the real stream, an in-process Qdrant under
    `tmp`, review tasks sent to the real worker, and the indexer running inside the API."""
    celery_app = create_celery_app(settings)
    return ApiDeps(
        settings=settings,
        repo=repo,
        stream=TurnStream(connect(REDIS_URL), settings.stream_turns, settings.stream_dead),
        index=EdgeVectorIndex(tmp / "qdrant", settings.embedding.dimension),
        embedder=embedder,
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id]),
        run_indexer=True,
        claim_limit=settings.policy.max_batch,
        forgetting=ForgettingStore(repo.engine),
    )


@dataclass
class WorkerProcess:
    """A real `hindsight worker` process (Celery, solo pool) that tests may SIGKILL and restart."""

    log_dir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)  # e.g. ["--queues=review-x"]
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    log_path: Path = field(init=False)

    def start(self, timeout: float = 120.0) -> None:
        self.starts += 1
        self.log_path = self.log_dir / f"worker-{self.starts}.log"
        env = {**os.environ, **WORKER_ENV, **self.extra_env}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pipeline.cli", "worker", "--loglevel=INFO", *self.extra_args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=REPO_ROOT,
            )
        wait_until(self._ready, timeout=timeout, interval=0.25, what="the Celery worker to be ready")

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(
                f"worker exited with {self.process.returncode}:\n{self.log_path.read_text()[-3000:]}"
            )
        return " ready." in self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@dataclass
class Stack:
    """An in-test pipeline: scheduler threads, the API (with its indexer) and clients, around a real worker."""

    settings: Settings
    repo: Repository
    stream: TurnStream
    api: TestClient
    client: MemoryClient
    index: EdgeVectorIndex
    runners: list[SchedulerRunner] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    dispatched: dict[str, list[int]] = field(default_factory=dict)

    def start_scheduler(self, **config: object) -> SchedulerRunner:
        celery_app = create_celery_app(self.settings)
        name = f"test-scheduler-{len(self.runners)}"
        self.dispatched[name] = []

        def dispatch(batch_id: int) -> None:
            self.dispatched[name].append(batch_id)
            celery_app.send_task(REVIEW_TASK, args=[batch_id])

        defaults: dict[str, object] = {
            "group": self.settings.scheduler_group,
            "read_count": 100,
            "block_ms": 100,
            "claim_idle_ms": 60_000,
            "tick_s": 0.2,
            "batch_size": 30,
            "idle_s": 600.0,
            "max_batch": 500,
            # As `hindsight scheduler` runs: turns the injection screen passes are recallable before review.
            "screen": write_side_screen(self.settings),
        }
        runner = SchedulerRunner(
            repo=self.repo,
            stream=self.stream,
            dispatch=dispatch,
            config=RunnerConfig(**{**defaults, **config}),  # type: ignore[arg-type]
            clock=utcnow,
            consumer=name,
        )
        thread = threading.Thread(target=runner.run, name=name, daemon=True)
        thread.start()
        self.runners.append(runner)
        self.threads.append(thread)
        return runner

    def stop(self) -> None:
        for runner in self.runners:
            runner.stop_event.set()
        for thread in self.threads:
            thread.join(10)

    def write_session(
        self, agent_id: str, user_id: str, session: str, turns: list[tuple[str, str]], start: datetime
    ) -> list[str]:
        """Write one session's turns (role, content) a minute apart through the client, end the session and
        wait until its turns are reviewed and indexed; their turn ids."""
        ids = [
            self.client.write_memory(
                agent_id,
                user_id,
                session,
                role,
                content,
                ts=start + timedelta(minutes=i),
                turn_id=f"{session}-{i}",
            )
            for i, (role, content) in enumerate(turns)
        ]
        self.client.end_session(agent_id, user_id, session)
        self.wait_indexed(ids)
        return ids

    def wait_indexed(self, turn_ids: list[str], timeout: float = 90.0) -> None:
        wait_until(
            lambda: self.repo.turn_progress(turn_ids)["indexed"] == len(turn_ids),
            timeout=timeout,
            interval=0.2,
            what=f"{len(turn_ids)} turns reviewed and indexed",
        )

    def full_review(self, agent_id: str, user_id: str, timeout: float = 60.0) -> list[int]:
        """Ask the API for a full review of the scope (as an operator would) and wait until it is done."""
        response = self.api.post("/v1/review", json={"agent_id": agent_id, "user_id": user_id, "full": True})
        assert response.status_code == 202, response.text
        batch_ids: list[int] = response.json()["batch_ids"]
        wait_until(
            lambda: (
                self.api.post("/v1/progress", json={"batch_ids": batch_ids or [0]}).json()["batches"]["done"]
                == len(batch_ids)
            ),
            timeout=timeout,
            what="the full review",
        )
        return batch_ids

    def recall(self, q: str, agent_id: str, user_id: str, k: int = 5) -> list[dict[str, object]]:
        response = self.api.get(
            "/v1/recall", params={"q": q, "agent_id": agent_id, "user_id": user_id, "k": k}
        )
        assert response.status_code == 200, response.text
        results: list[dict[str, object]] = response.json()["results"]
        return results
