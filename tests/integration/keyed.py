"""What the tests of a stack with keys required share: a fresh set of API keys."""

from __future__ import annotations

from typing import Any

import httpx
import redis

from pipeline.adapters.postgres.api_keys_sql import KeyStore
from pipeline.adapters.postgres.repository import Repository
from pipeline.ingest.validation import utcnow
from tests.integration.harness import REDIS_URL, Stack, reset_store


def fresh_keys(repo: Repository, *, writer: bool = False) -> dict[str, str]:
    """Empty tables and Redis db, then an admin key and two agents' keys (alpha, beta), and with `writer` a
    third agent's key that may write shared spaces."""
    reset_store(repo.engine)
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


class KeyedSite:
    """A running stack and its keys: an HTTP client acting with one of them. `bearer` sends the key as
    `Authorization: Bearer`, otherwise as `X-API-Key` (both are accepted; tests use both)."""

    def __init__(self, stack: Stack, keys: dict[str, str], *, bearer: bool = False) -> None:
        self.stack = stack
        self.keys = keys
        self.url = stack.settings.api_url
        self._bearer = bearer

    def http(self, key: str) -> httpx.Client:
        secret = self.keys[key]
        header = {"Authorization": f"Bearer {secret}"} if self._bearer else {"X-API-Key": secret}
        return httpx.Client(base_url=self.url, timeout=60, headers=header)

    def get(self, key: str, path: str, **params: Any) -> httpx.Response:
        with self.http(key) as http:
            return http.get(path, params=params)
