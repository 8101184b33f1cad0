"""Writing semantic memories (versions, members, provenance) inside the review's transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import insert, select, text, update
from sqlalchemy.orm import Session

from pipeline.adapters.embedder import from_blob, to_blob
from pipeline.adapters.postgres.tables import episodes, index_outbox, semantic_members, semantic_memories
from pipeline.consolidation import MemoryPlan, centroid

SEMANTIC = "semantic"
EPISODE = "episode"


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    plan: MemoryPlan
    text: str
    method: str  # extractive | llm


def write_memories(
    s: Session,
    agent_id: str,
    user_id: str,
    writes: Sequence[MemoryWrite],
    now: datetime,
    *,
    member_weight: float,
) -> dict[str, int]:
    counts = {"memories_created": 0, "memories_updated": 0}
    for w in writes:
        previous, version = None, 1
        if w.plan.replaces is not None:
            closed = s.execute(
                update(semantic_memories)
                .where(semantic_memories.c.id == w.plan.replaces, semantic_memories.c.valid_to.is_(None))
                .values(valid_to=now)
                .returning(semantic_memories.c.version)
            ).first()
            if closed is not None:  # still open under the scope lock: this is its next version
                previous, version = w.plan.replaces, closed.version + 1
                _outbox(s, SEMANTIC, [w.plan.replaces])
        memory_id = _insert(s, agent_id, user_id, w, previous, version)
        counts["memories_updated" if previous else "memories_created"] += 1
        _attach(s, memory_id, w.plan.members, member_weight)
    return counts


def _insert(
    s: Session, agent_id: str, user_id: str, w: MemoryWrite, previous: int | None, version: int
) -> int:
    memory_id = s.execute(
        insert(semantic_memories)
        .values(
            agent_id=agent_id,
            user_id=user_id,
            text=w.text,
            embedding=to_blob(w.plan.centroid),
            importance=w.plan.importance,
            valid_from=w.plan.valid_from,
            version=version,
            previous_id=previous,
            method=w.method,
        )
        .returning(semantic_memories.c.id)
    ).scalar_one()
    _outbox(s, SEMANTIC, [memory_id])
    return int(memory_id)


def _attach(s: Session, memory_id: int, members: Sequence[int], member_weight: float) -> None:
    s.execute(insert(semantic_members), [{"memory_id": memory_id, "episode_id": e} for e in members])
    # Members stop competing with the summary that stands for them.
    s.execute(
        update(episodes)
        .where(episodes.c.id.in_(list(members)))
        .values(consolidated=True, weight=member_weight, base_weight=member_weight)
    )
    _outbox(s, EPISODE, members)


def retire_superseded(
    s: Session,
    agent_id: str,
    user_id: str,
    now: datetime,
    *,
    min_members: int,
    summarise: Callable[[list[str], list[int]], str],
) -> dict[str, int]:
    """Open memories whose members' facts were superseded: re-derive them from the members still current,
    or close them when too few remain, so no semantic memory keeps asserting an outdated value."""
    counts = {"memories_rederived": 0, "memories_closed": 0}
    rows = s.execute(
        text(
            """
            SELECT m.id AS memory_id, e.id AS episode_id
            FROM semantic_memories m
            JOIN semantic_members sm ON sm.memory_id = m.id
            JOIN episodes e ON e.id = sm.episode_id
            WHERE m.agent_id = :a AND m.user_id = :u AND m.valid_to IS NULL
              AND EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                          AND e.turn_id = ANY(f.turn_ids))
              AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                          AND e.turn_id = ANY(f.turn_ids) AND f.retracted_at IS NULL AND f.valid_to IS NULL)
            """
        ),
        {"a": agent_id, "u": user_id},
    ).all()
    stale: dict[int, set[int]] = {}
    for r in rows:
        stale.setdefault(r.memory_id, set()).add(r.episode_id)
    for memory_id, gone in stale.items():
        members = s.execute(
            select(episodes.c.id, episodes.c.content, episodes.c.embedding, episodes.c.ts)
            .join(semantic_members, semantic_members.c.episode_id == episodes.c.id)
            .where(semantic_members.c.memory_id == memory_id, episodes.c.status == "kept")
        ).all()
        remaining = [m for m in members if m.id not in gone]
        old = s.execute(
            update(semantic_memories)
            .where(semantic_memories.c.id == memory_id, semantic_memories.c.valid_to.is_(None))
            .values(valid_to=now)
            .returning(
                semantic_memories.c.version, semantic_memories.c.importance, semantic_memories.c.method
            )
        ).first()
        if old is None:
            continue
        _outbox(s, SEMANTIC, [memory_id])
        # The superseded members are free again (they are left out of recall by their facts anyway).
        s.execute(
            update(episodes)
            .where(episodes.c.id.in_(list(gone)))
            .values(consolidated=False, weight=1.0, base_weight=1.0)
        )
        _outbox(s, EPISODE, sorted(gone))
        if len(remaining) < min_members:
            s.execute(
                update(episodes)
                .where(episodes.c.id.in_([m.id for m in remaining]))
                .values(consolidated=False, weight=1.0, base_weight=1.0)
            )
            _outbox(s, EPISODE, [m.id for m in remaining])
            counts["memories_closed"] += 1
            continue
        vectors = [from_blob(m.embedding) for m in remaining]
        c = centroid(np.stack(vectors))
        order = sorted(range(len(remaining)), key=lambda i: -float(vectors[i] @ c))
        plan = MemoryPlan(
            members=tuple(remaining[i].id for i in order),
            centroid=c,
            valid_from=min(m.ts for m in remaining),
            importance=old.importance,
            replaces=memory_id,
        )
        text_ = summarise([remaining[i].content for i in order], list(range(len(order))))
        new_id = _insert(
            s, agent_id, user_id, MemoryWrite(plan, text_, "extractive"), memory_id, old.version + 1
        )
        s.execute(insert(semantic_members), [{"memory_id": new_id, "episode_id": e} for e in plan.members])
        counts["memories_rederived"] += 1
    return counts


def _outbox(s: Session, kind: str, ids: Sequence[int]) -> None:
    if ids:
        s.execute(insert(index_outbox), [{"kind": kind, "ref_id": i} for i in ids])
