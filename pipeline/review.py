"""The review use case: what a Celery worker does with one batch.

For now (the walking pipeline) a review embeds the batch's turns once and keeps them; quality,
conflicts and clustering deepen it in later stages. Idempotent on batch_id: a second delivery of a
finished batch does nothing, and a delivery racing another loses cleanly in `complete_review`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.adapters.embedder import to_blob
from pipeline.adapters.postgres.repository import Repository
from pipeline.ports import Embedder


@dataclass(frozen=True, slots=True)
class ReviewReport:
    batch_id: int
    kind: str
    trigger: str
    applied: bool  # False when another delivery of the same batch finished first
    counts: dict[str, int] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)


def review_batch(
    batch_id: int,
    *,
    repo: Repository,
    embedder: Embedder,
    clock: Callable[[], datetime],
    worker: str = "",
) -> ReviewReport | None:
    """Review one batch. Returns None when the batch is already done or unknown."""
    started_at = clock()
    batch = repo.start_batch(batch_id, started_at)
    if batch is None:
        return None
    episodes = repo.batch_episodes(batch)
    to_embed = [ep for ep in episodes if not ep.has_embedding]

    t0 = time.perf_counter()
    vectors = embedder.embed([ep.content for ep in to_embed])
    embed_ms = (time.perf_counter() - t0) * 1000
    embeddings = {ep.id: to_blob(vec) for ep, vec in zip(to_embed, vectors, strict=True)}

    counts = {"episodes": len(episodes), "embedded": len(embeddings), "kept": len(episodes)}
    t1 = time.perf_counter()
    applied = repo.complete_review(
        batch,
        embeddings=embeddings,
        now=clock(),
        started_at=started_at,
        counts=counts,
        timings_ms={"embed": round(embed_ms, 2)},
        worker=worker,
    )
    write_ms = (time.perf_counter() - t1) * 1000
    return ReviewReport(
        batch_id=batch.id,
        kind=batch.kind,
        trigger=batch.trigger,
        applied=applied,
        counts=counts,
        timings_ms={"embed": round(embed_ms, 2), "write": round(write_ms, 2)},
    )
