"""`hindsight up` as a newcomer runs it: embedded Redis, PostgreSQL and Qdrant, the CLI against it, Ctrl-C, again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, wait_until

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "turns.jsonl"


@dataclass
class UpProcess:
    cwd: Path
    env: dict[str, str]
    api_url: str
    flower_url: str
    process: subprocess.Popen[bytes] | None = None
    runs: int = 0

    def start(self) -> None:
        self.runs += 1
        log = (self.cwd / f"up-{self.runs}.out").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "up"],
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_until(self._ready, timeout=180, interval=0.5, what="`hindsight up` to be ready")

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"`hindsight up` exited early:\n{self.output()[-4000:]}")
        try:
            return httpx.get(f"{self.api_url}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def interrupt(self) -> int:
        """Ctrl-C, as a person in the terminal would."""
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(90)

    def output(self) -> str:
        return (self.cwd / f"up-{self.runs}.out").read_text(errors="replace")

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pipeline.cli", *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )


@pytest.fixture
def up(tmp_path: Path) -> Iterator[UpProcess]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    api_port, flower_port = free_port(), free_port()
    env.update(
        {
            "HINDSIGHT_EMBEDDED_REDIS_PORT": str(free_port()),
            "HINDSIGHT_EMBEDDED_POSTGRES_PORT": str(free_port()),
            "HINDSIGHT_API_PORT": str(api_port),
            "HINDSIGHT_API_URL": f"http://127.0.0.1:{api_port}",
            "HINDSIGHT_FLOWER_PORT": str(flower_port),
            "HINDSIGHT_FLOWER_PASSWORD": "s3cret",
            "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
        }
    )
    proc = UpProcess(tmp_path, env, f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{flower_port}")
    try:
        yield proc
    finally:
        if proc.process is not None and proc.process.poll() is None:
            proc.interrupt()
        artifacts = REPO / "test-artifacts" / "e2e-up"
        if (tmp_path / ".hindsight" / "logs").exists():
            shutil.copytree(tmp_path / ".hindsight" / "logs", artifacts, dirs_exist_ok=True)


def _recall(up: UpProcess, query: str) -> list[dict[str, object]]:
    result = up.cli("recall", query, "--agent", "demo", "--user", "ana", "--json")
    assert result.returncode == 0, result.stderr
    results: list[dict[str, object]] = json.loads(result.stdout)["results"]
    return results


def test_up_ingest_recall_ctrl_c_and_up_again_keeps_everything(up: UpProcess, tmp_path: Path) -> None:
    up.start()
    turns = tmp_path / "turns.jsonl"
    turns.write_text(EXAMPLES.read_text() + '{"agent_id": "demo", "user_id": "ana", "role": "user"}\n')

    ingest = up.cli("ingest", str(turns), "--wait", "--timeout", "180")
    # The bad last line is named by its number and skipped; everything else went through the pipeline.
    assert ingest.returncode == 1, ingest.stdout + ingest.stderr
    assert f"{turns}:7:" in ingest.stderr
    assert "session_id: missing" in ingest.stderr
    assert "all 5 turns reviewed and indexed" in ingest.stdout

    hits = _recall(up, "moved to Lisbon for a new job")
    assert hits[0]["source_turn_ids"] == ["demo-1"]
    recalled = {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]
    # The review kept everything that says something: the assistant's congratulation names the move and
    # the job, so it is kept too (only a turn that carries nothing goes cold), and ranks below the user's
    # own statement.
    assert recalled >= {"demo-1", "demo-2", "demo-3", "demo-4", "demo-5"}
    # README's first recall, word for word: the move, not the sister's visit.
    assert _recall(up, "where does the user live")[0]["source_turn_ids"] == ["demo-1"]
    facts = json.loads(up.cli("facts", "--agent", "demo", "--user", "ana", "--json").stdout)["facts"]
    assert ("allergy:peanuts", "allergic") in {(f["attribute"], f["value"]) for f in facts}

    # Flower watches the worker, behind basic auth.
    assert httpx.get(f"{up.flower_url}/api/workers", timeout=10).status_code == 401
    workers = wait_until(
        lambda: httpx.get(
            f"{up.flower_url}/api/workers?refresh=1", auth=("admin", "s3cret"), timeout=20
        ).json(),
        timeout=60,
        what="Flower to list the worker",
    )
    assert any(name.startswith("review-") for name in workers)

    # A turn that is queued but not yet reviewed when the stack stops.
    response = httpx.post(
        f"{up.api_url}/v1/turns",
        json=[
            {
                "turn_id": "demo-7",
                "agent_id": "demo",
                "user_id": "ana",
                "session_id": "s3",
                "role": "user",
                "content": "I bought a blue bicycle for commuting along the river.",
            }
        ],
    )
    assert response.status_code == 202
    wait_until(
        lambda: httpx.post(f"{up.api_url}/v1/progress", json={"turn_ids": ["demo-7"]}).json()["turns"][
            "received"
        ],
        timeout=30,
        what="the queued turn to be stored",
    )
    # Read your writes: recalled within seconds, before any review (its session is open, far from 30 turns).
    bicycle = wait_until(
        lambda: next(
            (h for h in _recall(up, "what bicycle did I buy") if h["source_turn_ids"] == ["demo-7"]), None
        ),
        timeout=15,
        what="the unreviewed turn recalled",
    )
    assert bicycle is not None
    assert bicycle["reviewed"] is False
    assert up.interrupt() == 0, up.output()[-4000:]
    assert "stopped; data kept" in up.output()

    up.start()
    assert _recall(up, "moved to Lisbon for a new job")[0]["source_turn_ids"] == ["demo-1"]
    review = up.cli("review", "--wait", "--timeout", "120")
    assert review.returncode == 0, review.stderr
    (first, *_) = _recall(up, "what bicycle did I buy")
    assert (first["source_turn_ids"], first["reviewed"]) == (["demo-7"], True)
    stats = json.loads(up.cli("stats", "--json").stdout)
    assert stats["episodes"] == {"total": 6, "kept": 6}
    assert stats["index"]["points"] == 6

    # Sixty idle days later everything but the core allergy is in cold storage, and still findable.
    later = (datetime.now(UTC) + timedelta(days=60)).isoformat()
    decay = up.cli("decay", "--now", later)
    assert decay.returncode == 0, decay.stderr
    assert "5 moved to cold storage" in " ".join(decay.stdout.split())
    wait_until(lambda: json.loads(up.cli("stats", "--json").stdout)["outbox"]["pending"] == 0, timeout=30)
    stats = json.loads(up.cli("stats", "--json").stdout)
    assert stats["episodes"] == {"total": 6, "kept": 1, "cold": 5}
    assert stats["index"]["points"] == 1
    cold = json.loads(
        up.cli(
            "recall", "what bicycle did I buy", "--agent", "demo", "--user", "ana", "--include-cold", "--json"
        ).stdout
    )["results"]
    assert (cold[0]["source_turn_ids"], cold[0]["cold"]) == (["demo-7"], True)
    assert up.interrupt() == 0, up.output()[-4000:]
