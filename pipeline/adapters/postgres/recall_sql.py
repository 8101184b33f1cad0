"""The SQL recall needs beyond the vector index: hydrating hits, lexical documents, facts named in a query."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors
from pipeline.core.ports import Vector
from pipeline.core.recall_rows import RecallEpisode, SemanticRow
from pipeline.core.vectors import from_blob


@dataclass(frozen=True, slots=True)
class LexicalDoc:
    kind: str  # episode | semantic
    id: int
    session_id: str | None
    text: str
    speaker: str | None  # metadata.speaker: who said it, when the agent service names people
    recallable: bool  # kept (episodes) / open and kept (semantic); the others are context only
    changed_at: datetime
    embedding: bytes | None = None  # float32 little-endian, when asked for
    restored: bool = False  # read because it came back from cold storage since (restored_at)
    arrived: bool = False  # read as a turn waiting for its review that the write-side screen passed


# An episode is superseded when facts name it and none of them is still believed and valid at `as_of`.
# Everything is worked out once for all the ids, each part through an index, never by a subquery per row:
# - `stated`: the facts naming each turn, through the GIN index on facts.turn_ids. The per-row subquery it
#   replaces scanned every fact of the scope (dead versions too, until vacuumed) for every row: with
#   20,000 facts in a scope, hydrating 100 ids took 1.5-2.6 s, now 8-13 ms (the same rows).
# - `pairs`: the open memories of the scope among the ids' member rows (an episode is a member of every
#   version of its memory, ~30 by day 30 of `bench month`).
# - `sizes`: each of those memories' members counted once, in a CTE of its own. Written inside `folded`
#   the planner ran the count once per (episode, memory) pair, and the ids a recall hydrates are often
#   folded into the same memory: 48 counts of one 413-member memory for 51 ids on the month's day-30 state.
# - `folded`: the members of the smallest open memory each episode is folded into.
# On `bench month`'s day-30 state, vacuumed, hydration 11.4 -> 9.1 ms p50 for 10-100 ids (stated), then
# 3.8 / 10.5 -> 2.3 / 6.0 ms p50 / p95 over the 40 sampled questions' hydrations (sizes; the same rows).
_EPISODES = """
    WITH mine AS MATERIALIZED (
        SELECT e.id, e.turn_id, e.merged_turn_ids, e.session_id, e.content, e.ts, e.source, e.weight,
               e.base_weight, e.metadata->>'speaker' AS speaker, e.status = 'kept' AS reviewed, e.role
        FROM episodes e
        WHERE e.id = ANY(:ids) AND e.agent_id = :agent AND e.user_id = :user
          AND (e.status = 'kept' OR (e.status = 'pending' AND e.prescreened))
          AND e.ts <= coalesce(:as_of, 'infinity'::timestamptz)
    ), pairs AS MATERIALIZED (
        SELECT sm.episode_id, sm.memory_id
        FROM semantic_members sm JOIN semantic_memories m ON m.id = sm.memory_id
        WHERE sm.episode_id = ANY(:ids) AND m.agent_id = :agent AND m.user_id = :user
          AND m.valid_to IS NULL AND m.status = 'kept'
    ), sizes AS MATERIALIZED (
        SELECT d.memory_id, (SELECT count(*) FROM semantic_members x WHERE x.memory_id = d.memory_id) AS members
        FROM (SELECT DISTINCT memory_id FROM pairs) d
    ), folded AS MATERIALIZED (
        SELECT p.episode_id, min(s.members) AS members
        FROM pairs p JOIN sizes s ON s.memory_id = p.memory_id
        GROUP BY p.episode_id
    ), stated AS MATERIALIZED (
        SELECT t.turn_id,
               bool_and(f.retracted_at IS NOT NULL
                        OR coalesce(f.valid_to <= coalesce(:as_of, now()), false)) AS superseded
        FROM mine t
        JOIN facts f ON f.turn_ids @> ARRAY[t.turn_id] AND f.agent_id = :agent AND f.user_id = :user
        GROUP BY t.turn_id
    ), links AS MATERIALIZED (
        SELECT l.old_episode_id, l.new_episode_id, l.valid_from, l.undone_at IS NOT NULL AS undone
        FROM supersessions l
        WHERE (l.old_episode_id = ANY(:ids) OR l.new_episode_id = ANY(:ids))
          AND l.agent_id = :agent AND l.user_id = :user
          AND l.valid_from <= coalesce(:as_of, 'infinity'::timestamptz)
    ), later AS MATERIALIZED (
        SELECT old_episode_id AS id, array_agg(new_episode_id ORDER BY valid_from) AS ids,
               min(valid_from) AS since
        FROM links WHERE NOT undone GROUP BY old_episode_id
    ), earlier AS MATERIALIZED (
        SELECT new_episode_id AS id, array_agg(old_episode_id ORDER BY valid_from) AS ids
        FROM links WHERE NOT undone GROUP BY new_episode_id
    ), undone AS MATERIALIZED (
        SELECT x.id, array_agg(x.other) AS ids FROM (
            SELECT old_episode_id AS id, new_episode_id AS other FROM links WHERE undone
            UNION ALL SELECT new_episode_id, old_episode_id FROM links WHERE undone
        ) x GROUP BY x.id
    )
    -- An operator's undo of a link (issue 39) also undoes the fact chain's verdict on that turn.
    SELECT mine.*,
           coalesce(stated.superseded, false)
             AND NOT EXISTS (SELECT 1 FROM links u WHERE u.old_episode_id = mine.id AND u.undone) AS superseded,
           folded.members AS folded_into,
           coalesce(later.ids, '{}') AS superseded_by, later.since AS superseded_at,
           coalesce(earlier.ids, '{}') AS supersedes, coalesce(undone.ids, '{}') AS undone_with
    FROM mine
    LEFT JOIN folded ON folded.episode_id = mine.id
    LEFT JOIN stated ON stated.turn_id = mine.turn_id
    LEFT JOIN later ON later.id = mine.id
    LEFT JOIN earlier ON earlier.id = mine.id
    LEFT JOIN undone ON undone.id = mine.id
"""

# What a scope's lexicon has not seen: reviewed or created since, what came back from cold storage
# since (re-heated, restored), which the lexicon then indexes late, and what arrived since and waits for
# its review (recallable if the write-side screen passed it, else context only). Each branch reads its
# own index; the last, the scope's not-yet-fully-reviewed turns (ix_episodes_pending_full), has a mark of
# its own (`:arrived`), in the database's clock like `received_at`.
_LEXICAL = """
    SELECT 'episode' AS kind, e.id, e.session_id, e.content AS text, e.metadata->>'speaker' AS speaker,
           e.status = 'kept' AS recallable, e.reviewed_at AS changed_at,
           CASE WHEN :vectors AND e.status = 'kept' THEN e.embedding END AS embedding, false AS restored,
           false AS arrived
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.reviewed_at > :since AND e.status <> 'forgotten'
    UNION ALL
    SELECT 'episode', e.id, e.session_id, e.content, e.metadata->>'speaker', true, e.restored_at,
           CASE WHEN :vectors THEN e.embedding END, true, false
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.restored_at > :since AND e.status = 'kept'
    UNION ALL
    SELECT 'semantic', m.id, NULL, m.text, NULL, m.status = 'kept' AND m.valid_to IS NULL AND m.coherent,
           m.created_at, CASE WHEN :vectors THEN m.embedding END, false, false
    FROM semantic_memories m
    WHERE m.agent_id = :a AND m.user_id = :u AND m.created_at > :since
    UNION ALL
    SELECT 'semantic', m.id, NULL, m.text, NULL, m.valid_to IS NULL, m.restored_at,
           CASE WHEN :vectors THEN m.embedding END, true, false
    FROM semantic_memories m
    WHERE m.agent_id = :a AND m.user_id = :u AND m.restored_at > :since AND m.status = 'kept' AND m.coherent
    UNION ALL
    SELECT 'episode', e.id, e.session_id, e.content, e.metadata->>'speaker', true, e.received_at, NULL, false,
           true
    FROM episodes e
    WHERE e.agent_id = :a AND e.user_id = :u AND e.full_batch_id IS NULL AND e.status = 'pending'
      AND e.prescreened AND e.received_at > :arrived
    ORDER BY 1, 2, restored
"""

_EMBEDDINGS = """
    SELECT id, embedding FROM episodes
    WHERE id = ANY(:ids) AND agent_id = :a AND user_id = :u AND embedding IS NOT NULL
"""

# Rows of a lexicon read fetched at a time (a first build reads the whole scope).
LEXICAL_CHUNK = 2000

# Open (or at `as_of` valid) semantic memories with their members' turn ids, merged turns included.
_SEMANTIC = """
    SELECT m.id, m.text, m.weight, m.base_weight, m.valid_from, m.valid_to, m.details->>'subject' AS subject,
           m.method,
           array_agg(t.turn_id ORDER BY t.ord) AS turn_ids,
           coalesce(array_agg(t.turn_id ORDER BY t.ord) FILTER (WHERE t.says), '{}') AS speaks_for,
           min(t.ts) AS first_said, max(t.ts) AS last_said
    FROM semantic_memories m
    JOIN LATERAL (
        SELECT x.turn_id, e.ts, row_number() OVER () AS ord,
               -- Review records which members the text states (issue 40: restatements.covers). Rows
               -- from before (NULL): a template or an LLM summary states what every member states; an
               -- extractive text is one member's sentence (filler trimmed, a full stop added): it speaks
               -- for the members that say it.
               coalesce(sm.stated, m.method IN ('template', 'llm')
               OR strpos(regexp_replace(e.content, '[[:space:]]+', ' ', 'g'), rtrim(m.text, '.。!！…')) > 0)
               AS says
        FROM semantic_members sm JOIN episodes e ON e.id = sm.episode_id
        CROSS JOIN LATERAL unnest(array_prepend(e.turn_id, e.merged_turn_ids)) AS x(turn_id)
        WHERE sm.memory_id = m.id
    ) t ON true
    WHERE m.id = ANY(:ids) AND m.agent_id = :a AND m.user_id = :u AND m.status = 'kept' AND m.coherent
      AND m.valid_from <= coalesce(:as_of, now())
      AND (m.valid_to IS NULL OR m.valid_to > coalesce(:as_of, now()))
    GROUP BY m.id
"""


class RecallStore:
    """Recall's reads. The ones on a recall's path are one statement each, so none needs a transaction:
    they run in autocommit, without a BEGIN before and a ROLLBACK after each (measured on the recall
    bench's 100,000-episode scope: hydrating 50 ids 5.5 -> 2.8 ms p50, 10 ids 3.7 -> 1.7 ms)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._transactional = engine

    def episodes(
        self, ids: Sequence[int], *, agent_id: str, user_id: str, as_of: datetime | None, history: bool
    ) -> dict[int, RecallEpisode]:
        """Recallable episodes among `ids`, in the caller's scope and already said at `as_of`.

        Unless `history`, superseded ones are left out; with it they come back flagged, to be ranked low.
        """
        if not ids:
            return {}
        params = {"ids": list(ids), "agent": agent_id, "user": user_id, "as_of": as_of}
        with translate_errors(), self.engine.connect() as conn:
            out = {
                r.id: RecallEpisode(
                    r.id,
                    r.turn_id,
                    tuple(r.merged_turn_ids or ()),
                    r.session_id,
                    r.content,
                    r.ts,
                    r.source,
                    r.weight,
                    bool(r.superseded),
                    int(r.folded_into or 0),
                    r.speaker,
                    r.base_weight,
                    bool(r.reviewed),
                    r.role,
                    tuple(r.superseded_by),
                    r.superseded_at,
                    tuple(r.supersedes),
                    tuple(r.undone_with),
                )
                for r in conn.execute(text(_EPISODES), params)
            }
        return out if history else {i: e for i, e in out.items() if not e.superseded}

    def embeddings(self, ids: Sequence[int], *, agent_id: str, user_id: str) -> dict[int, Vector]:
        """The stored embeddings of these episodes of the scope (those that have one)."""
        if not ids:
            return {}
        params = {"ids": list(ids), "a": agent_id, "u": user_id}
        with translate_errors(), self.engine.connect() as conn:
            return {r.id: from_blob(r.embedding) for r in conn.execute(text(_EMBEDDINGS), params)}

    def lexical_docs(
        self,
        agent_id: str,
        user_id: str,
        *,
        since: datetime,
        arrived: datetime | None = None,
        vectors: bool = False,
    ) -> Iterator[LexicalDoc]:
        """Episodes reviewed and semantic memories created after `since`, those restored from cold
        storage since (flagged `restored`) and the pending turns recallable before their review received
        after `arrived` (flagged `arrived`; default `since`), in id order (turn order); with `vectors`, the
        reviewed recallable ones' embeddings.

        Streamed from a server-side cursor, `LEXICAL_CHUNK` rows at a time, while the caller indexes
        them: a scope's first build reads all of it. Building the recall bench's 100,000-turn scope,
        the process peaked at 566 instead of 932 MiB (read whole: the driver's copy of the result, then
        the rows), the build taking 12.4 instead of 10.3 s."""
        params = {
            "a": agent_id,
            "u": user_id,
            "since": since,
            "arrived": since if arrived is None else arrived,
            "vectors": vectors,
        }
        # A server-side cursor lives in a transaction: this read does not use the autocommit engine.
        with translate_errors(), self._transactional.connect() as conn:
            rows = conn.execution_options(yield_per=LEXICAL_CHUNK).execute(text(_LEXICAL), params)
            for r in rows:
                yield LexicalDoc(
                    r.kind,
                    r.id,
                    r.session_id,
                    r.text,
                    r.speaker,
                    bool(r.recallable),
                    r.changed_at,
                    r.embedding,
                    bool(r.restored),
                    bool(r.arrived),
                )

    def semantic_by_id(
        self, ids: Sequence[int], *, agent_id: str, user_id: str, as_of: datetime | None = None
    ) -> dict[int, SemanticRow]:
        """Semantic memories valid at `as_of` (default: the open versions), with their members' turn ids."""
        with translate_errors(), self.engine.connect() as conn:
            rows = conn.execute(
                text(_SEMANTIC), {"ids": list(ids), "a": agent_id, "u": user_id, "as_of": as_of}
            )
            return {
                r.id: SemanticRow(
                    r.id,
                    r.text,
                    r.weight,
                    r.valid_from,
                    r.valid_to,
                    tuple(dict.fromkeys(r.turn_ids)),
                    r.base_weight,
                    tuple(dict.fromkeys(r.speaks_for)),
                    r.first_said,
                    r.last_said,
                    r.subject,
                    r.method,
                )
                for r in rows
            }
