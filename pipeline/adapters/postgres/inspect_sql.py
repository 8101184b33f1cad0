"""Read-only queries behind the memory listing, the inspector page and the review log.

Nothing here writes: these are the operator's and the developer's views of the system of record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.core.models import EPISODE, SEMANTIC

MAX_PAGE = 500


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories of one scope to list. Times are event times (episodes) or valid_from (semantic)."""

    agent_id: str
    user_id: str
    kind: str | None = None  # episode | semantic
    status: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    contains: str | None = None


# One row shape for both kinds, so a page can mix them in time order.
_EPISODES = """
    SELECT 'episode' AS kind, e.id, e.content AS text, e.status, e.weight, e.base_weight, e.core, e.tags,
           e.ts AS valid_from, NULL::timestamptz AS valid_to, e.session_id, e.role, e.source,
           e.quality, e.cold_reason, e.access_count, e.last_accessed, e.consolidated, e.merged_into,
           array_prepend(e.turn_id, e.merged_turn_ids) AS turn_ids, NULL::int AS version,
           NULL::bigint AS previous_id, NULL::text AS method,
           NULL::timestamptz AS first_said, NULL::timestamptz AS last_said
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u
"""
_SEMANTIC = """
    SELECT 'semantic' AS kind, m.id, m.text, m.status, m.weight, m.base_weight, m.core,
           ARRAY[]::text[] AS tags, m.valid_from, m.valid_to, NULL::text AS session_id, NULL::text AS role,
           NULL::text AS source, jsonb_build_object('importance', m.importance) AS quality,
           NULL::text AS cold_reason, m.access_count, m.last_accessed, false AS consolidated,
           NULL::bigint AS merged_into,
           ARRAY(SELECT x FROM semantic_members sm JOIN episodes e2 ON e2.id = sm.episode_id,
                 unnest(array_prepend(e2.turn_id, e2.merged_turn_ids)) AS x WHERE sm.memory_id = m.id)
               AS turn_ids,
           m.version, m.previous_id, m.method, span.first_said, span.last_said
    FROM semantic_memories m
    CROSS JOIN LATERAL (SELECT min(e3.ts) AS first_said, max(e3.ts) AS last_said
                        FROM semantic_members sm3 JOIN episodes e3 ON e3.id = sm3.episode_id
                        WHERE sm3.memory_id = m.id) AS span
    WHERE m.agent_id = :a AND m.user_id = :u
"""


def _where(f: MemoryFilter, alias: str, *, text_col: str, time_col: str) -> str:
    parts = []
    if f.status is not None:
        parts.append(f"{alias}.status = :status")
    elif alias == "e":
        # Quarantined and rejected turns are instructions aimed at the agent: a listing an agent reads (MCP
        # memory_list) must not hand them over after all. A person asks for them by status.
        parts.append("e.status NOT IN ('quarantined', 'rejected')")
    if f.since is not None:
        parts.append(f"{alias}.{time_col} >= :since")
    if f.until is not None:
        parts.append(f"{alias}.{time_col} < :until")
    if f.contains:
        parts.append(f"{alias}.{text_col} ILIKE :contains ESCAPE '\\'")
    if f.session_id is not None and alias == "e":
        parts.append("e.session_id = :session")
    return "".join(f" AND {p}" for p in parts)


def _like(fragment: str) -> str:
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _memory_json(r: Any) -> dict[str, Any]:
    return {
        "id": f"{r.kind}:{r.id}",
        "kind": r.kind,
        "text": r.text,
        "status": r.status,
        "weight": round(float(r.weight), 6),
        "base_weight": round(float(r.base_weight), 6),
        "core": bool(r.core),
        "tags": list(r.tags or ()),
        "valid_from": r.valid_from.isoformat() if r.valid_from else None,
        "valid_to": r.valid_to.isoformat() if r.valid_to else None,
        "session_id": r.session_id,
        "role": r.role,
        "source": r.source,
        "quality": r.quality,
        "cold_reason": r.cold_reason,
        "access_count": int(r.access_count or 0),
        "last_accessed": r.last_accessed.isoformat() if r.last_accessed else None,
        "consolidated": bool(r.consolidated),
        "merged_into": f"episode:{r.merged_into}" if r.merged_into else None,
        "source_turn_ids": list(dict.fromkeys(r.turn_ids or ())),
        "version": r.version,
        "previous_id": f"semantic:{r.previous_id}" if r.previous_id else None,
        "method": r.method,
        # What a semantic memory speaks for: how many turns, said over which time (issue 27).
        "stands_for": _stands_for(r) if r.kind == SEMANTIC else None,
    }


def _stands_for(r: Any) -> dict[str, Any]:
    return {
        "turns": len(dict.fromkeys(r.turn_ids or ())),
        "first": r.first_said.isoformat() if r.first_said else None,
        "last": r.last_said.isoformat() if r.last_said else None,
    }


class InspectStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def list_memories(self, f: MemoryFilter, *, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """A page of memories (newest first) and how many match in all."""
        parts = []
        if f.kind in (None, EPISODE):
            parts.append(_EPISODES + _where(f, "e", text_col="content", time_col="ts"))
        if f.kind in (None, SEMANTIC) and f.session_id is None:  # semantic memories span sessions
            parts.append(_SEMANTIC + _where(f, "m", text_col="text", time_col="valid_from"))
        if not parts:
            return [], 0
        union = " UNION ALL ".join(f"({p})" for p in parts)
        params: dict[str, Any] = {
            "a": f.agent_id,
            "u": f.user_id,
            "status": f.status,
            "since": f.since,
            "until": f.until,
            "contains": _like(f.contains) if f.contains else None,
            "session": f.session_id,
            "limit": min(limit, MAX_PAGE),
            "offset": offset,
        }
        page_sql = text(
            f"SELECT * FROM ({union}) x ORDER BY x.valid_from DESC, x.kind, x.id DESC LIMIT :limit OFFSET :offset"
        )
        count_sql = text(f"SELECT count(*) FROM ({union}) x")
        with translate_errors(), self.engine.connect() as conn:
            rows = [_memory_json(r) for r in conn.execute(page_sql, params)]
            total = int(conn.scalar(count_sql, params) or 0)
        return rows, total

    def get_memory(self, kind: str, ref_id: int, *, agent_id: str, user_id: str) -> dict[str, Any] | None:
        """One memory with its provenance and the fact versions its turns support."""
        base = _EPISODES if kind == EPISODE else _SEMANTIC
        alias = "e" if kind == EPISODE else "m"
        params = {"a": agent_id, "u": user_id, "id": ref_id}
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(text(f"{base} AND {alias}.id = :id"), params).one_or_none()
            if row is None:
                return None
            memory = _memory_json(row)
            memory["facts"] = self._supported_facts(conn, agent_id, user_id, memory["source_turn_ids"])
            if kind == EPISODE:
                memory["provenance"] = {
                    "turn_ids": memory["source_turn_ids"],
                    "semantic_memories": [
                        {"id": f"semantic:{r.id}", "text": r.text, "version": r.version, "open": r.open}
                        for r in conn.execute(
                            text(
                                "SELECT m.id, m.text, m.version, m.valid_to IS NULL AS open "
                                "FROM semantic_members sm JOIN semantic_memories m ON m.id = sm.memory_id "
                                "WHERE sm.episode_id = :id ORDER BY m.id"
                            ),
                            params,
                        )
                    ],
                }
            else:
                memory["provenance"] = {
                    "turn_ids": memory["source_turn_ids"],
                    "episodes": [
                        {"id": f"episode:{r.id}", "text": r.content, "turn_id": r.turn_id, "status": r.status}
                        for r in conn.execute(
                            text(
                                "SELECT e.id, e.content, e.turn_id, e.status FROM semantic_members sm "
                                "JOIN episodes e ON e.id = sm.episode_id WHERE sm.memory_id = :id ORDER BY e.id"
                            ),
                            params,
                        )
                    ],
                    "versions": self._semantic_versions(conn, ref_id),
                }
        return memory

    @staticmethod
    def _supported_facts(conn: Any, agent_id: str, user_id: str, turn_ids: list[str]) -> list[dict[str, Any]]:
        if not turn_ids:
            return []
        rows = conn.execute(
            text(
                "SELECT id, entity, attribute, value, valid_from, valid_to, retracted_at, source, confidence, "
                "turn_ids FROM facts WHERE agent_id = :a AND user_id = :u AND turn_ids && :t "
                "ORDER BY entity, attribute, valid_from, id"
            ),
            {"a": agent_id, "u": user_id, "t": turn_ids},
        )
        return [
            {
                "id": r.id,
                "entity": r.entity,
                "attribute": r.attribute,
                "value": r.value,
                "valid_from": r.valid_from.isoformat(),
                "valid_to": r.valid_to.isoformat() if r.valid_to else None,
                "retracted_at": r.retracted_at.isoformat() if r.retracted_at else None,
                "source": r.source,
                "confidence": r.confidence,
                "turn_ids": list(r.turn_ids or ()),
                "current": r.valid_to is None and r.retracted_at is None,
            }
            for r in rows
        ]

    @staticmethod
    def _semantic_versions(conn: Any, ref_id: int) -> list[dict[str, Any]]:
        """The whole version chain this memory belongs to, oldest first (walks previous_id both ways)."""
        rows = conn.execute(
            text(
                """
                WITH RECURSIVE back AS (
                    SELECT id, previous_id FROM semantic_memories WHERE id = :id
                    UNION SELECT m.id, m.previous_id FROM semantic_memories m JOIN back b ON m.id = b.previous_id
                ), fwd AS (
                    SELECT id FROM semantic_memories WHERE id = :id
                    UNION SELECT m.id FROM semantic_memories m JOIN fwd f ON m.previous_id = f.id
                )
                SELECT m.id, m.version, m.text, m.valid_from, m.valid_to, m.status FROM semantic_memories m
                WHERE m.id IN (SELECT id FROM back UNION SELECT id FROM fwd) ORDER BY m.version, m.id
                """
            ),
            {"id": ref_id},
        )
        return [
            {
                "id": f"semantic:{r.id}",
                "version": r.version,
                "text": r.text,
                "valid_from": r.valid_from.isoformat(),
                "valid_to": r.valid_to.isoformat() if r.valid_to else None,
                "status": r.status,
            }
            for r in rows
        ]

    def scopes(self, *, limit: int = 200) -> list[dict[str, Any]]:
        """Scopes with their episode counts, most recently active first."""
        sql = text(
            """
            SELECT agent_id, user_id, count(*) AS episodes,
                   count(*) FILTER (WHERE status = 'kept') AS kept, max(ts) AS last_ts,
                   (SELECT count(*) FROM semantic_memories m
                    WHERE m.agent_id = e.agent_id AND m.user_id = e.user_id AND m.valid_to IS NULL) AS semantic,
                   (SELECT count(*) FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                    AND f.valid_to IS NULL AND f.retracted_at IS NULL) AS facts
            FROM episodes e GROUP BY agent_id, user_id ORDER BY max(ts) DESC LIMIT :limit
            """
        )
        with translate_errors(), self.engine.connect() as conn:
            return [
                {
                    "agent_id": r.agent_id,
                    "user_id": r.user_id,
                    "episodes": r.episodes,
                    "kept": r.kept,
                    "semantic": r.semantic,
                    "facts": r.facts,
                    "last_ts": r.last_ts.isoformat() if r.last_ts else None,
                }
                for r in conn.execute(sql, {"limit": limit})
            ]

    def reviews(
        self, *, agent_id: str | None, user_id: str | None, limit: int, before_id: int | None
    ) -> list[dict[str, Any]]:
        """The review audit log, newest first; page on with `before_id` (the last id of a page)."""
        sql = """
            SELECT r.id, r.batch_id, r.agent_id, r.user_id, r.kind, r.trigger, r.started_at, r.finished_at,
                   r.counts, r.timings_ms, r.worker, b.session_id
            FROM reviews r JOIN batches b ON b.id = r.batch_id WHERE true
        """
        if agent_id is not None:
            sql += " AND r.agent_id = :a AND r.user_id = :u"
        if before_id is not None:
            sql += " AND r.id < :before"
        sql += " ORDER BY r.id DESC LIMIT :limit"
        params = {"a": agent_id, "u": user_id, "before": before_id, "limit": min(limit, MAX_PAGE)}
        with translate_errors(), self.engine.connect() as conn:
            return [
                {
                    "id": r.id,
                    "batch_id": r.batch_id,
                    "agent_id": r.agent_id,
                    "user_id": r.user_id,
                    "session_id": r.session_id,
                    "kind": r.kind,
                    "trigger": r.trigger,
                    "started_at": r.started_at.isoformat(),
                    "finished_at": r.finished_at.isoformat(),
                    "duration_ms": round((r.finished_at - r.started_at).total_seconds() * 1000, 1),
                    "counts": r.counts,
                    "timings_ms": r.timings_ms,
                    "worker": r.worker,
                }
                for r in conn.execute(text(sql), params)
            ]
