"""The pool pings a connection only after it sat idle, and replaces one that died meanwhile."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import Engine, event, text

from pipeline.adapters.postgres import engine as engine_module
from pipeline.adapters.postgres.engine import make_engine, translate_errors
from pipeline.errors import StoreUnavailable


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


def test_a_connection_reused_at_once_is_not_pinged(migrated: str) -> None:
    engine = make_engine(migrated, pool_size=1)
    try:
        pings = _pings(engine)
        pids = {_backend_pid(engine) for _ in range(20)}
        assert len(pids) == 1, "the pool should hand out the same connection"
        assert pings == []
    finally:
        engine.dispose()


def test_a_connection_that_died_while_idle_is_replaced(
    migrated: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine_module, "PING_IDLE_S", 0.1)
    engine = make_engine(migrated, pool_size=1)
    try:
        pings = _pings(engine)
        first = _backend_pid(engine)
        _terminate(migrated, first)  # sleeps past PING_IDLE_S
        second = _backend_pid(engine)  # would raise if the dead connection were handed out
        assert second != first
        assert len(pings) == 1
    finally:
        engine.dispose()


def test_a_connection_that_died_a_moment_ago_fails_once_then_recovers(
    migrated: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the idle window there is no ping: the query fails as in an outage, and the pool recovers."""
    monkeypatch.setattr(engine_module, "PING_IDLE_S", 60.0)
    engine = make_engine(migrated, pool_size=1)
    invalidated: list[int] = []
    event.listen(engine, "invalidate", lambda *_: invalidated.append(1))
    try:
        first = _backend_pid(engine)
        _terminate(migrated, first)
        with pytest.raises(StoreUnavailable), translate_errors(), engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        assert invalidated, "the dead connection should be dropped from the pool"
        assert _backend_pid(engine) != first
    finally:
        engine.dispose()
