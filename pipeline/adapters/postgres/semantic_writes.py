"""Writing semantic memories (versions, members, provenance) inside the review's transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import insert, or_, select, text, update
from sqlalchemy.orm import Session

from pipeline.adapters.postgres.tables import episodes, semantic_members, semantic_memories
from pipeline.core.models import SEMANTIC
from pipeline.core.review_records import MemoryPlan, MemoryWrite
from pipeline.core.vectors import from_blob, to_blob
from pipeline.review.consolidation import centroid


class Outbox:
    """The index_outbox rows a review queues, written as one INSERT when it ends: one row per point
    (the indexer reads each point's current state, so a second row for it would only repeat the work)."""

    def __init__(self) -> None:
        self._refs: dict[tuple[str, int], None] = {}

    def add(self, kind: str, ids: Iterable[int]) -> None:
        for i in ids:
            self._refs[(kind, int(i))] = None

    def flush(self, s: Session) -> None:
        if self._refs:
            s.execute(_QUEUE, {"kinds": [k for k, _ in self._refs], "ids": [i for _, i in self._refs]})
            self._refs.clear()


# Array-at-once inserts: one statement however many rows, where an executemany runs one per row (a review
# writes ~70 member rows and ~36 outbox rows; they were a tenth of PostgreSQL's CPU per turn).
_QUEUE = text(
    "INSERT INTO index_outbox (kind, ref_id) SELECT * FROM unnest(CAST(:kinds AS varchar[]), CAST(:ids AS bigint[]))"
)
_ATTACH = text(
    "INSERT INTO semantic_members (memory_id, episode_id, stated)"
    " SELECT * FROM unnest(CAST(:memory_ids AS bigint[]), CAST(:episode_ids AS bigint[]),"
    " CAST(:stated AS boolean[]))"
)


def _insert_members(
    s: Session, pairs: Sequence[tuple[int, int]], stated: Sequence[bool | None] | None = None
) -> None:
    if pairs:
        s.execute(
            _ATTACH,
            {
                "memory_ids": [m for m, _ in pairs],
                "episode_ids": [e for _, e in pairs],
                "stated": list(stated) if stated is not None else [None] * len(pairs),
            },
        )


def write_memories(
    s: Session,
    agent_id: str,
    user_id: str,
    writes: Sequence[MemoryWrite],
    now: datetime,
    *,
    member_weight: float,
    outbox: Outbox,
) -> dict[str, int]:
    """New semantic memories and new versions, set-based: a handful of statements whatever the number of
    memories (one statement per memory and member list cost a review ~40 ms on a busy machine)."""
    counts = {"memories_created": 0, "memories_updated": 0, "memories_absorbed": 0}
    if not writes:
        return counts
    m = semantic_memories
    replaced = sorted({w.plan.replaces for w in writes if w.plan.replaces is not None})
    closed: dict[int, int] = {}  # replaced id -> its version, for those still open under the scope lock
    if replaced:
        rows = s.execute(
            update(m)
            .where(m.c.id.in_(replaced), m.c.valid_to.is_(None))
            .values(valid_to=now)
            .returning(m.c.id, m.c.version)
        ).all()
        closed = {int(r.id): int(r.version) for r in rows}
        outbox.add(SEMANTIC, sorted(closed))
    absorbed = sorted({a for w in writes for a in w.plan.absorbs} - set(replaced))
    if absorbed:
        # Wholly inside a memory written now: closed, their members are held by it (ConsolidationPlan).
        gone = s.execute(
            update(m)
            .where(m.c.id.in_(absorbed), m.c.valid_to.is_(None))
            .values(valid_to=now)
            .returning(m.c.id)
        ).scalars()
        ids = sorted(int(i) for i in gone)
        counts["memories_absorbed"] = len(ids)
        outbox.add(SEMANTIC, ids)
    rows_in: list[dict[str, Any]] = []
    for w in writes:
        # A version closed meanwhile (by another review of the scope) is not continued: a new memory starts.
        previous = w.plan.replaces if w.plan.replaces in closed else None
        version = closed[previous] + 1 if previous is not None else 1
        rows_in.append(_memory_row(agent_id, user_id, w, previous, version))
        counts["memories_updated" if previous else "memories_created"] += 1
    memory_ids = _insert_many(s, rows_in)
    outbox.add(SEMANTIC, memory_ids)
    _attach(s, [(mid, w) for mid, w in zip(memory_ids, writes, strict=True)], member_weight)
    return counts


def _memory_row(
    agent_id: str, user_id: str, w: MemoryWrite, previous: int | None, version: int
) -> dict[str, Any]:
    return {
        "agent_id": agent_id,
        "user_id": user_id,
        "text": w.text,
        "embedding": to_blob(w.plan.centroid),
        "importance": w.plan.importance,
        "valid_from": w.plan.valid_from,
        "version": version,
        "previous_id": previous,
        "method": w.method,
        "details": w.details,
        "coherent": w.coherent,
    }


def _insert_many(s: Session, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Ids of the inserted memories, in the order of `rows` (one multi-row INSERT ... RETURNING)."""
    m = semantic_memories
    result = s.execute(insert(m).returning(m.c.id, sort_by_parameter_order=True), list(rows))
    return [int(i) for i in result.scalars()]


def _attach(s: Session, memberships: Sequence[tuple[int, MemoryWrite]], member_weight: float) -> None:
    pairs = [(mid, e) for mid, w in memberships for e in w.plan.members]
    if not pairs:
        return
    stated = [None if w.stated is None else e in w.stated for _, w in memberships for e in w.plan.members]
    _insert_members(s, pairs, stated)
    e = episodes
    # Members stop competing with the summary that stands for them. Rows already in that state (the
    # members a new version keeps) are not rewritten. Their index points stay as they are: the index
    # holds no weight.
    s.execute(
        update(e)
        .where(
            e.c.id.in_(sorted({member for _, member in pairs})),
            or_(
                e.c.consolidated.is_not(True),
                e.c.weight.is_distinct_from(member_weight),
                e.c.base_weight.is_distinct_from(member_weight),
            ),
        )
        .values(consolidated=True, weight=member_weight, base_weight=member_weight)
    )


def retire_superseded(
    s: Session,
    agent_id: str,
    user_id: str,
    now: datetime,
    *,
    min_members: int,
    summarise: Callable[[list[str], list[int]], str],
    outbox: Outbox,
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
              -- A memory of restated requests this review wrote (same transaction) already quotes what
              -- was superseded as no longer holding (issue 40); one written before is retired as any other.
              AND NOT (m.method = 'restated' AND m.created_at = now())
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
                semantic_memories.c.version,
                semantic_memories.c.importance,
                semantic_memories.c.method,
                semantic_memories.c.coherent,
            )
        ).first()
        if old is None:
            continue
        outbox.add(SEMANTIC, [memory_id])
        # The superseded members are free again (they are left out of recall by their facts anyway). Only
        # their weight changes, which the index does not hold: their points stay as they are.
        s.execute(
            update(episodes)
            .where(episodes.c.id.in_(list(gone)))
            .values(consolidated=False, weight=1.0, base_weight=1.0)
        )
        if len(remaining) < min_members:
            s.execute(
                update(episodes)
                .where(episodes.c.id.in_([m.id for m in remaining]))
                .values(consolidated=False, weight=1.0, base_weight=1.0)
            )
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
        (new_id,) = _insert_many(
            s,
            [
                _memory_row(
                    agent_id,
                    user_id,
                    MemoryWrite(plan, text_, "extractive", coherent=bool(old.coherent)),
                    memory_id,
                    old.version + 1,
                )
            ],
        )
        outbox.add(SEMANTIC, [new_id])
        _insert_members(s, [(new_id, e) for e in plan.members])
        counts["memories_rederived"] += 1
    return counts
