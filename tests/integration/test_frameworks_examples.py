"""Issue 41: each framework's example runs, as a newcomer runs it, against a live API (the `make run` role
here is the test stack's API on a real socket, its scheduler and a Celery worker). Each example is a
separate process that knows only where the API and the stream are (`make run`'s defaults, here the test
stack's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _run(example: str, live: Stack) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env["HINDSIGHT_API_URL"] = str(live.settings.api_url)
    env["HINDSIGHT_REDIS_URL"] = live.settings.redis_url  # writes go onto the stream, as write_memory's do
    if live.settings.api_key:
        env["HINDSIGHT_API_KEY"] = live.settings.api_key.get_secret_value()
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / example)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{example} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_langgraph_example_recalls_what_it_stored(live: Stack) -> None:
    live.start_scheduler()
    out = _run("langgraph_agent.py", live)
    # The second turn's system message carries what the store recalled from the first.
    remembered = out.split("What you remember about the user:", 1)[1]
    assert "peanuts" in remembered.split("agent:", 1)[0]


def test_langchain_tools_example_remembers_recalls_and_forgets(live: Stack) -> None:
    live.start_scheduler()
    out = _run("langchain_tools.py", live)
    recalled = next(line for line in out.splitlines() if line.startswith("recall("))
    assert "Miso" in recalled.split("->", 1)[1]
    forgot = next(line for line in out.splitlines() if line.startswith("forget ->"))
    assert "forgot" in forgot.lower() or "episode:" in forgot


def test_openai_agents_example_keeps_and_clears_its_session(live: Stack) -> None:
    live.start_scheduler()
    out = _run("openai_agents_session.py", live)
    items = next(line for line in out.splitlines() if line.startswith("session items:"))
    assert "user" in items
    assert out.rstrip().endswith("after clear: []")
