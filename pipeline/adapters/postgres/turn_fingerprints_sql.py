"""The fingerprints of stored turns by (agent_id, user_id, turn_id): what an id already carries in PostgreSQL.

A standalone query (not a Repository mixin) so the API's door and the scheduler share it without either
widening the facade; it reads the unique index ux_episodes_scope_turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.ingest.turn_ids import TurnKey, fingerprint

_STORED = text(
    """
    SELECT e.agent_id, e.user_id, e.turn_id, e.role, e.content
    FROM (SELECT DISTINCT * FROM unnest(CAST(:a AS text[]), CAST(:u AS text[]), CAST(:t AS text[])))
         AS k(agent_id, user_id, turn_id)
    JOIN episodes e ON e.agent_id = k.agent_id AND e.user_id = k.user_id AND e.turn_id = k.turn_id
    """
)


def stored_fingerprints(engine: Engine, keys: Sequence[TurnKey]) -> dict[TurnKey, str]:
    if not keys:
        return {}
    params = {"a": [k[0] for k in keys], "u": [k[1] for k in keys], "t": [k[2] for k in keys]}
    with translate_errors(), engine.connect() as conn:
        rows = conn.execute(_STORED, params).all()
    return {(r.agent_id, r.user_id, r.turn_id): fingerprint(r.role, r.content) for r in rows}
