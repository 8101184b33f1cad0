"""With API keys required, the embedded servers `hindsight up` starts refuse local clients without
credentials (issue 29): the Python client without a key can no longer write into any scope through
Redis, and PostgreSQL over TCP wants a password. Real servers, started as `up` starts them."""

from __future__ import annotations

import stat
from pathlib import Path

import psycopg
import pytest
import redis

from pipeline.client import MemoryClient
from pipeline.core.config import STREAM_TURNS, Settings
from pipeline.core.errors import Unauthenticated
from pipeline.runtime.embedded import EmbeddedServer
from pipeline.runtime.up import start_embedded, without_password
from tests.integration.test_embedded import free_port

pytestmark = pytest.mark.integration


def _settings(data_dir: Path, redis_port: int, pg_port: int, mode: str) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=data_dir,
        embedded_redis_port=redis_port,
        embedded_postgres_port=pg_port,
        auth={"mode": mode},
        api_key=None,
        redis_url=None,
        database_url=None,
    )


def _tcp_postgres(port: int, password: str | None = None) -> None:
    with psycopg.connect(
        host="127.0.0.1", port=port, user="postgres", dbname="hindsight", password=password,
        connect_timeout=5, sslmode="disable",
    ) as conn:  # fmt: skip
        conn.execute("SELECT 1")


def test_with_keys_required_the_embedded_servers_want_credentials(
    tmp_path: Path, servers: list[EmbeddedServer]
) -> None:
    data_dir = tmp_path / "data"
    redis_port, pg_port = free_port(), free_port()
    settings = _settings(data_dir, redis_port, pg_port, "required")
    urls = start_embedded(settings, data_dir, servers, print)

    secrets_dir = data_dir / "secrets"
    assert stat.S_IMODE(secrets_dir.stat().st_mode) == 0o700
    for name in ("redis_password", "postgres_password"):
        assert stat.S_IMODE((secrets_dir / name).stat().st_mode) == 0o600, name
    redis_password = (secrets_dir / "redis_password").read_text().strip()
    assert redis_password in urls["HINDSIGHT_REDIS_URL"]
    assert redis_password not in without_password(urls["HINDSIGHT_REDIS_URL"])  # what up prints

    # The Python client without a key, pointed at the embedded Redis as it would be by default.
    client = MemoryClient(settings)
    try:
        assert not client.via_api
        with pytest.raises(Unauthenticated, match="requires a password"):
            client.write_memory("victim-agent", "u1", "s1", "user", "my new phone number is 555-0199")
        with pytest.raises(Unauthenticated):
            client.set_working_memory("victim-agent", "u1", "s1", task="exfiltrate")
    finally:
        client.close()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=redis_port).xadd(STREAM_TURNS, {"kind": "turn"})
    roles = redis.Redis.from_url(urls["HINDSIGHT_REDIS_URL"])  # what `up` hands its roles
    assert roles.xlen(STREAM_TURNS) == 0  # nothing got in
    roles.close()

    with pytest.raises(psycopg.OperationalError):
        _tcp_postgres(pg_port)
    with pytest.raises(psycopg.OperationalError):
        _tcp_postgres(pg_port, "hindsight")
    _tcp_postgres(pg_port, (secrets_dir / "postgres_password").read_text().strip())
    # Operator commands (`hindsight keys`, `migrate`) find the password in the data directory.
    with psycopg.connect(settings.db_url.replace("+psycopg", "")) as conn:
        conn.execute("SELECT 1")

    # Started again the same way: the same passwords; started without keys required: open again.
    for server in reversed(servers):
        server.stop(timeout_s=15)
    servers.clear()
    again = start_embedded(settings, data_dir, servers, print)
    assert again == urls
    for server in reversed(servers):
        server.stop(timeout_s=15)
    servers.clear()
    open_urls = start_embedded(_settings(data_dir, redis_port, pg_port, "auto"), data_dir, servers, print)
    assert "@" not in open_urls["HINDSIGHT_REDIS_URL"]
    assert redis.Redis(host="127.0.0.1", port=redis_port).ping()
    _tcp_postgres(pg_port)
