"""Recall's reads of the store: current episode rows for hits, cold storage, fact chains."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text

from pipeline.adapters.postgres import fact_chains
from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.store import SqlStore
from pipeline.core.ports import Vector
from pipeline.core.vectors import from_blob


@dataclass(frozen=True, slots=True)
class ColdRow:
    kind: str
    id: int
    text: str
    vector: Vector
    base_weight: float
    valid_from: datetime
    valid_to: datetime | None
    turn_ids: tuple[str, ...]
    session_id: str | None
    source: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    id: int
    turn_id: str
    merged_turn_ids: tuple[str, ...]
    session_id: str
    content: str
    ts: datetime
    source: str
    status: str
    weight: float


class RecallReads(SqlStore):
    """What recall reads from PostgreSQL beside the vector index."""

    def episodes_by_id(
        self,
        ids: Sequence[int],
        *,
        agent_id: str,
        user_id: str,
        as_of: datetime | None = None,
        history: bool = False,
    ) -> dict[int, EpisodeRow]:
        """Current rows for recall hits, limited to the caller's scope and what may be recalled.

        Unless `history`, an episode whose facts were all superseded (closed before `as_of`, or retracted)
        is left out: it would assert something that is no longer true.
        """
        sql = """
            SELECT e.id, e.turn_id, e.merged_turn_ids, e.session_id, e.content, e.ts, e.source, e.status, e.weight
            FROM episodes e
            WHERE e.id = ANY(:ids) AND e.agent_id = :agent AND e.user_id = :user AND e.status = 'kept'
        """
        if not history:
            sql += """
              AND NOT (
                EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                        AND e.turn_id = ANY(f.turn_ids))
                AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.agent_id = e.agent_id AND f.user_id = e.user_id
                        AND e.turn_id = ANY(f.turn_ids) AND f.retracted_at IS NULL
                        AND (f.valid_to IS NULL OR f.valid_to > coalesce(:as_of, now())))
              )
            """
        params = {"ids": list(ids), "agent": agent_id, "user": user_id, "as_of": as_of}
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.execute(text(sql), params)
            return {
                r.id: EpisodeRow(
                    r.id,
                    r.turn_id,
                    tuple(r.merged_turn_ids or ()),
                    r.session_id,
                    r.content,
                    r.ts,
                    r.source,
                    r.status,
                    r.weight,
                )
                for r in rows
            }

    def cold_memories(self, agent_id: str, user_id: str, *, limit: int) -> list[ColdRow]:
        """Cold storage of one scope (not in the vector index): episodes and open semantic memories."""
        sql = text(
            """
            (SELECT 'episode' AS kind, e.id, e.content AS text, e.embedding, e.base_weight, e.ts AS valid_from,
                    NULL::timestamptz AS valid_to, array_prepend(e.turn_id, e.merged_turn_ids) AS turn_ids,
                    e.session_id, e.source
             FROM episodes e
             WHERE e.agent_id = :a AND e.user_id = :u AND e.status = 'cold' AND e.embedding IS NOT NULL
             ORDER BY e.cold_since DESC NULLS LAST LIMIT :limit)
            UNION ALL
            (SELECT 'semantic', m.id, m.text, m.embedding, m.base_weight, m.valid_from, m.valid_to,
                    ARRAY(SELECT x FROM semantic_members sm JOIN episodes e2 ON e2.id = sm.episode_id,
                          unnest(array_prepend(e2.turn_id, e2.merged_turn_ids)) AS x WHERE sm.memory_id = m.id),
                    NULL, 'user'
             FROM semantic_memories m
             WHERE m.agent_id = :a AND m.user_id = :u AND m.status = 'cold' AND m.valid_to IS NULL
               AND m.embedding IS NOT NULL AND m.coherent
             LIMIT :limit)
            """
        )
        with translate_errors(), self.engine.connect() as conn:
            return [
                ColdRow(
                    r.kind,
                    r.id,
                    r.text,
                    from_blob(r.embedding),
                    r.base_weight,
                    r.valid_from,
                    r.valid_to,
                    tuple(dict.fromkeys(r.turn_ids or ())),
                    r.session_id,
                    r.source,
                )
                for r in conn.execute(sql, {"a": agent_id, "u": user_id, "limit": limit})
            ]

    def facts(
        self,
        agent_id: str,
        user_id: str,
        *,
        entity: str | None = None,
        attribute: str | None = None,
        as_of: datetime | None = None,
        history: bool = False,
    ) -> list[dict[str, Any]]:
        with translate_errors(), self.engine.connect() as conn:
            return fact_chains.query_facts(
                conn, agent_id, user_id, entity=entity, attribute=attribute, as_of=as_of, history=history
            )
