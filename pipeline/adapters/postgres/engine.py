"""Engine and session factory; vendor errors become our RetryableError at this edge."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DataError, DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from pipeline.errors import InvalidValue, StoreUnavailable


def make_engine(url: str, *, pool_size: int = 5) -> Engine:
    # pre_ping: a pooled connection that died with a PostgreSQL restart is replaced, not handed out.
    return create_engine(url, pool_pre_ping=True, pool_size=pool_size, max_overflow=pool_size)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def translate_errors() -> Iterator[None]:
    try:
        yield
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
