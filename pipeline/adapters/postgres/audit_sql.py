"""Read side of the memory audit log (memory_audit): who forgot, changed, released or undid what, and why.

Each row shows the `actor` the caller wrote beside the key the server authenticated (`key`: a key prefix,
"keyless" with auth off, None for the system's own changes and rows before migration 0024), so a reader
can tell a claimed name from the credential that made the change (issue 44).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors

MAX_PAGE = 500


class AuditStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def entries(
        self, *, agent_id: str | None, user_id: str | None, limit: int, before_id: int | None
    ) -> list[dict[str, Any]]:
        """Newest first; one scope, or every scope with agent_id None; page on with `before_id`."""
        sql = """
            SELECT id, at, actor, key_prefix, reason, action, kind, ref_id, agent_id, user_id, changes
            FROM memory_audit WHERE true
        """
        if agent_id is not None:
            sql += " AND agent_id = :a AND user_id = :u"
        if before_id is not None:
            sql += " AND id < :before"
        sql += " ORDER BY id DESC LIMIT :limit"
        params = {"a": agent_id, "u": user_id, "before": before_id, "limit": max(1, min(limit, MAX_PAGE))}
        with translate_errors(), self.engine.connect() as conn:
            return [
                {
                    "id": r.id,
                    "at": r.at.isoformat(),
                    "actor": r.actor,
                    "key": r.key_prefix,
                    "reason": r.reason,
                    "action": r.action,
                    "memory_id": f"{r.kind}:{r.ref_id}",
                    "agent_id": r.agent_id,
                    "user_id": r.user_id,
                    "changes": r.changes,
                }
                for r in conn.execute(text(sql), params)
            ]
