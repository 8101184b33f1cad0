"""The human side of the poisoning defence: list quarantined turns, release or reject them, audited.

Release hands a turn back to the review as if it had just arrived (pending, out of its batches), marked
released so the detector does not quarantine it again; the review then keeps, cools or merges it on its
merits. Reject confirms the quarantine: the turn stays in PostgreSQL as evidence and is never recalled.
Both write a memory_audit row with who and why in the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select, update

from pipeline.adapters.postgres.engine import make_sessionmaker, translate_errors
from pipeline.adapters.postgres.forgetting_sql import _audit
from pipeline.adapters.postgres.tables import episodes
from pipeline.core.errors import NotFound

QUARANTINED = "quarantined"
REJECTED = "rejected"
MAX_LIST = 1000


class QuarantineStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sessions = make_sessionmaker(engine)

    def list(
        self, *, agent_id: str | None = None, user_id: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Quarantined turns, oldest first, with the detector's reason and score."""
        e = episodes
        q = select(
            e.c.id,
            e.c.turn_id,
            e.c.agent_id,
            e.c.user_id,
            e.c.session_id,
            e.c.role,
            e.c.source,
            e.c.content,
            e.c.ts,
            e.c.received_at,
            e.c.quarantine,
        ).where(e.c.status == QUARANTINED)
        if agent_id is not None:
            q = q.where(e.c.agent_id == agent_id)
        if user_id is not None:
            q = q.where(e.c.user_id == user_id)
        with translate_errors(), self._engine.connect() as conn:
            rows = conn.execute(q.order_by(e.c.id).limit(max(1, min(limit, MAX_LIST))))
            return [
                {
                    "id": f"episode:{r.id}",
                    "turn_id": r.turn_id,
                    "agent_id": r.agent_id,
                    "user_id": r.user_id,
                    "session_id": r.session_id,
                    "role": r.role,
                    "source": r.source,
                    "content": r.content,
                    "ts": r.ts.isoformat(),
                    "received_at": r.received_at.isoformat(),
                    "verdict": r.quarantine or {},
                }
                for r in rows
            ]

    def release(
        self,
        episode_id: int,
        *,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
    ) -> dict[str, Any]:
        """Back to the review as a pending turn that the detector will not stop again."""
        return self._decide(episode_id, agent_id, user_id, actor, key_prefix, reason, now, release=True)

    def reject(
        self,
        episode_id: int,
        *,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
    ) -> dict[str, Any]:
        """Confirm the quarantine: kept as evidence, never recalled, never reviewed again."""
        return self._decide(episode_id, agent_id, user_id, actor, key_prefix, reason, now, release=False)

    def _decide(
        self,
        episode_id: int,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
        *,
        release: bool,
    ) -> dict[str, Any]:
        e = episodes
        action = "release" if release else "reject"
        with translate_errors(), self._sessions.begin() as s:
            row = s.execute(
                select(e.c.id, e.c.status, e.c.quarantine)
                .where(e.c.id == episode_id, e.c.agent_id == agent_id, e.c.user_id == user_id)
                .with_for_update()
            ).first()
            if row is None or row.status != QUARANTINED:
                raise NotFound(
                    f"episode:{episode_id}: no quarantined turn for agent {agent_id!r}, user {user_id!r}"
                    + (f" (it is {row.status})" if row is not None else "")
                )
            done = "released" if release else "rejected"  # f"{action}d" once stamped "rejectd_at"
            stamp = {
                f"{done}_at": now.isoformat(),
                f"{done}_by": actor,
                f"{done}_with_key": key_prefix,
                f"{action}_reason": reason,
            }
            verdict = {**(row.quarantine or {}), **stamp}
            values: dict[str, Any] = {"quarantine": verdict}
            if release:
                # Out of the batches that quarantined it, so the scheduler claims it again like a new turn.
                values |= {
                    "status": "pending",
                    "light_batch_id": None,
                    "full_batch_id": None,
                    "reviewed_at": None,
                }
            else:
                values["status"] = REJECTED
            s.execute(update(e).where(e.c.id == episode_id).values(**values))
            _audit(
                s,
                actor=actor,
                key_prefix=key_prefix,
                reason=reason,
                action=action,
                kind="episode",
                ref_id=episode_id,
                agent_id=agent_id,
                user_id=user_id,
                changes={"before": {"status": QUARANTINED}, "after": {"status": values["status"]}},
            )
            return {"id": f"episode:{episode_id}", "status": values["status"], "action": action}
