"""`hindsight bench recall`: recall latency at 100,000 memories in one scope, beside its own floor.

The floor is what any dense recall must pay: embedding the query plus one raw vector search of the
same index. Hybrid recall adds BM25 (run while the query is embedded), hydration and validity checks in
PostgreSQL, fusion and weighting. Both are timed query by query, alternating which goes first, so
that a change of machine load hits both alike; the target is recall p95 <= 1.5 x floor p95.

Memories are synthetic but shaped like real ones: LoCoMo turn texts (repeated with a prefix past
5,882) and their MiniLM vectors plus a little noise, inserted as kept, reviewed episodes of one scope
of the bench database (which the LoCoMo bench shares; this bench touches only its own scope).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url

from bench import locomo_data
from bench.locomo import BENCH_DATABASE_URL
from bench.locomo_data import LocomoTurn
from bench.report import machine, write_section
from bench.review import CACHE_DIR, cached_embeddings
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.logging import configure_logging
from pipeline.recall.hybrid import DEFAULT_TUNING

AGENT, USER = "latency-bench", "one-scope"
TARGET = 1.5
PREFIXES = ("", "Like I said, ", "Again: ", "To repeat, ", "Once more: ", "As mentioned, ")
__all__ = ["BENCH_DATABASE_URL", "run_recall_bench"]


@dataclass
class LatencyResult:
    n: int
    queries: int
    floor_ms: list[float]
    recall_ms: list[float]
    setup: str

    def p(self, values: list[float], q: float) -> float:
        return float(np.percentile(values, q))

    @property
    def ratio(self) -> float:
        return self.p(self.recall_ms, 95) / self.p(self.floor_ms, 95)

    @property
    def figures(self) -> dict[str, float]:
        return {
            "memories": float(self.n),
            "queries": float(self.queries),
            "floor_p50_ms": self.p(self.floor_ms, 50),
            "floor_p95_ms": self.p(self.floor_ms, 95),
            "recall_p50_ms": self.p(self.recall_ms, 50),
            "recall_p95_ms": self.p(self.recall_ms, 95),
            "ratio_p95": self.ratio,
        }


def _fill(
    engine: object, index: object, texts: list[str], vectors: np.ndarray, n: int, console: Console
) -> None:
    from pipeline.adapters.postgres.tables import episodes
    from pipeline.core.ports import IndexPoint
    from pipeline.core.vector_ids import point_id
    from pipeline.core.vectors import to_blob
    from pipeline.ingest.validation import utcnow

    rng = np.random.default_rng(7)
    now = utcnow()
    with engine.begin() as conn:  # type: ignore[attr-defined]
        conn.execute(
            text("DELETE FROM episodes WHERE agent_id = :a AND user_id = :u"), {"a": AGENT, "u": USER}
        )
    chunk = 5000
    for start in range(0, n, chunk):
        rows, points = [], []
        ids = range(start, min(start + chunk, n))
        base = np.stack([vectors[i % len(texts)] for i in ids])
        noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        for j, i in enumerate(ids):
            prefix = PREFIXES[(i // len(texts)) % len(PREFIXES)]
            rows.append(
                {
                    "turn_id": f"{AGENT}:{i}",
                    "agent_id": AGENT,
                    "user_id": USER,
                    "session_id": f"s{i // 20}",
                    "role": "user",
                    "content": prefix + texts[i % len(texts)],
                    "ts": now,
                    "source": "user",
                    "status": "kept",
                    "embedding": to_blob(noisy[j]),
                    # Reviewed over time, as a real scope is: one shared timestamp would make every
                    # lexicon top-up re-read the whole scope (it re-reads a few seconds of overlap).
                    "reviewed_at": now - timedelta(seconds=n - i),
                }
            )
        with engine.begin() as conn:  # type: ignore[attr-defined]
            returned = conn.execute(insert(episodes).returning(episodes.c.id), rows).scalars().all()
        for j, ref in enumerate(returned):
            points.append(
                IndexPoint(
                    point_id("episode", ref),
                    noisy[j].tolist(),
                    {"kind": "episode", "ref_id": ref, "agent_id": AGENT, "user_id": USER, "weight": 1.0},
                )
            )
        for p in range(0, len(points), 1000):
            index.upsert(points[p : p + 1000])  # type: ignore[attr-defined]
        console.print(f"  {min(start + chunk, n):,} / {n:,} memories", highlight=False)


def _stored_vectors(engine: Any, turns: list[LocomoTurn]) -> np.ndarray | None:
    """The MiniLM vectors review stored for these turns, when `bench locomo` has ingested them here."""
    from pipeline.core.vectors import from_blob

    with engine.connect() as conn:
        rows = dict(
            conn.execute(
                text(
                    "SELECT turn_id, embedding FROM episodes WHERE turn_id = ANY(:ids) AND embedding IS NOT NULL"
                ),
                {"ids": [t.turn_id for t in turns]},
            ).all()
        )
    if len(rows) < len(turns):
        return None
    return np.stack([from_blob(rows[t.turn_id]) for t in turns])


def run_recall_bench(
    settings: Settings,
    *,
    n: int,
    queries: int,
    data: Path,
    database_url: str,
    write: bool,
    console: Console,
) -> LatencyResult:
    from pipeline.adapters.embedder import make_embedder
    from pipeline.adapters.lexicon_cache import Lexicon
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.migrate import upgrade
    from pipeline.adapters.postgres.recall_sql import RecallStore
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex
    from pipeline.recall.hybrid import recall

    configure_logging("WARNING", settings.log_json)
    if "bench" not in (make_url(database_url).database or ""):
        raise ConfigError(f"the recall bench writes 100k rows into {database_url!r}: use a bench database")
    upgrade(database_url)
    turns, questions = locomo_data.load(data)
    # A scope smaller than LoCoMo (the suite's quick size) needs only its first n texts embedded.
    turns = turns[:n]
    texts = [t.content for t in turns]
    # The configured backend, one intra-op thread: what the API embeds queries with, on one core.
    backend = settings.embedding.backend
    embedder = make_embedder(
        settings.model_copy(update={"embedding": settings.embedding.model_copy(update={"torch_threads": 1})})
    )
    embedder.warm_up()
    engine = make_engine(database_url, pool_size=4)
    vectors = _stored_vectors(engine, turns)
    if vectors is None:
        vectors, _ = cached_embeddings(texts, embedder, settings)
    qdrant_path = CACHE_DIR / "recall-latency-qdrant"
    index = EdgeVectorIndex(qdrant_path, settings.embedding.dimension)
    try:
        with engine.connect() as conn:
            stored = conn.scalar(
                text("SELECT count(*) FROM episodes WHERE agent_id = :a AND user_id = :u"),
                {"a": AGENT, "u": USER},
            )
        reused = stored == n and index.count() == n
        if not reused:
            console.rule(f"[bold]bench recall: {n:,} memories in one scope")
            index.close()
            import shutil

            shutil.rmtree(qdrant_path, ignore_errors=True)
            index = EdgeVectorIndex(qdrant_path, settings.embedding.dimension)
            _fill(engine, index, texts, vectors, n, console)
        with engine.begin() as conn:
            # Fresh statistics, as autovacuum would have them: with the scope's 100k rows unknown to the
            # planner, hydration ANDs a bitmap of the whole scope with the primary key (~200 ms, measured).
            # The semantic tables are analysed too, as autovacuum would; hydration's `folded_into` no
            # longer depends on it (it starts from the members' episode index: recall_sql._EPISODES).
            conn.execute(text("ANALYZE episodes, semantic_memories, semantic_members"))
        store = RecallStore(engine)
        repo = Repository(engine)
        lexicon = Lexicon(
            store,
            refresh_s=settings.recall.lexicon_refresh_s,
            max_bytes=settings.recall.lexicon_max_mb << 20,
            vectors=settings.recall.lexicon_vectors,
        )
        t0 = time.perf_counter()
        lexicon.search(AGENT, USER, "warm up", 1)
        build_s = time.perf_counter() - t0
        asked = [q.text for q in questions[:: max(1, len(questions) // queries)]][:queries]
        floor_ms: list[float] = []
        recall_ms: list[float] = []

        def floor(q: str) -> None:
            vector = embedder.embed([q])[0]
            # As many as recall takes from the index, so both sides pay the same HNSW search.
            index.search(vector.tolist(), agent_id=AGENT, user_id=USER, limit=DEFAULT_TUNING.candidates)

        def hybrid(q: str) -> None:
            recall(
                q,
                agent_id=AGENT,
                user_id=USER,
                k=10,
                repo=repo,
                store=store,
                index=index,
                embedder=embedder,
                lexicon=lexicon,
            )

        for q in asked[:10]:  # warm-up: caches, JIT paths, connection pool
            floor(q)
            hybrid(q)
        for i, q in enumerate(asked):
            pair = [(floor, floor_ms), (hybrid, recall_ms)]
            for fn, out in pair if i % 2 == 0 else reversed(pair):
                t = time.perf_counter()
                fn(q)
                out.append((time.perf_counter() - t) * 1000)
    finally:
        index.close()
        engine.dispose()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    setup = (
        f"Machine load average {load} (shared with other work) at the end. {n:,} kept episodes in one scope ({'reused' if reused else 'inserted'}; BM25 of the scope built in "
        f"{build_s:.1f} s on first use), {len(asked)} LoCoMo questions, embedding backend {backend}, one thread"
    )
    result = LatencyResult(n, len(asked), floor_ms, recall_ms, setup)
    lines = latency_lines(result)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
    if write:
        write_section("recall", "\n".join(lines))
    return result


def latency_lines(r: LatencyResult) -> list[str]:
    ok = "met" if r.ratio <= TARGET else "**missed**"
    return [
        "## Recall latency: `hindsight bench recall`",
        "",
        f"{r.setup}. Timed query by query, alternating which side goes first; {machine()}.",
        "",
        "| per query | p50 (ms) | p95 (ms) |",
        "|---|---:|---:|",
        f"| query embedding + raw vector search of the same {DEFAULT_TUNING.candidates} candidates (floor) | {r.p(r.floor_ms, 50):.1f} | {r.p(r.floor_ms, 95):.1f} |",
        f"| hybrid recall (embedding ∥ BM25, vector search, PostgreSQL hydration, fusion) | "
        f"{r.p(r.recall_ms, 50):.1f} | {r.p(r.recall_ms, 95):.1f} |",
        f"| **ratio** (target p95 ≤ {TARGET}) | {r.p(r.recall_ms, 50) / r.p(r.floor_ms, 50):.2f} | "
        f"**{r.ratio:.2f}** ({ok}) |",
    ]
