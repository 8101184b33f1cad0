"""How far turns and batches got, and the store's counts (for the API's progress, /stats and metrics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.adapters.postgres.outbox_sql import OutboxQueries
from pipeline.adapters.postgres.tables import batches, reviews, semantic_memories


class ProgressQueries(OutboxQueries):
    """Progress and stats; `stats` reports the outbox's lag too."""

    def turn_progress(
        self, turn_ids: Sequence[str], agent_ids: Sequence[str] | None = None
    ) -> dict[str, int]:
        """How far these turns got: received (an episode exists), reviewed, indexed (nothing left in the outbox).

        `agent_ids`: count only the turns of these agents (a key's readable spaces); None counts all. An id
        used by several scopes counts once per scope: scoped_turn_progress names the scope of each."""
        sql = text(
            """
            SELECT count(*) AS received,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL) AS reviewed,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM index_outbox o WHERE o.kind = 'episode' AND o.ref_id = e.id)) AS indexed
            FROM episodes e
            WHERE e.turn_id = ANY(:ids) AND (CAST(:agents AS text[]) IS NULL OR e.agent_id = ANY(:agents))
            """
        )
        agents = None if agent_ids is None else list(agent_ids)
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(sql, {"ids": list(turn_ids), "agents": agents}).one()
            return {"received": row.received, "reviewed": row.reviewed, "indexed": row.indexed}

    def scoped_turn_progress(
        self, turns: Sequence[tuple[str, str, str]], agent_ids: Sequence[str] | None = None
    ) -> dict[str, int]:
        """turn_progress for (agent_id, user_id, turn_id) triples: a turn id is unique only within its
        scope, so these count each turn once whichever other scopes use the same id."""
        sql = text(
            """
            SELECT count(*) AS received,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL) AS reviewed,
                   count(*) FILTER (WHERE e.reviewed_at IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM index_outbox o WHERE o.kind = 'episode' AND o.ref_id = e.id)) AS indexed
            FROM (SELECT DISTINCT * FROM unnest(CAST(:a AS text[]), CAST(:u AS text[]), CAST(:t AS text[])))
                 AS k(agent_id, user_id, turn_id)
            JOIN episodes e ON e.agent_id = k.agent_id AND e.user_id = k.user_id AND e.turn_id = k.turn_id
            WHERE CAST(:agents AS text[]) IS NULL OR e.agent_id = ANY(:agents)
            """
        )
        params = {
            "a": [t[0] for t in turns],
            "u": [t[1] for t in turns],
            "t": [t[2] for t in turns],
            "agents": None if agent_ids is None else list(agent_ids),
        }
        with translate_errors(), self.engine.connect() as conn:
            row = conn.execute(sql, params).one()
            return {"received": row.received, "reviewed": row.reviewed, "indexed": row.indexed}

    def batch_progress(
        self, batch_ids: Sequence[int], agent_ids: Sequence[str] | None = None
    ) -> dict[str, int]:
        """Of these batches, how many exist and how many are done (`agent_ids` as in turn_progress)."""
        b = batches
        query = select(b.c.status, func.count()).where(b.c.id.in_(list(batch_ids)))
        if agent_ids is not None:
            query = query.where(b.c.agent_id.in_(list(agent_ids)))
        with translate_errors(), self.engine.connect() as conn:
            rows: dict[str, int] = dict(conn.execute(query.group_by(b.c.status)).all())
        return {"total": sum(rows.values()), "done": rows.get("done", 0)}

    def stats(self) -> dict[str, Any]:
        with translate_errors(), self.engine.connect() as conn:
            by_status: dict[str, int] = dict(
                conn.execute(text("SELECT status, count(*) FROM episodes GROUP BY status")).all()
            )
            batch_counts: dict[str, int] = dict(
                conn.execute(text("SELECT status, count(*) FROM batches GROUP BY status")).all()
            )
            facts = conn.execute(
                text(
                    "SELECT count(*) FILTER (WHERE valid_to IS NULL), count(*) FILTER (WHERE valid_to IS NOT NULL) "
                    "FROM facts"
                )
            ).one()
            semantic = conn.scalar(select(func.count()).select_from(semantic_memories))
            review_count = conn.scalar(select(func.count()).select_from(reviews))
        outbox, outbox_age = self.outbox_lag()
        return {
            "episodes": {"total": sum(by_status.values()), **by_status},
            "semantic_memories": int(semantic or 0),
            "facts": {"open": int(facts[0]), "closed": int(facts[1])},
            "batches": batch_counts,
            "reviews": int(review_count or 0),
            "outbox": {"pending": outbox, "oldest_age_s": round(outbox_age, 3)},
        }
