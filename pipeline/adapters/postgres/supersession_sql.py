"""Supersession links in PostgreSQL (issue 39): recorded by reviews, listed, undone by an operator.

A link says that a newer statement superseded an older one: the old episode's validity ends at the link's
`valid_from`. Nothing is deleted: recall demotes the old episode below its successor, `history` and
`as_of` still reach it, and an operator's undo keeps the row (undone_at) so the next review does not link
the pair again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, or_, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from pipeline.adapters.postgres.engine import make_sessionmaker, translate_errors
from pipeline.adapters.postgres.fact_chains import ChainLink, reopen_for_undo
from pipeline.adapters.postgres.tables import episodes, memory_audit, supersessions
from pipeline.core.errors import NotFound
from pipeline.core.review_records import Statement, SupersessionWrite
from pipeline.review import updates

MAX_LIST = 1000


def record(
    s: Session,
    agent_id: str,
    user_id: str,
    links: Sequence[SupersessionWrite],
    *,
    batch_id: int | None,
) -> dict[str, int]:
    """Insert new links (an existing or undone pair is left as it is). Returns {"supersessions_linked": n}."""
    rows = [
        {
            "agent_id": agent_id,
            "user_id": user_id,
            "old_episode_id": link.old,
            "new_episode_id": link.new,
            "valid_from": link.valid_from,
            "detector": link.detector,
            "reason": link.reason,
            "batch_id": batch_id,
        }
        for link in {(x.old, x.new): x for x in links if x.old != x.new}.values()
    ]
    if not rows:
        return {"supersessions_linked": 0}
    inserted = s.execute(
        pg_insert(supersessions)
        .values(rows)
        .on_conflict_do_nothing(constraint="uq_supersessions_pair")
        .returning(supersessions.c.id)
    ).all()
    return {"supersessions_linked": len(inserted)}


def from_chains(
    s: Session, agent_id: str, user_id: str, links: Sequence[ChainLink]
) -> list[SupersessionWrite]:
    """The rule-table fact chains' closes and corrections as episode links: each turn that stated the old
    value is superseded by each that stated the new one, as of the newer turn's time; and so is the
    assistant's short echo of the old value just after it ("Noted: a $4,000 budget"), which left alone kept
    serving the old value first once the user's own statement was superseded (issue 46: every copy)."""
    wanted = sorted({t for link in links for t in (*link.old_turn_ids, *link.new_turn_ids)})
    if not wanted:
        return []
    e = episodes
    rows = s.execute(
        e.select()
        .with_only_columns(e.c.id, e.c.turn_id, e.c.session_id, e.c.ts, e.c.role, e.c.content)
        .where(e.c.agent_id == agent_id, e.c.user_id == user_id, e.c.turn_id.in_(wanted))
    ).all()
    by_turn = {r.turn_id: Statement(r.id, r.ts, r.role, None, r.content) for r in rows}
    sessions = {r.turn_id: r.session_id for r in rows}
    olds = sorted({t for link in links for t in link.old_turn_ids if t in by_turn})
    echoes = _assistant_after(s, agent_id, user_id, [(sessions[t], by_turn[t]) for t in olds])
    out = []
    for link in links:
        for new_turn in link.new_turn_ids:
            if new_turn not in by_turn:
                continue
            new = by_turn[new_turn]
            for old_turn in link.old_turn_ids:
                old = by_turn.get(old_turn)
                if old is None or old.id == new.id:
                    continue
                out.append(SupersessionWrite(old.id, new.id, new.ts, link.reason, "fact_chain"))
                for echo in updates.chain_echoes(
                    old, _only(link.reason, "old"), _only(link.reason, "new"), echoes
                ):
                    if echo.ts < new.ts:
                        reason = {**link.reason, "rule": "echo"}
                        out.append(SupersessionWrite(echo.id, new.id, new.ts, reason, "fact_chain"))
    return out


def _only(reason: dict[str, Any], key: str) -> str:
    values = reason.get(key) or [""]
    return str(values[0])


def _assistant_after(
    s: Session, agent_id: str, user_id: str, said: Sequence[tuple[str, Statement]]
) -> list[Statement]:
    """The short assistant turns of each (session, statement)'s session within `updates.ECHO_WINDOW` after it:
    the only turns that can be its echo. One range of ix_episodes_session_order per statement; nothing is
    read when no chain closed."""
    if not said:
        return []
    e = episodes
    windows = [
        and_(e.c.session_id == session, e.c.ts.between(x.ts, x.ts + updates.ECHO_WINDOW))
        for session, x in said
    ]
    rows = s.execute(
        e.select()
        .with_only_columns(e.c.id, e.c.ts, e.c.role, e.c.content)
        .where(
            e.c.agent_id == agent_id,
            e.c.user_id == user_id,
            e.c.role == "assistant",
            func.length(e.c.content) <= updates.ECHO_CHARS,
            or_(*windows),
        )
    ).all()
    return [Statement(r.id, r.ts, r.role, None, r.content) for r in rows]


_LIST = """
    SELECT l.id, l.old_episode_id, l.new_episode_id, l.valid_from, l.detector, l.reason, l.batch_id,
           l.created_at, l.undone_at, l.undone_by, l.undo_reason,
           o.turn_id AS old_turn_id, left(o.content, 300) AS old_text, o.ts AS old_ts,
           n.turn_id AS new_turn_id, left(n.content, 300) AS new_text, n.ts AS new_ts
    FROM supersessions l
    JOIN episodes o ON o.id = l.old_episode_id
    JOIN episodes n ON n.id = l.new_episode_id
    WHERE l.agent_id = :a AND l.user_id = :u
      AND (:undone OR l.undone_at IS NULL)
      AND (CAST(:episode AS bigint) IS NULL OR :episode IN (l.old_episode_id, l.new_episode_id))
      AND (CAST(:batch AS bigint) IS NULL OR l.batch_id = :batch)
    ORDER BY l.valid_from DESC, l.id DESC
    LIMIT :limit
"""


def list_links(
    conn: Connection,
    agent_id: str,
    user_id: str,
    *,
    include_undone: bool = True,
    episode_id: int | None = None,
    batch_id: int | None = None,
    limit: int = 200,
) -> list[dict[str, Any]]:
    """The scope's links, newest first, with both statements' turn ids and the start of their texts."""
    params = {
        "a": agent_id,
        "u": user_id,
        "undone": include_undone,
        "episode": episode_id,
        "batch": batch_id,
        "limit": limit,
    }
    return [_row(r) for r in conn.execute(text(_LIST), params)]


def _row(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "old": _side(r.old_episode_id, r.old_turn_id, r.old_text, r.old_ts),
        "new": _side(r.new_episode_id, r.new_turn_id, r.new_text, r.new_ts),
        "valid_from": r.valid_from.isoformat(),
        "detector": r.detector,
        "reason": r.reason,
        "batch_id": r.batch_id,
        "created_at": r.created_at.isoformat(),
        "undone_at": r.undone_at.isoformat() if r.undone_at else None,
        "undone_by": r.undone_by,
        "undo_reason": r.undo_reason,
    }


def _side(episode_id: int, turn_id: str, text_: str, ts: datetime) -> dict[str, Any]:
    return {"id": f"episode:{episode_id}", "turn_id": turn_id, "text": text_, "ts": ts.isoformat()}


def undo(
    s: Session,
    link_id: int,
    *,
    agent_id: str,
    user_id: str,
    actor: str,
    key_prefix: str | None,
    reason: str,
    now: datetime,
) -> dict[str, Any]:
    """Undo one link of the scope: the old statement holds again, and so does the fact chain version it
    stated if the link came from its chain (issue 44); the row stays (and keeps the pair from being linked
    again), and the memory audit log records who and why. Undoing twice changes nothing."""
    t = supersessions
    row = s.execute(
        t.select()
        .where(t.c.id == link_id, t.c.agent_id == agent_id, t.c.user_id == user_id)
        .with_for_update()
    ).first()
    if row is None:
        raise NotFound(f"supersession {link_id} not found in this scope")
    if row.undone_at is None:
        s.execute(
            t.update().where(t.c.id == link_id).values(undone_at=now, undone_by=actor, undo_reason=reason)
        )
        facts_changed = _reopen_facts(s, agent_id, user_id, row.old_episode_id, row.new_episode_id, now)
        s.execute(
            memory_audit.insert().values(
                at=now,
                actor=actor,
                key_prefix=key_prefix,
                reason=reason,
                action="undo_supersede",
                kind="episode",
                ref_id=row.old_episode_id,
                agent_id=agent_id,
                user_id=user_id,
                changes={"supersession": link_id, "superseded_by": row.new_episode_id, **facts_changed},
            )
        )
    return {
        "id": link_id,
        "old": f"episode:{row.old_episode_id}",
        "new": f"episode:{row.new_episode_id}",
        "undone_at": (row.undone_at or now).isoformat(),
    }


def _reopen_facts(
    s: Session, agent_id: str, user_id: str, old_id: int, new_id: int, now: datetime
) -> dict[str, list[int]]:
    """The fact chain versions the undone link came from, put back (fact_chains.reopen_for_undo)."""
    e = episodes
    rows = s.execute(
        e.select()
        .with_only_columns(e.c.id, e.c.turn_id)
        .where(e.c.agent_id == agent_id, e.c.user_id == user_id, e.c.id.in_([old_id, new_id]))
    ).all()
    turns = {r.id: r.turn_id for r in rows}
    if old_id not in turns or new_id not in turns:
        return {}
    changed = reopen_for_undo(s, agent_id, user_id, turns[old_id], turns[new_id], now)
    return {k: v for k, v in changed.items() if v}


class SupersessionStore:
    """The operator's side: list a scope's links, undo one (audited)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sessions = make_sessionmaker(engine)

    def list(
        self,
        agent_id: str,
        user_id: str,
        *,
        include_undone: bool = True,
        episode_id: int | None = None,
        batch_id: int | None = None,
        limit: int = 200,
    ) -> list[dict[str, Any]]:
        with translate_errors(), self._engine.connect() as conn:
            return list_links(
                conn,
                agent_id,
                user_id,
                include_undone=include_undone,
                episode_id=episode_id,
                batch_id=batch_id,
                limit=max(1, min(limit, MAX_LIST)),
            )

    def undo(
        self,
        link_id: int,
        *,
        agent_id: str,
        user_id: str,
        actor: str,
        key_prefix: str | None,
        reason: str,
        now: datetime,
    ) -> dict[str, Any]:
        with translate_errors(), self._sessions.begin() as s:
            return undo(
                s,
                link_id,
                agent_id=agent_id,
                user_id=user_id,
                actor=actor,
                key_prefix=key_prefix,
                reason=reason,
                now=now,
            )
