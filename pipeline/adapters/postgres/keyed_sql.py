"""Keyed turns: the newest turn of a scope for each (metadata.entity, metadata.attribute) (issue 41).

A caller that gives its turns a key in metadata (the framework adapters: a LangGraph store item, an
Agents SDK session) reads its latest version back by that key, with when the first version was said and the
ids of every version. Forgotten turns never count. Turns held as instructions to the agent (quarantined,
rejected, or flagged by the write-side screen and still waiting for review) count as the caller asks
(`held`): by default not (what recall would never return, a read by key does not return either); "pending"
also counts those still waiting for review (a LangGraph store's newest put is every reader's at once, not
after a review that may be minutes away); "all" counts every turn said (an Agents SDK session's history is
what was said, in order: screening decides recall, not the history).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors

MAX_PAGE = 500

_KEYED = """
    SELECT e.id, e.turn_id, e.content, e.metadata, e.role, e.source, e.session_id, e.status, e.ts,
           e.metadata ->> 'entity' AS entity, e.metadata ->> 'attribute' AS attribute
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u
      AND jsonb_typeof(e.metadata -> 'entity') = 'string' AND jsonb_typeof(e.metadata -> 'attribute') = 'string'
"""
HELD = ("none", "pending", "all")
_HELD_SQL = {
    "none": "e.status NOT IN ('forgotten', 'quarantined', 'rejected')"
    " AND NOT (e.status = 'pending' AND NOT e.prescreened)",
    "pending": "e.status NOT IN ('forgotten', 'quarantined', 'rejected')",
    "all": "e.status <> 'forgotten'",
}


# The keys the given turns carry, read once through the scope's unique turn-id index; then each key's versions
# by one probe of ix_episodes_keyed (0023). LATERAL with OFFSET 0 keeps the planner from flattening the probe
# into a scan of the whole scope joined against the keys (its row estimate for the jsonb filters is 1): that
# plan read every keyed turn of the scope, 1.1 ms at 300 turns against 0.4 ms, and grew with the scope.
_WANTED = """
    wanted AS MATERIALIZED (
        SELECT DISTINCT t.metadata ->> 'entity' AS entity, t.metadata ->> 'attribute' AS attribute
        FROM episodes t
        WHERE t.agent_id = :a AND t.user_id = :u AND t.turn_id = ANY(:turn_ids)
    ),
"""
_BY_KEY = " AND e.metadata ->> 'entity' = w.entity AND e.metadata ->> 'attribute' = w.attribute OFFSET 0"


@dataclass(frozen=True, slots=True)
class KeyFilter:
    """Which keys of one scope: an exact entity, or entities starting with a prefix; one attribute; or the
    keys that the given turns carry. `held`: which turns held by the screen count (HELD)."""

    agent_id: str
    user_id: str
    entity: str | None = None
    entity_prefix: str | None = None
    attribute: str | None = None
    turn_ids: tuple[str, ...] = ()
    held: str = "none"


def _where(f: KeyFilter) -> str:
    parts = [_HELD_SQL[f.held]]
    if f.entity is not None:
        parts.append("e.metadata ->> 'entity' = :entity")
    if f.entity_prefix is not None:
        parts.append("starts_with(e.metadata ->> 'entity', :entity_prefix)")
    if f.attribute is not None:
        parts.append("e.metadata ->> 'attribute' = :attribute")
    return "".join(f" AND {p}" for p in parts)


def _keyed(f: KeyFilter) -> str:
    if f.turn_ids:
        return f"SELECT x.* FROM wanted w CROSS JOIN LATERAL ({_KEYED}{_where(f)}{_BY_KEY}) x"
    return f"{_KEYED}{_where(f)}"


def _row_json(r: Any) -> dict[str, Any]:
    return {
        "turn_id": r.turn_id,
        "memory_id": f"episode:{r.id}",
        "entity": r.entity,
        "attribute": r.attribute,
        "content": r.content,
        "metadata": r.metadata,
        "role": r.role,
        "source": r.source,
        "session_id": r.session_id,
        "status": r.status,
        "ts": r.ts.isoformat(),
        "first_ts": r.first_ts.isoformat(),
        "versions": [f"episode:{i}" for i in r.version_ids],
        "version_turn_ids": list(r.version_turn_ids),
    }


class KeyedTurns:
    def __init__(self, engine: Engine) -> None:
        # One statement, so no transaction: in autocommit, as RecallStore's reads. A BEGIN ... ROLLBACK
        # around it also drops the driver's prepared statement, so each read was planned anew (1.14 ms
        # a read at 500 keyed turns, 0.46 ms in autocommit).
        self.engine = engine.execution_options(isolation_level="AUTOCOMMIT")

    def latest(self, f: KeyFilter, *, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        """One page of keys (the newest version of each, most recently written first) and how many in all."""
        sql = text(
            f"""
            WITH {_WANTED if f.turn_ids else ""}keyed AS ({_keyed(f)}),
            ranked AS (
                SELECT k.*,
                       row_number() OVER (PARTITION BY k.entity, k.attribute ORDER BY k.ts DESC, k.id DESC) AS rn,
                       min(k.ts) OVER (PARTITION BY k.entity, k.attribute) AS first_ts,
                       array_agg(k.id) OVER (PARTITION BY k.entity, k.attribute) AS version_ids,
                       array_agg(k.turn_id) OVER (PARTITION BY k.entity, k.attribute) AS version_turn_ids
                FROM keyed k
            )
            SELECT r.*, count(*) OVER () AS total FROM ranked r WHERE r.rn = 1
            ORDER BY r.ts DESC, r.id DESC LIMIT :limit OFFSET :offset
            """
        )
        params: dict[str, Any] = {
            "a": f.agent_id,
            "u": f.user_id,
            "entity": f.entity,
            "entity_prefix": f.entity_prefix,
            "attribute": f.attribute,
            "turn_ids": list(f.turn_ids),
            "limit": min(limit, MAX_PAGE),
            "offset": offset,
        }
        with translate_errors(), self.engine.connect() as conn:
            rows = list(conn.execute(sql, params))
        total = int(rows[0].total) if rows else 0
        return [_row_json(r) for r in rows], total
