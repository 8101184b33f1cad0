"""Flower, started as `hindsight flower` starts it (basic auth), sees the real worker and the reviews it ran."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, wait_until
from tests.integration.harness import REDIS_URL, REPO_ROOT, Stack, WorkerProcess

pytestmark = pytest.mark.integration
AUTH = ("flower-test", "s3cret-pass")


@pytest.fixture
def flower(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "HINDSIGHT_REDIS_URL": REDIS_URL,
        "HINDSIGHT_FLOWER_PORT": str(port),
        "HINDSIGHT_FLOWER_USER": AUTH[0],
        "HINDSIGHT_FLOWER_PASSWORD": AUTH[1],
        "HINDSIGHT_API_HOST": "127.0.0.1",
    }
    log = (tmp_path / "flower.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "flower"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=REPO_ROOT,
    )
    url = f"http://127.0.0.1:{port}"

    def listening() -> bool:
        assert process.poll() is None, (tmp_path / "flower.log").read_text()
        try:
            return httpx.get(f"{url}/healthcheck", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(listening, timeout=60, interval=0.25, what="Flower to listen")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(20)
        log.close()


def test_flower_lists_the_worker_and_the_review_tasks_it_ran(
    stack: Stack, worker: WorkerProcess, flower: str
) -> None:
    assert httpx.get(f"{flower}/api/workers", timeout=10).status_code == 401  # basic auth is on
    assert httpx.get(f"{flower}/api/workers", auth=("admin", "wrong"), timeout=10).status_code == 401

    stack.start_scheduler()
    ids = [
        stack.client.write_memory("agent-f", "fia", f"s{i}", "user", f"I collect stamps from {c}.")
        for i, c in enumerate(("Peru", "Chile"))
    ]
    for i in range(2):
        stack.client.end_session("agent-f", "fia", f"s{i}")
    stack.wait_indexed(ids)
    batch_ids = {b for batches in stack.dispatched.values() for b in batches}
    assert len(batch_ids) == 2

    name = f"review-{worker.process.pid}@"  # type: ignore[union-attr]
    workers = wait_until(
        lambda: [
            w
            for w in httpx.get(f"{flower}/api/workers", params={"refresh": 1}, auth=AUTH, timeout=30).json()
            if w.startswith(name)
        ],
        timeout=30,
        interval=0.5,
        what="Flower to list the worker",
    )
    assert len(workers) == 1

    def reviews_seen() -> dict[int, dict[str, object]]:
        tasks = httpx.get(
            f"{flower}/api/tasks", params={"taskname": "hindsight.review_batch"}, auth=AUTH, timeout=10
        ).json()
        done = {}
        for task in tasks.values():
            if task["state"] == "SUCCESS" and task["worker"] == workers[0]:
                done[int(str(task["args"]).strip("[]()").rstrip(","))] = task
        return done if set(done) >= batch_ids else {}

    seen = wait_until(reviews_seen, timeout=30, interval=0.5, what="Flower to list both review tasks")
    assert set(seen) >= batch_ids
    assert all(t["name"] == "hindsight.review_batch" and t["runtime"] > 0 for t in seen.values())
