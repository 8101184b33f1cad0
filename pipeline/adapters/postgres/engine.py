"""Engine and session factory; vendor errors become our RetryableError at this edge."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DataError, DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from pipeline.core.errors import InvalidValue, StoreUnavailable

# A pooled connection idle for longer than this is pinged before it is handed out.
PING_IDLE_S = 1.0


def make_engine(url: str, *, pool_size: int = 5) -> Engine:
    engine = create_engine(url, pool_size=pool_size, max_overflow=pool_size)
    _ping_when_idle(engine, PING_IDLE_S)
    return engine


def _ping_when_idle(engine: Engine, idle_s: float) -> None:
    """Ping a pooled connection before reuse only if it sat idle for `idle_s`.

    A connection that died with a PostgreSQL restart must be replaced, not handed out; SQLAlchemy's
    pool_pre_ping does that with a round trip at every checkout, which cost the scheduler a quarter of
    its CPU (it checks out a connection per query in a loop). A connection returned a moment ago is as
    alive as one just pinged; if the server went down in that moment the query fails like any other
    during an outage (StoreUnavailable, retried by the caller) and the pool drops its connections.
    Raising DisconnectionError on checkout makes the pool discard this one and try another.
    """

    @event.listens_for(engine, "checkin")
    def _returned(dbapi_connection: Any, record: Any) -> None:
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        returned_at = record.info.get("returned_at")
        if returned_at is None or time.monotonic() - returned_at < idle_s:
            return  # new, or in use a moment ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(f"pooled connection is dead: {exc}") from exc


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def translate_errors() -> Iterator[None]:
    try:
        yield
    except UnicodeEncodeError as exc:
        # JSON may carry a lone surrogate (\ud800): a Python str, but no UTF-8 that PostgreSQL could store
        # (found by fuzzing the API: /v1/progress's turn_ids). The caller's value, like a NUL below.
        raise InvalidValue(
            f"value rejected: not valid UTF-8 (a lone surrogate at position {exc.start} of a string); "
            "send text as Unicode characters, with \\uD800-\\uDFFF escapes only as a high-low pair"
        ) from exc
    except OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL unavailable: {exc.orig}") from exc
    except DataError as exc:
        # The value, not the store, is wrong (found by fuzzing the API: a NUL in a query parameter, an
        # episode id past bigint): a clear rejection instead of a 500.
        raise InvalidValue(f"value rejected by PostgreSQL: {str(exc.orig).splitlines()[0][:200]}") from exc
    except DBAPIError as exc:
        if exc.connection_invalidated:
            raise StoreUnavailable(f"PostgreSQL connection lost: {exc.orig}") from exc
        raise


def libpq_dsn(url: str) -> str:
    """The SQLAlchemy URL as a plain libpq one, for psycopg connections outside SQLAlchemy (LISTEN)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
