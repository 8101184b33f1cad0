"""Flower without a configured password (issue 29): no well-known default is accepted, the password
made for it is in the data directory (0600), and it never appears in the process's argv (`ps`)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, wait_until
from tests.integration.harness import REDIS_URL, REPO_ROOT

pytestmark = pytest.mark.integration


def test_flower_has_no_default_password_and_keeps_its_own_out_of_argv(tmp_path: Path) -> None:
    port = free_port()
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HINDSIGHT_", "FLOWER_"))}
    env.update(
        {
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO_ROOT)),
            "HINDSIGHT_REDIS_URL": REDIS_URL,
            "HINDSIGHT_FLOWER_PORT": str(port),
            "HINDSIGHT_API_HOST": "127.0.0.1",
            "HINDSIGHT_AUTH__MODE": "required",
            "HINDSIGHT_DATA_DIR": str(data_dir),
        }
    )
    log_path = tmp_path / "flower.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "flower"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=REPO_ROOT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def listening() -> bool:
        assert process.poll() is None, log_path.read_text()
        try:
            return httpx.get(f"{url}/healthcheck", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(listening, timeout=60, interval=0.25, what="Flower to listen")
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
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(20)
