"""Embedded Redis and PostgreSQL: real server processes under tmp_path, on free ports."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import psycopg
import pytest
import redis

from pipeline.core.config import EMBEDDED_POSTGRES_PORT, EMBEDDED_REDIS_PORT
from pipeline.core.errors import ConfigError
from pipeline.runtime.embedded import EmbeddedServer
from pipeline.runtime.embedded_postgres import start_postgres
from pipeline.runtime.embedded_redis import start_redis

pytestmark = pytest.mark.integration

# Never the ports `hindsight up` or the machine's own servers use.
AVOID = {EMBEDDED_REDIS_PORT, EMBEDDED_POSTGRES_PORT, 5432, 6379}


def free_port() -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port not in AVOID:
            return port


def pg_conninfo(server: EmbeddedServer) -> str:
    return server.url.replace("postgresql+psycopg://", "postgresql://")


def in_own_session(pid: int) -> bool:
    # Ctrl-C goes to the terminal's foreground process group; the servers must not be in ours.
    return os.getsid(pid) != os.getsid(0) and os.getpgid(pid) != os.getpgid(0)


def wait_dead(pid: int, timeout_s: float = 10.0) -> None:
    """Until pid has exited (a zombie counts: it only waits for init to reap it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rpartition(")")[2].split()[:1] == ["Z"]:
            return
        time.sleep(0.02)
    raise AssertionError(f"pid {pid} still alive after {timeout_s}s")


def test_redis_key_and_stream_survive_stop_and_start(tmp_path: Path, servers: list[EmbeddedServer]) -> None:
    port = free_port()
    first = start_redis(tmp_path, port)
    servers.append(first)
    assert first.url == f"redis://127.0.0.1:{port}/0"
    assert in_own_session(first.pid)

    with redis.Redis.from_url(first.url) as client:
        client.set("k", "v")
        entry_id = client.xadd("hindsight:turns", {"turn": "hello"})

    first.stop()
    first.stop()  # idempotent
    assert first.stopped
    assert (tmp_path / "redis" / "appendonly.aof").stat().st_size > 0

    second = start_redis(tmp_path, port)
    servers.append(second)
    with redis.Redis.from_url(second.url) as client:
        assert client.get("k") == b"v"
        assert client.xrange("hindsight:turns") == [(entry_id, {b"turn": b"hello"})]


def test_redis_refuses_a_port_its_previous_run_still_holds(
    tmp_path: Path, servers: list[EmbeddedServer]
) -> None:
    port = free_port()
    running = start_redis(tmp_path, port)
    servers.append(running)

    with pytest.raises(ConfigError, match=rf"port {port} is taken"):
        start_redis(tmp_path, port)

    # The refused start left the running server alone.
    with redis.Redis.from_url(running.url) as client:
        assert client.ping()


def test_postgres_row_survives_stop_and_start(tmp_path: Path, servers: list[EmbeddedServer]) -> None:
    port = free_port()
    first = start_postgres(tmp_path, port)
    servers.append(first)
    assert first.url == f"postgresql+psycopg://postgres@127.0.0.1:{port}/hindsight"
    assert in_own_session(first.pid)

    with psycopg.connect(pg_conninfo(first), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (id int PRIMARY KEY, note text)")
        conn.execute("INSERT INTO kept VALUES (1, 'héllo')")

    with pytest.raises(ConfigError, match="already running"):
        start_postgres(tmp_path, free_port())

    first.stop()
    first.stop()  # idempotent
    assert not (tmp_path / "pg" / "postmaster.pid").exists()

    second = start_postgres(tmp_path, port)
    servers.append(second)
    with psycopg.connect(pg_conninfo(second)) as conn:
        assert conn.execute("SELECT id, note FROM kept").fetchall() == [(1, "héllo")]


def test_postgres_recovers_after_sigkill_of_the_postmaster(
    tmp_path: Path, servers: list[EmbeddedServer]
) -> None:
    port = free_port()
    crashed = start_postgres(tmp_path, port)
    servers.append(crashed)
    with psycopg.connect(pg_conninfo(crashed), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (id int)")
        conn.execute("INSERT INTO kept VALUES (7)")

    os.kill(crashed.pid, signal.SIGKILL)
    wait_dead(crashed.pid)
    assert (tmp_path / "pg" / "postmaster.pid").exists()  # stale lock file left behind

    recovered = start_postgres(tmp_path, port)
    servers.append(recovered)
    assert recovered.pid != crashed.pid
    with psycopg.connect(pg_conninfo(recovered)) as conn:
        assert conn.execute("SELECT id FROM kept").fetchall() == [(7,)]
    assert "automatic recovery in progress" in recovered.log_path.read_text()

    # The crashed handle must not stop the server that replaced it.
    crashed.stop()
    with psycopg.connect(pg_conninfo(recovered)) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_postgres_socket_moves_to_tmp_when_the_data_dir_path_is_too_long(
    tmp_path: Path, servers: list[EmbeddedServer]
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    port = free_port()
    server = start_postgres(deep, port)
    servers.append(server)

    # postmaster.pid line 5 is the socket directory.
    socket_dir = Path((deep / "pg" / "postmaster.pid").read_text().splitlines()[4])
    try:
        assert socket_dir.parent == Path("/tmp")
        assert socket_dir.name.startswith("hindsight-pg-")
        assert (socket_dir / f".s.PGSQL.{port}").is_socket()
        with psycopg.connect(host=str(socket_dir), port=port, user="postgres", dbname="hindsight") as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()
        socket_dir.rmdir()
