"""What the tests of a stack with keys required share: a fresh set of API keys."""

from __future__ import annotations

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
