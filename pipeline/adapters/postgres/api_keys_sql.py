"""API keys in PostgreSQL: create (the secret leaves only once, to the caller), list, revoke, look up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from pipeline.adapters.postgres.tables import api_keys
from pipeline.core.authz import Principal, check_agent_id, new_key
from pipeline.core.errors import NotFound


@dataclass(frozen=True, slots=True)
class KeyRow:
    prefix: str
    secret_sha256: str
    agent_id: str
    can_write_shared: bool
    is_admin: bool
    revoked_at: datetime | None

    def principal(self) -> Principal:
        return Principal(
            agent_id=self.agent_id,
            can_write_shared=self.can_write_shared,
            is_admin=self.is_admin,
            key_prefix=self.prefix,
        )


class KeyStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(
        self, agent_id: str, *, can_write_shared: bool, is_admin: bool, note: str | None, now: datetime
    ) -> tuple[str, str]:
        """(prefix, the full key). The key is not stored; print it once."""
        check_agent_id(agent_id)
        for _ in range(5):  # 32-bit prefixes: a collision is rare, and retrying is enough
            key = new_key()
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        insert(api_keys).values(
                            prefix=key.prefix,
                            secret_sha256=key.secret_hash,
                            agent_id=agent_id,
                            can_write_shared=can_write_shared,
                            is_admin=is_admin,
                            note=note,
                            created_at=now,
                        )
                    )
                return key.prefix, key.token
            except IntegrityError:
                continue
        raise RuntimeError("could not find a free key prefix in 5 tries")  # pragma: no cover

    def list(self) -> list[dict[str, Any]]:
        """Every key, newest first: never the secret nor its hash."""
        cols = [c for c in api_keys.c if c.name not in ("secret_sha256", "id")]
        with self.engine.connect() as conn:
            rows = conn.execute(select(*cols).order_by(api_keys.c.created_at.desc(), api_keys.c.id.desc()))
            return [
                {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r._mapping.items()}
                for r in rows
            ]

    def revoke(self, prefix: str, *, now: datetime) -> bool:
        """True when the key was active and is now revoked; False when it was already revoked."""
        with self.engine.begin() as conn:
            found = conn.execute(select(api_keys.c.revoked_at).where(api_keys.c.prefix == prefix)).first()
            if found is None:
                raise NotFound(f"no API key with prefix {prefix!r} (see `hindsight keys list`)")
            if found.revoked_at is not None:
                return False
            conn.execute(update(api_keys).where(api_keys.c.prefix == prefix).values(revoked_at=now))
            return True

    def find(self, prefix: str) -> KeyRow | None:
        with self.engine.connect() as conn:
            r = conn.execute(
                select(
                    api_keys.c.prefix,
                    api_keys.c.secret_sha256,
                    api_keys.c.agent_id,
                    api_keys.c.can_write_shared,
                    api_keys.c.is_admin,
                    api_keys.c.revoked_at,
                ).where(api_keys.c.prefix == prefix)
            ).first()
        return KeyRow(**r._mapping) if r is not None else None

    def touch(self, prefix: str, *, now: datetime) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(api_keys).where(api_keys.c.prefix == prefix).values(last_used_at=now))
