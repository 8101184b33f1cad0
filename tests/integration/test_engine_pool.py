"""The pool pings a connection only after it sat idle, and replaces one that died meanwhile."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, event, text

from pipeline.adapters.postgres import engine as engine_module
from pipeline.adapters.postgres.engine import make_engine, translate_errors
from pipeline.core.errors import StoreUnavailable


def _pings(engine: Engine) -> list[int]:
    """Counts the dialect's pings (appends one per do_ping call)."""
    calls: list[int] = []
    original = engine.dialect.do_ping

    def counting(dbapi_connection: object) -> bool:
        calls.append(1)
        return original(dbapi_connection)

    engine.dialect.do_ping = counting  # type: ignore[method-assign]
    return calls


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(migrated: str, pid: int) -> None:
    killer = make_engine(migrated, pool_size=1)
    try:
        with killer.begin() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar_one()
    finally:
        killer.dispose()
    time.sleep(0.2)  # the backend exits asynchronously


@pytest.fixture
def one_connection_pool(migrated: str) -> Iterator[Engine]:
    engine = make_engine(migrated, pool_size=1)
    yield engine
    engine.dispose()


@pytest.fixture
def ping_idle_s(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Read by make_engine, so it must be set before the pool fixture builds its engine.
    monkeypatch.setattr(engine_module, "PING_IDLE_S", request.param)


def test_a_connection_reused_at_once_is_not_pinged(one_connection_pool: Engine) -> None:
    pings = _pings(one_connection_pool)
    pids = {_backend_pid(one_connection_pool) for _ in range(20)}
    assert len(pids) == 1, "the pool should hand out the same connection"
    assert pings == []


@pytest.mark.parametrize("ping_idle_s", [0.1], indirect=True)
def test_a_connection_that_died_while_idle_is_replaced(
    migrated: str, ping_idle_s: None, one_connection_pool: Engine
) -> None:
    pings = _pings(one_connection_pool)
    first = _backend_pid(one_connection_pool)
    _terminate(migrated, first)  # sleeps past PING_IDLE_S
    second = _backend_pid(one_connection_pool)  # would raise if the dead connection were handed out
    assert second != first
    assert len(pings) == 1


@pytest.mark.parametrize("ping_idle_s", [60.0], indirect=True)
def test_a_connection_that_died_a_moment_ago_fails_once_then_recovers(
    migrated: str, ping_idle_s: None, one_connection_pool: Engine
) -> None:
    """Inside the idle window there is no ping: the query fails as in an outage, and the pool recovers."""
    invalidated: list[int] = []
    event.listen(one_connection_pool, "invalidate", lambda *_: invalidated.append(1))
    first = _backend_pid(one_connection_pool)
    _terminate(migrated, first)
    with pytest.raises(StoreUnavailable), translate_errors(), one_connection_pool.connect() as conn:
        conn.execute(text("SELECT 1"))
    assert invalidated, "the dead connection should be dropped from the pool"
    assert _backend_pid(one_connection_pool) != first
