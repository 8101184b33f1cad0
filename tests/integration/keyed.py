"""What the tests of a stack with keys required share: a fresh set of API keys, and a recall over MCP-over-HTTP
with a key of the caller's own."""

from __future__ import annotations

import json

import redis
from sqlalchemy import text

from pipeline.adapters.postgres.api_keys_sql import KeyStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.ingest.validation import utcnow
from tests.integration.harness import REDIS_URL, TABLES


def fresh_keys(repo: Repository, *, writer: bool = False) -> dict[str, str]:
    """Empty tables and Redis db, then an admin key and two agents' keys (alpha, beta), and with `writer` a
    third agent's key that may write shared spaces."""
    with repo.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    redis.Redis.from_url(REDIS_URL).flushdb()
    store = KeyStore(repo.engine)
    now = utcnow()
    keys = {
        "admin": store.create("ops", can_write_shared=True, is_admin=True, note="test", now=now)[1],
        "alpha": store.create("alpha", can_write_shared=False, is_admin=False, note=None, now=now)[1],
        "beta": store.create("beta", can_write_shared=False, is_admin=False, note=None, now=now)[1],
    }
    if writer:
        keys["writer"] = store.create("gamma", can_write_shared=True, is_admin=False, note=None, now=now)[1]
    return keys


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
