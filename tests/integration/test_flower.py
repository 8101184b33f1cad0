"""Flower, started as `hindsight flower` starts it (basic auth), sees the real worker and the reviews it ran."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, wait_until
from tests.integration.harness import REDIS_URL, REPO_ROOT, Stack, WorkerProcess

pytestmark = pytest.mark.integration
AUTH = ("flower-test", "s3cret-pass")


@contextmanager
def running_flower(env: dict[str, str], log_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`hindsight flower` with `env` on HINDSIGHT_FLOWER_PORT, once it answers its healthcheck: (url, process).
    Its whole process group is stopped afterwards, even when the test fails."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "flower"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=REPO_ROOT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{env['HINDSIGHT_FLOWER_PORT']}"

    def listening() -> bool:
        assert process.poll() is None, log_path.read_text()
        try:
            return httpx.get(f"{url}/healthcheck", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(listening, timeout=60, interval=0.25, what="Flower to listen")
        yield url, process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(20)


@pytest.fixture
def flower(tmp_path: Path) -> Iterator[str]:
    env = {
        **os.environ,
        "HINDSIGHT_REDIS_URL": REDIS_URL,
        "HINDSIGHT_FLOWER_PORT": str(free_port()),
        "HINDSIGHT_FLOWER_USER": AUTH[0],
        "HINDSIGHT_FLOWER_PASSWORD": AUTH[1],
        "HINDSIGHT_API_HOST": "127.0.0.1",
    }
    with running_flower(env, tmp_path / "flower.log") as (url, _):
        yield url


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


def test_flower_has_no_default_password_and_keeps_its_own_out_of_argv(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "FLOWER_"))}
    env.update(
        {
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO_ROOT)),
            "HINDSIGHT_REDIS_URL": REDIS_URL,
            "HINDSIGHT_FLOWER_PORT": str(free_port()),
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_AUTH__MODE": "required",
            "HINDSIGHT_DATA_DIR": str(data_dir),
        }
    )
    # Without a configured password (issue 29): no well-known default is accepted, the password made for it
    # is in the data directory (0600), and it never appears in the process's argv (`ps`).
    with running_flower(env, tmp_path / "flower.log") as (url, process):
        assert httpx.get(f"{url}/api/workers", auth=("admin", "hindsight"), timeout=10).status_code == 401
        assert httpx.get(f"{url}/api/workers", timeout=10).status_code == 401
        secret = data_dir / "secrets" / "flower_password"
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
        password = secret.read_text().strip()
        assert len(password) >= 32
        assert password != "hindsight"
        assert httpx.get(f"{url}/api/workers", auth=("admin", password), timeout=10).status_code == 200
        # `ps` shows every process's argv to every local user: the password must not be there.
        argv = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode(errors="replace")
        assert "flower" in argv
        assert password not in argv
        assert "basic-auth" not in argv
