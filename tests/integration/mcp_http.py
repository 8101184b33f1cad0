"""`hindsight mcp --transport http` as a subprocess, for tests that talk to it as a remote client would."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import wait_until
from tests.integration.harness import REPO_ROOT


@contextmanager
def mcp_over_http(env: Mapping[str, str], log: Path) -> Iterator[str]:
    """The MCP server on a free port with `env` (its stderr in `log`); yields the URL it announced, and stops
    it afterwards, even when the test fails."""
    with log.open("wb") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "mcp", "--transport", "http", "--port", "0"],
            env=dict(env), stdout=subprocess.DEVNULL, stderr=err, cwd=REPO_ROOT,
        )  # fmt: skip
    try:
        yield announced_url(server, log)
    finally:
        server.terminate()
        server.wait(15)


def announced_url(server: subprocess.Popen[bytes], log: Path) -> str:
    def announced() -> str | None:
        if server.poll() is not None:
            raise AssertionError(f"hindsight mcp exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        for line in log.read_text(errors="replace").splitlines():
            if "listening on " in line:
                return line.rsplit("listening on ", 1)[1].strip()
        return None

    url = wait_until(announced, timeout=60, interval=0.1, what="hindsight mcp to listen")
    time.sleep(0.1)
    return url


async def mcp_recall(url: str, key: str | None, query: str, agent_id: str, user_id: str) -> tuple[bool, str]:
    """`memory_recall` over MCP's streamable HTTP as a remote client holding `key` (none: no header).
    Returns (is_error, everything the tool answered as text)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60))
    async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client:
        result = await client.call_tool(
            "memory_recall", {"query": query, "agent_id": agent_id, "user_id": user_id}
        )
        body = json.dumps(result.structured_content) + " ".join(
            getattr(c, "text", "") for c in result.content
        )
        return result.is_error, body
