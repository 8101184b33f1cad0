"""One page of a scope's memories (episodes and semantic memories), newest first, with filters."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors

_EPISODES = """
SELECT 'episode' AS kind, e.id, e.content AS text, e.status, e.weight, e.core, e.tags, e.session_id,
       e.ts AS valid_from, NULL::timestamptz AS valid_to, e.received_at AS created_at,
       array_prepend(e.turn_id, e.merged_turn_ids) AS source_turn_ids, e.quality
FROM episodes e
WHERE e.agent_id = :agent_id AND e.user_id = :user_id {filters}
"""
_SEMANTIC = """
SELECT 'semantic' AS kind, s.id, s.text, s.status, s.weight, s.core, '{{}}'::text[] AS tags,
       NULL::text AS session_id, s.valid_from, s.valid_to, s.created_at,
       ARRAY(SELECT e.turn_id FROM semantic_members m JOIN episodes e ON e.id = m.episode_id
             WHERE m.memory_id = s.id ORDER BY e.id) AS source_turn_ids,
       NULL::jsonb AS quality
FROM semantic_memories s
WHERE s.agent_id = :agent_id AND s.user_id = :user_id {filters}
"""


def list_memories(
    engine: Engine,
    agent_id: str,
    user_id: str,
    *,
    kind: str | None,
    status: str | None,
    session_id: str | None,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], int | None]:
    """(page, next_offset); next_offset is None on the last page. Semantic memories have no session,
    so a session filter lists episodes only."""
    params: dict[str, Any] = {
        "agent_id": agent_id,
        "user_id": user_id,
        "limit": limit + 1,  # one more than asked tells whether another page exists
        "offset": offset,
    }
    parts = []
    if kind in (None, "episode"):
        # Quarantined and rejected turns are instructions aimed at the agent: listing them would hand the
        # injection to the agent after all (MCP memory_list). The quarantine endpoints show them to a person.
        filters = " AND e.status NOT IN ('quarantined', 'rejected')"
        if status is not None:
            filters += " AND e.status = :status"
        if session_id is not None:
            filters += " AND e.session_id = :session_id"
        parts.append(_EPISODES.format(filters=filters))
    if kind in (None, "semantic") and session_id is None:
        parts.append(_SEMANTIC.format(filters=" AND s.status = :status" if status is not None else ""))
    if status is not None:
        params["status"] = status
    if session_id is not None:
        params["session_id"] = session_id
    if not parts:
        return [], None
    sql = " UNION ALL ".join(parts) + " ORDER BY created_at DESC, kind, id DESC LIMIT :limit OFFSET :offset"
    with translate_errors(), engine.connect() as conn:
        rows = conn.execute(text(sql), params).mappings().all()
    page = [_row(r) for r in rows[:limit]]
    return page, (offset + limit if len(rows) > limit else None)


def _row(r: Any) -> dict[str, Any]:
    return {
        "id": f"{r['kind']}:{r['id']}",
        "kind": r["kind"],
        "text": r["text"],
        "status": r["status"],
        "weight": round(float(r["weight"]), 6),
        "core": bool(r["core"]),
        "tags": list(r["tags"] or ()),
        "session_id": r["session_id"],
        "valid_from": r["valid_from"].isoformat() if r["valid_from"] else None,
        "valid_to": r["valid_to"].isoformat() if r["valid_to"] else None,
        "created_at": r["created_at"].isoformat() if r["created_at"] else None,
        "source_turn_ids": list(r["source_turn_ids"] or ()),
        "quality": r["quality"],
    }
