"""Recall, first cut: dense search over the caller's episodes, re-checked against PostgreSQL.

The index may lag the store (outbox) or hold a point whose episode has since gone cold or been
forgotten, so hits are hydrated from PostgreSQL and anything no longer recallable is dropped.
Score = cosine relevance x weight x source trust (DESIGN §2).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from pipeline.adapters.postgres.repository import EPISODE, SEMANTIC, Repository
from pipeline.models import Hit
from pipeline.ports import Embedder, Vector, VectorIndex

SOURCE_TRUST = {"user": 1.0, "tool": 0.9, "agent": 0.7, "external": 0.7}
# A semantic memory stands for several consistent episodes: it outranks any one of them (DESIGN §2).
SEMANTIC_BOOST = 1.2
# Over-fetch so that hits dropped during hydration do not leave the caller short.
OVERFETCH = 3


def recall(
    query: str,
    *,
    agent_id: str,
    user_id: str,
    k: int,
    repo: Repository,
    index: VectorIndex,
    embedder: Embedder,
    as_of: datetime | None = None,
    history: bool = False,
    include_cold: bool = False,
) -> list[Hit]:
    """The k most relevant recallable memories of one scope; with `as_of`, only what existed then."""
    vector = embedder.embed([query])[0]
    hits = index.search(vector.tolist(), agent_id=agent_id, user_id=user_id, limit=k * OVERFETCH)
    episode_ids = [int(h.payload["ref_id"]) for h in hits if h.payload.get("kind") == EPISODE]
    rows = repo.episodes_by_id(episode_ids, agent_id=agent_id, user_id=user_id, as_of=as_of, history=history)
    semantic_ids = [int(h.payload["ref_id"]) for h in hits if h.payload.get("kind") == SEMANTIC]
    memories = repo.semantic_by_id(semantic_ids, agent_id=agent_id, user_id=user_id, as_of=as_of)
    results: list[Hit] = []
    for h in hits:
        if h.payload.get("kind") == SEMANTIC:
            memory = memories.get(int(h.payload.get("ref_id", -1)))
            if memory is not None:
                results.append(
                    Hit(
                        id=f"{SEMANTIC}:{memory.id}",
                        kind="semantic",
                        text=memory.text,
                        score=max(h.score, 0.0) * memory.weight * SEMANTIC_BOOST,
                        weight=memory.weight,
                        valid_from=memory.valid_from,
                        valid_to=memory.valid_to,
                        source_turn_ids=memory.turn_ids,
                        session_id=None,
                    )
                )
            continue
        row = rows.get(int(h.payload.get("ref_id", -1)))
        if row is None or (as_of is not None and row.ts > as_of):
            continue
        relevance = max(h.score, 0.0)
        results.append(
            Hit(
                id=f"{EPISODE}:{row.id}",
                kind="episode",
                text=row.content,
                score=relevance * row.weight * SOURCE_TRUST.get(row.source, 0.7),
                weight=row.weight,
                valid_from=row.ts,
                valid_to=None,
                source_turn_ids=(row.turn_id, *row.merged_turn_ids),
                session_id=row.session_id,
            )
        )
    if include_cold:
        results += _cold_hits(repo, vector, agent_id=agent_id, user_id=user_id, k=k)
    results.sort(key=lambda hit: hit.score, reverse=True)
    return results[:k]


COLD_SCAN_LIMIT = 50_000


def _cold_hits(repo: Repository, vector: Vector, *, agent_id: str, user_id: str, k: int) -> list[Hit]:
    """Cold storage is not in the vector index: scan the scope's cold vectors in PostgreSQL (rarely asked)."""
    rows = repo.cold_memories(agent_id, user_id, limit=COLD_SCAN_LIMIT)
    if not rows:
        return []
    sims = np.stack([r.vector for r in rows]) @ vector
    best = np.argsort(-sims)[:k]
    hits = []
    for i in best:
        r = rows[int(i)]
        boost = SEMANTIC_BOOST if r.kind == SEMANTIC else SOURCE_TRUST.get(r.source, 0.7)
        hits.append(
            Hit(
                id=f"{r.kind}:{r.id}",
                kind="semantic" if r.kind == SEMANTIC else "episode",
                text=r.text,
                score=max(float(sims[int(i)]), 0.0) * r.base_weight * boost,
                weight=r.base_weight,
                valid_from=r.valid_from,
                valid_to=r.valid_to,
                source_turn_ids=r.turn_ids,
                session_id=r.session_id,
                cold=True,
            )
        )
    return hits
