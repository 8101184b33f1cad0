"""The base of the PostgreSQL query classes: an engine and a session factory. Each public method of a
subclass is one transaction; callers never see a Session."""

from __future__ import annotations

from sqlalchemy import Engine

from pipeline.adapters.model_identity import ModelIdentity
from pipeline.adapters.postgres.engine import make_sessionmaker


class SqlStore:
    def __init__(self, engine: Engine, *, vectors_by: ModelIdentity | None = None) -> None:
        """`vectors_by`: the model this process embeds with, when it writes vectors (a review worker): each
        review write checks it is still the store's (model_sql.check_vectors_by)."""
        self.engine = engine
        self.vectors_by = vectors_by
        self._sessions = make_sessionmaker(engine)
