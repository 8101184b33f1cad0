"""Forget, update, re-heat and access bookkeeping: the SQL behind pipeline.forgetting.

Every change writes a memory_audit row (who, why, what changed) in the same transaction. A hard
forget is the user's right to erasure: the episode, the near-duplicates folded into it, its turn id
in every fact and provenance list, and semantic memories it alone supported are purged; the audit
row keeps ids, never content.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, insert, select, text, update
from sqlalchemy.orm import Session

from pipeline.adapters.postgres.engine import make_sessionmaker, translate_errors
from pipeline.adapters.postgres.outbox_sql import successors
from pipeline.adapters.postgres.semantic_writes import Outbox
from pipeline.adapters.postgres.tables import (
    episodes,
    facts,
    index_outbox,
    memory_audit,
    semantic_members,
    semantic_memories,
)
from pipeline.core.errors import NotFound
from pipeline.core.models import EPISODE, SEMANTIC

UPDATABLE = {"weight", "tags", "core", "status"}
STATUSES = {"kept", "cold", "forgotten"}
GUARDED = {"quarantined", "rejected"}  # status only changes through pipeline.adapters.postgres.quarantine_sql


def _table(kind: str) -> Any:
    return episodes if kind == EPISODE else semantic_memories


def _audit(
    s: Session,
    *,
    actor: str,
    key_prefix: str | None,
    reason: str,
    action: str,
    kind: str,
    ref_id: int,
    agent_id: str,
    user_id: str,
    changes: dict[str, Any],
) -> None:
    s.execute(
        insert(memory_audit).values(
            actor=actor,
            key_prefix=key_prefix,
            reason=reason,
            action=action,
            kind=kind,
            ref_id=ref_id,
            agent_id=agent_id,
            user_id=user_id,
            changes=changes,
        )
    )


def _outbox(s: Session, kind: str, ids: Sequence[int]) -> None:
    if ids:
        outbox = Outbox()
        outbox.add(kind, ids)
        outbox.flush(s)
        s.execute(text("SELECT pg_notify('hindsight_outbox', 'forget')"))


def _locked_row(s: Session, kind: str, ref_id: int, agent_id: str, user_id: str) -> Any:
    t = _table(kind)
    row = s.execute(
        select(t).where(t.c.id == ref_id, t.c.agent_id == agent_id, t.c.user_id == user_id).with_for_update()
    ).first()
    if row is None:
        raise NotFound(f"{kind}:{ref_id}: no such memory for agent {agent_id!r}, user {user_id!r}")
    return row


class ForgettingStore:
    def __init__(self, engine: Engine) -> None:
        self._sessions = make_sessionmaker(engine)

    def update(
        self,
        kind: str,
        ref_id: int,
        *,
        agent_id: str,
        user_id: str,
        changes: dict[str, Any],
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
    ) -> dict[str, Any]:
        """Set weight, tags, core or status. Returns the fields before and after."""
        unknown = set(changes) - UPDATABLE
        if unknown:
            raise ValueError(
                f"cannot update {', '.join(sorted(unknown))}; updatable: {', '.join(sorted(UPDATABLE))}"
            )
        if "status" in changes and changes["status"] not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(sorted(STATUSES))}")
        with translate_errors(), self._sessions.begin() as s:
            row = _locked_row(s, kind, ref_id, agent_id, user_id)
            if (
                kind == EPISODE
                and row.status in GUARDED
                and changes.get("status", "forgotten") != "forgotten"
            ):
                # A quarantined turn reaches recall only through a release, which sends it through the
                # review again and is audited as such; an update must not be a back door around that.
                raise ValueError(
                    f"episode:{ref_id} is {row.status}: release it with `hindsight quarantine release`"
                )
            t = _table(kind)
            values = {k: v for k, v in changes.items() if kind == EPISODE or k != "tags"}
            if "weight" in values:
                values["base_weight"] = values["weight"]  # decay continues from what a person set
            if values.get("status") == "kept":
                values |= {"cold_since": None, "last_accessed": now}
                if row.status != "kept":
                    values["restored_at"] = now
                if kind == EPISODE:
                    values["cold_reason"] = None
            if values.get("status") == "cold":
                values["cold_since"] = now
            before = {k: _plain(getattr(row, k)) for k in changes if hasattr(row, k)}
            s.execute(update(t).where(t.c.id == ref_id).values(**values))
            after = {k: _plain(v) for k, v in changes.items()}
            _audit(
                s,
                actor=actor,
                key_prefix=key_prefix,
                reason=reason,
                action="update",
                kind=kind,
                ref_id=ref_id,
                agent_id=agent_id,
                user_id=user_id,
                changes={"before": before, "after": after},
            )
            # A status change may take the turn out of (or back into) the context the next turn's index
            # point reads (outbox_sql._CONTEXT_STATUSES): that turn is re-indexed too.
            follows = successors(s, [ref_id]) if kind == EPISODE and "status" in values else []
            _outbox(s, kind, [ref_id, *follows])
            return {"before": before, "after": after}

    def soft_forget(
        self,
        kind: str,
        ref_id: int,
        *,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
    ) -> None:
        """Out of recall, kept for audit; reversible with update(status=kept)."""
        self.update(
            kind,
            ref_id,
            agent_id=agent_id,
            user_id=user_id,
            changes={"status": "forgotten"},
            actor=actor,
            key_prefix=key_prefix,
            reason=reason,
            now=now,
        )

    def hard_forget(
        self,
        kind: str,
        ref_id: int,
        *,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
    ) -> dict[str, int]:
        """Purge a memory from PostgreSQL (and, through the outbox, from the index). Returns what went."""
        with translate_errors(), self._sessions.begin() as s:
            _locked_row(s, kind, ref_id, agent_id, user_id)
            if kind == SEMANTIC:
                purged = _purge_semantic_chain(s, ref_id)
                counts = {"episodes": 0, "semantic_memories": len(purged), "facts": 0}
            else:
                counts = _purge_episode(s, ref_id, agent_id, user_id)
            _audit(
                s,
                actor=actor,
                key_prefix=key_prefix,
                reason=reason,
                action="hard_forget",
                kind=kind,
                ref_id=ref_id,
                agent_id=agent_id,
                user_id=user_id,
                changes={"purged": counts},
            )
            return counts

    def purge_cold(self, *, older_than: datetime, limit: int = 1000) -> int:
        """Retention: hard-forget episodes cold since before `older_than` (off unless configured)."""
        with translate_errors(), self._sessions.begin() as s:
            rows = s.execute(
                select(episodes.c.id, episodes.c.agent_id, episodes.c.user_id)
                .where(
                    episodes.c.status == "cold",
                    episodes.c.cold_since < older_than,
                    episodes.c.merged_into.is_(None),
                )
                .limit(limit)
            ).all()
        for r in rows:
            self.hard_forget(
                EPISODE,
                r.id,
                agent_id=r.agent_id,
                user_id=r.user_id,
                actor="retention",
                key_prefix=None,  # the system's own change: no key made it
                reason=f"cold since before {older_than.isoformat()}",
            )
        return len(rows)

    def reheat(self, kind: str, ids: Sequence[int], *, now: datetime) -> int:
        """A cold memory that was explicitly recalled is hot again, at full weight."""
        if not ids:
            return 0
        t = _table(kind)
        values: dict[str, Any] = {
            "status": "kept",
            "cold_since": None,
            "last_accessed": now,
            "restored_at": now,
            "weight": t.c.base_weight,
        }
        if kind == EPISODE:
            values["cold_reason"] = None
        with translate_errors(), self._sessions.begin() as s:
            done = list(
                s.scalars(
                    update(t)
                    .where(t.c.id.in_(list(ids)), t.c.status == "cold")
                    .values(**values)
                    .returning(t.c.id)
                )
            )
            _outbox(s, kind, done)
            return len(done)

    def record_access(self, kind: str, counts: dict[int, int], now: datetime) -> None:
        """Recall hits, batched: last access now, access_count += hits, weight back to its base."""
        if not counts:
            return
        table = "episodes" if kind == EPISODE else "semantic_memories"
        with translate_errors(), self._sessions.begin() as s:
            s.execute(
                text(
                    f"UPDATE {table} t SET last_accessed = greatest(t.last_accessed, :now), "
                    "access_count = t.access_count + h.n, weight = t.base_weight "
                    "FROM unnest(CAST(:ids AS bigint[]), CAST(:ns AS int[])) AS h(id, n) "
                    "WHERE t.id = h.id AND t.status = 'kept'"
                ),
                {"ids": list(counts), "ns": list(counts.values()), "now": now},
            )


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _purge_episode(s: Session, episode_id: int, agent_id: str, user_id: str) -> dict[str, int]:
    e = episodes
    # The memory and every near-duplicate folded into it: the same statement, the same erasure.
    ids = [episode_id]
    frontier = [episode_id]
    while frontier:
        frontier = list(s.scalars(select(e.c.id).where(e.c.merged_into.in_(frontier))))
        ids += frontier
    turn_ids = list(s.scalars(select(e.c.turn_id).where(e.c.id.in_(ids))))
    # Semantic memories: drop these members; a memory left without members goes entirely.
    memory_ids = list(
        s.scalars(
            select(semantic_members.c.memory_id).where(semantic_members.c.episode_id.in_(ids)).distinct()
        )
    )
    s.execute(delete(semantic_members).where(semantic_members.c.episode_id.in_(ids)))
    emptied = [
        m
        for m in memory_ids
        if s.scalar(select(semantic_members.c.episode_id).where(semantic_members.c.memory_id == m).limit(1))
        is None
    ]
    purged_memories: list[int] = []
    for m in emptied:
        purged_memories += _purge_semantic_chain(s, m)
    _outbox(s, SEMANTIC, [m for m in memory_ids if m not in purged_memories])
    # Provenance elsewhere: fact versions and survivors of merges forget these turn ids.
    params = {"t": turn_ids, "a": agent_id, "u": user_id}
    s.execute(
        text(
            "UPDATE facts SET turn_ids = ARRAY(SELECT x FROM unnest(turn_ids) x WHERE NOT x = ANY(:t)) "
            "WHERE agent_id = :a AND user_id = :u AND turn_ids && CAST(:t AS text[])"
        ),
        params,
    )
    orphans = list(
        s.scalars(
            text("SELECT id FROM facts WHERE agent_id = :a AND user_id = :u AND cardinality(turn_ids) = 0"),
            params,
        )
    )
    if orphans:
        s.execute(update(facts).where(facts.c.superseded_by.in_(orphans)).values(superseded_by=None))
        s.execute(delete(facts).where(facts.c.id.in_(orphans)))
    s.execute(
        text(
            "UPDATE episodes SET merged_turn_ids = ARRAY(SELECT x FROM unnest(merged_turn_ids) x "
            "WHERE NOT x = ANY(:t)) WHERE agent_id = :a AND user_id = :u AND merged_turn_ids && CAST(:t AS text[])"
        ),
        params,
    )
    s.execute(delete(index_outbox).where(index_outbox.c.kind == EPISODE, index_outbox.c.ref_id.in_(ids)))
    after = [i for i in successors(s, ids) if i not in ids]  # read while the purged rows still exist
    for episode in reversed(ids):  # losers before the survivor they point at
        s.execute(delete(e).where(e.c.id == episode))
    # The indexer finds no row for `ids` and deletes their points, and re-reads the turns after them
    # without them as context.
    _outbox(s, EPISODE, [*ids, *after])
    return {"episodes": len(ids), "semantic_memories": len(purged_memories), "facts": len(orphans)}


def _purge_semantic_chain(s: Session, memory_id: int) -> list[int]:
    """A semantic memory and all its versions; their members lose consolidation and get full weight back."""
    m = semantic_memories
    chain = {memory_id}
    frontier = {memory_id}
    while frontier:
        older = set(
            s.scalars(select(m.c.previous_id).where(m.c.id.in_(frontier), m.c.previous_id.is_not(None)))
        )
        newer = set(s.scalars(select(m.c.id).where(m.c.previous_id.in_(frontier))))
        frontier = (older | newer) - chain
        chain |= frontier
    members = list(
        s.scalars(select(semantic_members.c.episode_id).where(semantic_members.c.memory_id.in_(chain)))
    )
    s.execute(
        update(episodes)
        .where(episodes.c.id.in_(members))
        .values(consolidated=False, weight=1.0, base_weight=1.0)
    )
    s.execute(delete(semantic_members).where(semantic_members.c.memory_id.in_(chain)))
    s.execute(update(m).where(m.c.id.in_(chain)).values(previous_id=None))
    s.execute(delete(m).where(m.c.id.in_(chain)))
    _outbox(s, SEMANTIC, sorted(chain))
    _outbox(s, EPISODE, members)
    return sorted(chain)
