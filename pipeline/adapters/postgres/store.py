"""The base of the PostgreSQL query classes: an engine and a session factory. Each public method of a
subclass is one transaction; callers never see a Session."""

from __future__ import annotations

from sqlalchemy import Engine

from pipeline.adapters.postgres.engine import make_sessionmaker


class SqlStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = make_sessionmaker(engine)
