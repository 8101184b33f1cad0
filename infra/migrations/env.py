"""Alembic environment. The URL comes from the caller (`hindsight migrate`), never from a file."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, text

from pipeline.adapters.postgres.tables import Base

config = context.config
target_metadata = Base.metadata

# Several processes may run `migrate` at once (`up`, compose replicas): serialise them.
MIGRATION_LOCK = 0x68696E64  # "hind"


def run_migrations_online() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "sqlalchemy.url must be set by the caller"
    engine = create_engine(url)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
        try:
            context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
            with context.begin_transaction():
                context.run_migrations()
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
            connection.commit()
    engine.dispose()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
