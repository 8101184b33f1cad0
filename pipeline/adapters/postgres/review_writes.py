"""The write half of a review: episode decisions, merges and facts, inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import LargeBinary, bindparam, func, select, text, update
from sqlalchemy.orm import Session

from pipeline.adapters.postgres import fact_chains, supersession_sql
from pipeline.adapters.postgres.agent_insights_sql import refresh_agent_insights
from pipeline.adapters.postgres.chunks import chunks, rows_per_statement
from pipeline.adapters.postgres.semantic_writes import Outbox, retire_superseded, write_memories
from pipeline.adapters.postgres.tables import episodes
from pipeline.core.models import EPISODE
from pipeline.core.review_records import EpisodeDecision, ReviewWrite, SupersessionWrite

# Bound values per supersession row in supersession_sql.record's multi-row INSERT (agent, user, old, new,
# valid_from, detector, reason, batch).
LINK_COLUMNS = 8


def scope_lock_key(agent_id: str, user_id: str) -> int:
    return fact_chains.chain_lock_key(agent_id, user_id, "\x00scope", "")


def write_review(
    s: Session,
    agent_id: str,
    user_id: str,
    batch_ids: Sequence[int],
    write: ReviewWrite,
    now: datetime,
    *,
    batch_id: int | None = None,
) -> dict[str, int]:
    """Apply a review's decisions. Returns fact counts. Touched episodes are queued for the indexer."""
    e = episodes
    # Two reviews of one scope (a light one and a full one) must not merge into each other's rows at once.
    s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": scope_lock_key(agent_id, user_id)})
    touched: set[int] = set(batch_ids)
    applied = _apply_decisions(s, write.decisions, write.embeddings, write.passages, now)
    rest = {k: v for k, v in write.embeddings.items() if k not in applied}
    if rest:  # embedded episodes without a decision applied (a full batch's light-reviewed ones)
        s.execute(
            update(e).where(e.c.id == bindparam("eid"), e.c.embedding.is_(None)),
            [{"eid": k, "embedding": v, "passages": write.passages.get(k)} for k, v in rest.items()],
            execution_options={"synchronize_session": False},
        )
    merges = {d.id: d.merged_into for d in write.decisions if d.status == "merged" and d.merged_into}
    for loser, survivor in write.outside_merges.items():
        # Re-checked under the scope lock: only a memory that is still kept can be folded away.
        done = s.execute(
            update(e)
            .where(e.c.id == loser, e.c.status == "kept", e.c.core.is_(False))
            .values(status="merged", merged_into=survivor)
            .returning(e.c.id)
        ).first()
        if done is not None:
            merges[loser] = survivor
            touched.add(loser)
    for loser, survivor in merges.items():
        _carry_over(s, loser, survivor)
        touched.add(survivor)
    chain_links: list[fact_chains.ChainLink] = []
    counts = fact_chains.apply_candidates(
        s, agent_id, user_id, write.facts, write.hints, now, links=chain_links
    )
    counts |= _record_links(
        s,
        agent_id,
        user_id,
        [*write.supersessions, *supersession_sql.from_chains(s, agent_id, user_id, chain_links)],
        batch_id=batch_id,
    )
    outbox = Outbox()
    outbox.add(EPISODE, sorted(touched))
    counts |= write_memories(
        s, agent_id, user_id, write.memories, now, member_weight=write.member_weight, outbox=outbox
    )
    if write.summarise is not None:
        counts |= retire_superseded(
            s, agent_id, user_id, now, min_members=write.min_members, summarise=write.summarise, outbox=outbox
        )
    if write.agent_insights is not None:
        # Last, so the agent's lock (which full reviews of all its users share) is held the shortest.
        counts |= refresh_agent_insights(
            s, agent_id, write.agent_insights, now, call_limit=write.agent_call_limit
        )
    outbox.flush(s)
    return counts


def _record_links(
    s: Session,
    agent_id: str,
    user_id: str,
    links: Sequence[SupersessionWrite],
    *,
    batch_id: int | None,
    max_rows: int | None = None,
) -> dict[str, int]:
    """supersession_sql.record in statements of at most `max_rows` links (issue 44: one INSERT of every
    link a batch found went past PostgreSQL's 65,535 parameters and failed the same way on each retry).
    Pairs are de-duplicated here, the last write of a pair winning as record() does within one call."""
    unique = list({(x.old, x.new): x for x in links}.values())
    size = max_rows if max_rows is not None else rows_per_statement(LINK_COLUMNS)
    linked = 0
    for part in chunks(unique, size):
        linked += supersession_sql.record(s, agent_id, user_id, part, batch_id=batch_id)[
            "supersessions_linked"
        ]
    return {"supersessions_linked": linked}


def _apply_decisions(
    s: Session,
    decisions: Sequence[EpisodeDecision],
    embeddings: dict[int, bytes],
    passages: dict[int, bytes],
    now: datetime,
) -> set[int]:
    """Each decision on its still-pending episode, with the embedding (and a long turn's passage vectors)
    the review computed for it (if it has none yet), as one executemany per shape of row (kept, cold, merged) rather than one UPDATE
    round trip per episode: a light batch of 100 spent ~2 ms per episode here. Writing the embedding
    and the review time in the same UPDATE leaves one new row version per episode instead of three.

    Returns the ids whose embedding was handled here: all of the decided ones when every decision
    applied; else none (the caller then writes the embeddings on their own, guarded as before)."""
    e = episodes
    stmt = (
        update(e)
        .where(e.c.id == bindparam("eid"), e.c.status == "pending")
        .values(
            embedding=func.coalesce(e.c.embedding, bindparam("fresh_embedding", type_=LargeBinary)),
            # An episode that already has passages keeps them; one the indexer embedded on arrival (read
            # your writes) has none yet, and gets the review's.
            passages=func.coalesce(e.c.passages, bindparam("fresh_passages", type_=LargeBinary)),
            reviewed_at=now,
        )
    )
    shapes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for d in decisions:
        row: dict[str, Any] = {
            "eid": d.id,
            "fresh_embedding": embeddings.get(d.id),
            "fresh_passages": passages.get(d.id),
            "status": d.status,
            "quality": d.quality,
            "core": d.core,
        }
        if d.status == "cold":
            row |= {"cold_reason": "quality", "cold_since": now}
        if d.status == "merged":
            row["merged_into"] = d.merged_into
        if d.status == "quarantined":
            row["quarantine"] = d.quarantine
        # executemany takes its SET columns from the first row's keys: one call per set of keys.
        shapes.setdefault(tuple(row), []).append(row)
    updated = 0
    for rows in shapes.values():
        result = s.execute(stmt, rows, execution_options={"synchronize_session": False})
        updated += int(getattr(result, "rowcount", -1))
    return {d.id for d in decisions} if updated == len(decisions) else set()


def _carry_over(s: Session, loser: int, survivor: int) -> None:
    """The survivor inherits the loser's provenance and use: its turn ids and access count."""
    e = episodes
    old = e.alias("old")
    s.execute(
        update(e)
        .where(e.c.id == survivor)
        .values(
            merged_turn_ids=func.array_cat(
                e.c.merged_turn_ids,
                select(func.array_prepend(old.c.turn_id, old.c.merged_turn_ids))
                .where(old.c.id == loser)
                .scalar_subquery(),
            ),
            access_count=e.c.access_count
            + select(old.c.access_count).where(old.c.id == loser).scalar_subquery(),
            last_accessed=func.greatest(
                e.c.last_accessed, select(old.c.last_accessed).where(old.c.id == loser).scalar_subquery()
            ),
        )
    )
