"""A real review worker process on the ONNX Runtime embedding backend reviews turns end to end."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.client import MemoryClient
from pipeline.core.ports import WarmEmbedder
from pipeline.core.vectors import from_blob
from pipeline.ingest.validation import utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tasks.app import REVIEW_TASK
from tasks.app import create_app as create_celery_app
from tests.helpers import wait_until
from tests.integration.harness import REDIS_URL, WorkerProcess, make_settings

pytestmark = pytest.mark.integration

# Its own queue, so the session's torch worker (if another test started it) cannot take these batches.
QUEUE = "review-onnx-test"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TEXTS = [
    "I just moved to Lisbon for a job at a robotics startup.",
    "My sister Marta is visiting in May and we want to hike in Sintra.",
    "I am allergic to peanuts, please never suggest recipes with them.",
    "I play the cello in an amateur orchestra on Thursday evenings.",
]


def _events(log: str) -> list[dict[str, object]]:
    out = []
    for line in log.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def test_a_worker_on_the_onnx_backend_reviews_turns(
    clean: None,
    repo: Repository,
    onnx_cache: Path,
    embedder: WarmEmbedder,
    tmp_path: Path,
) -> None:
    worker = WorkerProcess(
        tmp_path / "logs",
        extra_env={"HINDSIGHT_EMBEDDING__BACKEND": "onnx", "HINDSIGHT_EMBEDDING__CACHE_DIR": str(onnx_cache)},
        extra_args=[f"--queues={QUEUE}"],
    )
    (tmp_path / "logs").mkdir()
    settings = make_settings(tmp_path)
    celery_app = create_celery_app(settings)
    runner = SchedulerRunner(
        repo=repo,
        stream=TurnStream(connect(REDIS_URL), settings.stream_turns, settings.stream_dead),
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id], queue=QUEUE),
        config=RunnerConfig(
            group=settings.scheduler_group,
            read_count=100,
            block_ms=100,
            claim_idle_ms=60_000,
            tick_s=0.2,
            batch_size=30,
            idle_s=600.0,
            max_batch=500,
        ),
        clock=utcnow,
        consumer="onnx-test-scheduler",
    )
    thread = threading.Thread(target=runner.run, daemon=True)
    client = MemoryClient(settings)
    worker.start()
    thread.start()
    try:
        contents = [TEXTS[i % len(TEXTS)] + f" (note {i})" for i in range(30)]  # 30: a full review
        ids = [
            client.write_memory(
                "agent-o", "olga", "s1", "user", c, ts=T0 + timedelta(minutes=i), turn_id=f"o-{i}"
            )
            for i, c in enumerate(contents)
        ]
        wait_until(
            lambda: repo.turn_progress(ids)["reviewed"] == len(ids),
            timeout=120,
            interval=0.3,
            what="30 turns reviewed by the ONNX worker",
        )
        with repo.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT turn_id, content, embedding FROM episodes WHERE embedding IS NOT NULL")
            ).all()
            batches = conn.execute(text("SELECT kind, status FROM batches")).all()
        assert [tuple(b) for b in batches] == [("full", "done")]
        assert {r.turn_id for r in rows} == set(ids)
        stored = np.stack([from_blob(r.embedding) for r in rows])
        assert stored.shape == (30, embedder.dimension)
        np.testing.assert_allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-4)
        # The vectors the worker stored are the model's (fp32 ONNX agrees with torch to ~1e-6).
        reference = embedder.embed([r.content for r in rows])
        assert float(np.sum(stored * reference, axis=1).min()) > 0.999

        events = _events(worker.log())
        loaded = [e for e in events if e.get("event") == "embedding.loaded"]
        assert loaded
        assert loaded[0]["backend"] == "onnx"
        assert str(loaded[0]["path"]).startswith(str(onnx_cache))
        assert any(e.get("event") == "review.done" for e in events), worker.log()[-2000:]
    finally:
        runner.stop_event.set()
        thread.join(10)
        client.close()
        worker.stop()
