"""`hindsight bench month`: a simulated month of one agent's traffic, reviewed and decayed vs stored raw.

The traffic (bench/month_traffic.py) goes day by day into two disposable databases:

- review: the real pipeline code in-process, on a simulated clock. Every ~20 simulated minutes the
  turns that arrived go in through `Repository.ingest` (what the scheduler does after validating a
  stream entry), then `SchedulerRunner.tick` runs the real policy and claims batches, and each batch
  goes through `review_batch` (what the Celery task calls) with `clock` = the simulated time; the
  outbox is drained into Qdrant's in-process engine by `drain_all` (the indexer's loop body). At the
  end of each day an idle sweep (clock past idle_s) light-reviews open sessions, and `run_decay` (the
  beat job's function) runs with `now` = the end of that day.
- raw: the same turns, with the same vectors, stored as kept episodes (every turn hot, no review, no
  decay) and indexed the same way.

Per day, on both sides: active (hot) memories = kept episodes + open kept semantic memories, and
recall p50/p95 over a fixed sample of LoCoMo questions. At the end: LoCoMo evidence recall@10 on both
sides (every question whose evidence went in; k counts distinct source turns, as `bench locomo`).

Embeddings: every distinct text is embedded once and kept under .hindsight/bench-cache/, so a rerun
embeds nothing, and both sides (and the queries) use the same vectors.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np
from rich.console import Console
from rich.table import Table
from sqlalchemy import Engine, text

from bench import charts, locomo_data
from bench.locomo_data import DEFAULT_DATA, Question, Score
from bench.month_traffic import T0, Traffic, TrafficTurn, generate
from bench.report import write_section
from bench.review import CACHE_DIR, REPO_ROOT, TABLES, check_disposable
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.models import PRIORITY_BY_SOURCE, SessionEnd, Turn
from pipeline.core.ports import Vector
from pipeline.recall.hybrid import DEFAULT_TUNING, RecallTuning

REVIEW_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_month_review"
RAW_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_month_raw"
REVIEW_REDIS_URL = "redis://127.0.0.1:6379/5"
AGENT = "month"
K = 10
# Beside the default: how much of the review side's recall gap is decay's weight burying old turns.
DECAY_EXPONENTS = (1.0, 0.5, 0.25, 0.0)
SAMPLE_QUERIES = 40  # the fixed sample whose recall latency is measured every day, on both sides
TICK_TURNS = 25  # turns per simulated scheduler round (~20 simulated minutes at 1,000 turns a day)
ACTIVE_TARGET = 1500
RATIO_TARGET = 0.95
CHART = REPO_ROOT / "docs" / "bench" / "month.png"


# -- embeddings: each distinct text once, cached across runs ----------------------------------------------


class VectorCache:
    """text -> vector, persisted as one .npz per model; what is missing is embedded in one go."""

    def __init__(self, settings: Settings, cache_dir: Path, embedder: Any = None) -> None:
        self.settings = settings
        model = hashlib.sha256(settings.embedding.model.encode()).hexdigest()[:12]
        self.path = cache_dir / f"month-embeddings-{model}.npz"
        self.vectors: dict[str, Vector] = {}
        self.embedded = 0  # texts this run had to embed
        self._model: Any = embedder  # None: the configured model, loaded on the first miss
        if self.path.exists():
            data = np.load(self.path)
            for key, vector in zip(data["keys"], data["vectors"], strict=True):
                self.vectors[str(key)] = vector.astype(np.float32, copy=False)

    @staticmethod
    def key(content: str) -> str:
        return hashlib.sha256(content.encode()).hexdigest()[:40]

    def ensure(self, texts: Sequence[str]) -> int:
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.vectors))
        if not missing:
            return 0
        from bench.review import torch_threads

        with torch_threads(os.cpu_count() or 1):  # one-off and untimed: the whole machine
            vectors = self._embedder().embed(missing)
        for t, v in zip(missing, vectors, strict=True):
            self.vectors[self.key(t)] = np.asarray(v, dtype=np.float32)
        self.embedded += len(missing)
        self.save()
        return len(missing)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.vectors), dtype="U40")
        partial = self.path.with_suffix(".partial.npz")
        np.savez(partial, keys=keys, vectors=np.stack(list(self.vectors.values())))
        partial.replace(self.path)  # a killed run leaves no truncated cache

    def _embedder(self) -> Any:
        if self._model is None:
            from pipeline.adapters.embedder import make_embedder

            self._model = make_embedder(self.settings)  # the configured backend, as the workers embed
        return self._model

    def vector(self, content: str) -> Vector:
        return self.vectors[self.key(content)]


class CachedEmbedder:
    """The Embedder port over the cache: what review and recall embed comes from it (a text the
    traffic did not hold, such as a summary, is embedded and added)."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache
        self.dimension = cache.settings.embedding.dimension

    def embed(self, texts: Sequence[str]) -> Vector:
        self.cache.ensure(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache.vector(t) for t in texts])


# -- the two stores ----------------------------------------------------------------------------------


@dataclass
class Side:
    name: str
    agent: str  # the sides may share a database (the integration test does): each has its own agent
    engine: Engine
    repo: Any  # Repository
    store: Any  # RecallStore
    index: Any  # EdgeVectorIndex
    qdrant_path: Path

    def active(self) -> tuple[int, int]:
        """(hot episodes, open hot semantic memories)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM episodes WHERE agent_id = :a AND status = 'kept'), "
                    "(SELECT count(*) FROM semantic_memories "
                    " WHERE agent_id = :a AND status = 'kept' AND valid_to IS NULL)"
                ),
                {"a": self.agent},
            ).one()
        return int(row[0]), int(row[1])

    def breakdown(self, kind_of: dict[str, str]) -> dict[str, dict[str, int]]:
        """Where each kind of turn went: traffic kind -> state (hot, hot and folded into a semantic
        memory, cold and why, merged into a near-duplicate, ...) -> episodes."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT turn_id, CASE WHEN status = 'kept' AND consolidated THEN 'hot, folded' "
                    "WHEN status = 'kept' THEN 'hot' "
                    "ELSE status || coalesce(' (' || cold_reason || ')', '') END FROM episodes WHERE agent_id = :a"
                ),
                {"a": self.agent},
            ).all()
        out: dict[str, dict[str, int]] = {}
        for turn_id, state in rows:
            per = out.setdefault(kind_of.get(str(turn_id), "other"), {})
            per[str(state)] = per.get(str(state), 0) + 1
        return out

    def evidence_hot(self, questions: Sequence[Question]) -> tuple[float, tuple[int, int, int]]:
        """(ceiling, (distinct evidence turns, those still hot, hot episodes)). The ceiling is the mean share of
        a question's evidence turns that are still hot (own turn or merged into a hot episode): what
        recall@10 could reach at best, as in `bench locomo`."""
        if not questions:
            return 0.0, (0, 0, 0)
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT array_prepend(turn_id, merged_turn_ids) FROM episodes "
                    "WHERE agent_id = :a AND status = 'kept'"
                ),
                {"a": self.agent},
            ).scalars()
            hot_episodes = 0
            hot: set[str] = set()
            for turn_ids in rows:
                hot_episodes += 1
                hot.update(turn_ids)
        evidence = {t for q in questions for t in q.evidence}
        ceiling = sum(len(hot.intersection(q.evidence)) / len(q.evidence) for q in questions) / len(questions)
        return ceiling, (len(evidence), len(hot & evidence), hot_episodes)

    def analyze(self) -> None:
        """Fresh planner statistics, as autovacuum would gather between two days (and does not where it
        is off, as on the machine these figures came from): without them, on a table that grew by
        a day, recall's folded_into lookup was planned as a scan of every open semantic memory per
        candidate, 5x slower (measured on day 30 of the first run)."""
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("ANALYZE episodes, semantic_memories, semantic_members, facts"))

    def close(self) -> None:
        self.index.close()
        self.engine.dispose()


def open_side(name: str, database_url: str, settings: Settings, *, work_dir: Path, check: bool) -> Side:
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.migrate import upgrade
    from pipeline.adapters.postgres.recall_sql import RecallStore
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex

    if check:
        check_disposable(database_url, REVIEW_REDIS_URL, settings)
    upgrade(database_url)
    engine = make_engine(database_url, pool_size=4)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES}, memory_audit RESTART IDENTITY CASCADE"))
    path = work_dir / f"month-{name}-qdrant"
    shutil.rmtree(path, ignore_errors=True)
    repo = Repository(engine)
    return Side(
        name,
        AGENT if name == "review" else f"{AGENT}-{name}",
        engine,
        repo,
        RecallStore(engine),
        EdgeVectorIndex(path, settings.embedding.dimension),
        path,
    )


def to_turn(t: TrafficTurn, agent: str) -> Turn:
    metadata: dict[str, Any] = {"speaker": t.speaker} if t.speaker else {}
    return Turn(t.turn_id, agent, t.user_id, t.session_id, t.role, t.content, t.ts, t.source, metadata)


class ReviewedStore:
    """The review side: ingest, the scheduler's policy, review, the indexer, decay, on a simulated clock."""

    def __init__(
        self, side: Side, settings: Settings, embedder: CachedEmbedder, redis_url: str, horizon: datetime
    ):
        from pipeline.adapters.redis_stream import TurnStream, connect
        from scheduler.runner import RunnerConfig, SchedulerRunner
        from tasks.deps import review_config_for

        self.side = side
        self.settings = settings
        self.embedder = embedder
        self.config = review_config_for(settings)
        self.now = T0
        self.horizon = horizon  # later than any simulated time: rows stamped after it carry the wall clock
        self.dispatched: list[int] = []
        self.batches = 0
        self.review_s = 0.0
        self.redis = connect(redis_url)
        self.redis.flushdb()
        self.runner = SchedulerRunner(
            repo=side.repo,
            stream=TurnStream(self.redis, settings.stream_turns, settings.stream_dead),  # unused by tick()
            dispatch=self.dispatched.append,
            config=RunnerConfig(
                group=settings.scheduler_group,
                read_count=settings.scheduler_read_count,
                block_ms=0,
                claim_idle_ms=settings.scheduler_claim_idle_ms,
                tick_s=0.0,
                batch_size=settings.policy.batch_size,
                idle_s=settings.policy.idle_s,
                max_batch=settings.policy.max_batch,
            ),
            clock=lambda: self.now,
            consumer="bench-month",
        )

    def ingest(self, turns: Sequence[TrafficTurn]) -> None:
        from pipeline.adapters.indexer import drain_all

        agent = self.side.agent
        ends = [SessionEnd(agent, t.user_id, t.session_id, t.ts) for t in turns if t.ends_session]
        self.side.repo.ingest([to_turn(t, agent) for t in turns], ends)
        self.now = turns[-1].ts
        self._restamp()
        self._review()
        drain_all(self.side.repo, self.side.index, limit=self.settings.indexer_batch)

    def end_day(self, day_end: datetime) -> Any:
        """Idle sessions get their light review, then the decay pass runs at the end of the day."""
        from pipeline.adapters.indexer import drain_all
        from pipeline.adapters.postgres.decay_sql import run_decay
        from pipeline.forgetting.decay import DecayParams

        self.now = day_end
        self._review()
        d = self.settings.decay
        report = run_decay(
            self.side.engine,
            day_end,
            DecayParams(d.rate_per_day, d.cold_below),
            chunk=d.chunk,
            parallel=d.parallel,
        )
        drain_all(self.side.repo, self.side.index, limit=self.settings.indexer_batch)
        return report

    def _review(self) -> None:
        from pipeline.review.review_batch import review_batch

        t0 = time.perf_counter()
        while self.runner.tick():
            for batch_id in self.dispatched:
                review_batch(
                    batch_id,
                    repo=self.side.repo,
                    embedder=self.embedder,
                    clock=lambda: self.now,
                    config=self.config,
                    worker="bench-month",
                )
                self.batches += 1
            self.dispatched.clear()
        self._restamp()
        self.review_s += time.perf_counter() - t0

    def _restamp(self) -> None:
        """received_at and created_at are PostgreSQL's now() (the wall clock), which a simulation cannot
        move: give the rows just written the simulated time, as decay counts idle days from them."""
        with self.side.engine.begin() as conn:
            conn.execute(
                text("UPDATE episodes SET received_at = ts WHERE received_at > :h"), {"h": self.horizon}
            )
            conn.execute(
                text("UPDATE semantic_memories SET created_at = :now WHERE created_at > :h"),
                {"now": self.now, "h": self.horizon},
            )

    def close(self) -> None:
        self.redis.close()


def store_raw(side: Side, turns: Sequence[TrafficTurn], cache: VectorCache, settings: Settings) -> None:
    """Every turn as a kept episode with its vector, queued for the index: no review, no decay."""
    from psycopg.types.json import Jsonb

    from pipeline.adapters.indexer import drain_all

    columns = (
        "turn_id, agent_id, user_id, session_id, role, content, ts, source, metadata, priority, status, "
        "quality, embedding, received_at, reviewed_at"
    )
    with side.engine.connect() as conn:
        last = int(conn.scalar(text("SELECT coalesce(max(id), 0) FROM episodes")) or 0)
    raw = side.engine.raw_connection()
    try:
        pg = cast(Any, raw.driver_connection)
        with pg.cursor() as cur, cur.copy(f"COPY episodes ({columns}) FROM STDIN") as copy:
            for t in turns:
                copy.write_row(
                    (
                        # Turn ids are unique across agents: the raw side's own, if the sides share a database.
                        t.turn_id if side.agent == AGENT else f"{side.agent}:{t.turn_id}",
                        side.agent,
                        t.user_id,
                        t.session_id,
                        t.role,
                        t.content,
                        t.ts,
                        t.source,
                        Jsonb({"speaker": t.speaker} if t.speaker else {}),
                        PRIORITY_BY_SOURCE[t.source],
                        "kept",
                        Jsonb({"total": 1.0, "why": "raw: not reviewed"}),
                        np.asarray(cache.vector(t.content), dtype="<f4").tobytes(),
                        t.ts,
                        t.ts,
                    )
                )
        raw.commit()
    finally:
        raw.close()
    with side.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO index_outbox (kind, ref_id) SELECT 'episode', id FROM episodes WHERE id > :last"
            ),
            {"last": last},
        )
    drain_all(side.repo, side.index, limit=settings.indexer_batch)


# -- recall ----------------------------------------------------------------------------------------


def make_recaller(
    side: Side, embedder: CachedEmbedder, tuning: RecallTuning = DEFAULT_TUNING
) -> Callable[[Question, datetime], list[tuple[str, ...]]]:
    """The recall use case (as GET /v1/recall runs it) with a fresh BM25 lexicon of the side's state."""
    from pipeline.adapters.lexicon_cache import Lexicon
    from pipeline.recall.hybrid import recall

    prefix = "" if side.agent == AGENT else f"{side.agent}:"  # see store_raw
    # Built on a scope's first query; the state does not change while it is asked.
    lexicon = Lexicon(side.store, refresh_s=1e9)

    def ask(q: Question, now: datetime) -> list[tuple[str, ...]]:
        hits = recall(
            q.text,
            agent_id=side.agent,
            user_id=q.conversation,
            k=K,
            repo=side.repo,
            store=side.store,
            index=side.index,
            embedder=embedder,
            lexicon=lexicon,
            now=now,
            tuning=tuning,
        )
        return [tuple(t.removeprefix(prefix) for t in h.source_turn_ids) for h in hits]

    return ask


def latencies(
    ask: Callable[[Question, datetime], Any], queries: Sequence[Question], now: datetime
) -> tuple[float, float]:
    """(p50, p95) ms over the sample; each scope's lexicon is built by an untimed first query."""
    for conv in dict.fromkeys(q.conversation for q in queries):
        ask(next(q for q in queries if q.conversation == conv), now)
    ms = []
    for q in queries:
        t0 = time.perf_counter()
        ask(q, now)
        ms.append((time.perf_counter() - t0) * 1000)
    return percentile(ms, 50), percentile(ms, 95)


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    return float(np.percentile(np.asarray(values), p))


# -- the run -----------------------------------------------------------------------------------------


@dataclass
class Day:
    day: int
    turns: int
    review_episodes: int
    review_semantic: int
    raw_active: int
    review_p50: float
    review_p95: float
    raw_p50: float
    raw_p95: float
    went_cold: int  # by that day's decay pass
    load: float

    @property
    def review_active(self) -> int:
        return self.review_episodes + self.review_semantic


@dataclass
class MonthResult:
    days: list[Day] = field(default_factory=list)
    questions: int = 0
    review_r10: float = 0.0
    raw_r10: float = 0.0
    kinds: dict[str, int] = field(default_factory=dict)
    breakdown: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> state -> episodes
    preference_changes: int = 0
    embedded: int = 0
    texts: int = 0
    batches: int = 0
    review_s: float = 0.0
    seconds: float = 0.0
    loads: tuple[float, float] = (0.0, 0.0)
    ceiling: float = 0.0  # review side: mean share of a question's evidence turns still hot
    # (distinct evidence turns of the questions asked, those hot on the review side, its hot episodes)
    evidence: tuple[int, int, int] = (0, 0, 0)
    folded_cold: tuple[int, float] | None = None  # what_if_folded_cold: (active, recall@10)
    # Review side's recall@10 at the other decay exponents (RecallTuning.decay_exponent).
    by_decay_exponent: dict[float, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.review_r10 / self.raw_r10 if self.raw_r10 else 0.0

    @property
    def final_active(self) -> int:
        return self.days[-1].review_active if self.days else 0

    def figures(self) -> dict[str, Any]:
        return {
            "days": len(self.days),
            "active_review": self.final_active,
            "active_raw": self.days[-1].raw_active if self.days else 0,
            "recall_at_10_review": self.review_r10,
            "recall_at_10_raw": self.raw_r10,
            "recall_ratio": self.ratio,
            "evidence_hot_review": self.ceiling,
            "evidence_turns": self.evidence[0],
            "evidence_turns_hot_review": self.evidence[1],
            "questions": self.questions,
            "active_target_met": self.final_active <= ACTIVE_TARGET,
            "ratio_target_met": self.ratio >= RATIO_TARGET,
            "per_day": [
                {
                    "day": d.day,
                    "turns": d.turns,
                    "active_review": d.review_active,
                    "episodes_review": d.review_episodes,
                    "semantic_review": d.review_semantic,
                    "active_raw": d.raw_active,
                    "recall_p50_ms_review": d.review_p50,
                    "recall_p95_ms_review": d.review_p95,
                    "recall_p50_ms_raw": d.raw_p50,
                    "recall_p95_ms_raw": d.raw_p95,
                    "went_cold_by_decay": d.went_cold,
                }
                for d in self.days
            ],
            "breakdown_review": {k: dict(v) for k, v in self.breakdown.items()},
            "recall_at_10_review_by_decay_exponent": {str(e): v for e, v in self.by_decay_exponent.items()},
            "what_if_folded_cold": (
                None
                if self.folded_cold is None
                else {"active": self.folded_cold[0], "recall_at_10": self.folded_cold[1]}
            ),
        }


def what_if_folded_cold(
    side: Side, embedder: CachedEmbedder, questions: Sequence[Question], now: datetime, settings: Settings
) -> tuple[int, float]:
    """(active memories, recall@10) if episodes folded into a semantic memory left the hot set, found
    only through their summary. Measured for real on the review side's final state, which it changes:
    it sends those episodes cold, drops their index points, and asks every question again."""
    from pipeline.adapters.indexer import drain_all

    with side.engine.begin() as conn:
        conn.execute(
            text(
                "WITH folded AS (UPDATE episodes SET status = 'cold', cold_reason = 'whatif', cold_since = :now "
                "WHERE agent_id = :a AND status = 'kept' AND consolidated RETURNING id) "
                "INSERT INTO index_outbox (kind, ref_id) SELECT 'episode', id FROM folded"
            ),
            {"a": side.agent, "now": now},
        )
    drain_all(side.repo, side.index, limit=settings.indexer_batch)
    episodes, semantic = side.active()
    return episodes + semantic, _recall_at_10(make_recaller(side, embedder), questions, now)


def evaluable(questions: Sequence[Question], turn_ids: set[str]) -> list[Question]:
    """The questions whose evidence all went in (every question in a full month)."""
    return [q for q in questions if set(q.evidence) <= turn_ids]


def _exclusive(path: Path) -> Any:
    """An open file holding an exclusive lock, released when closed (or when the process dies)."""
    import fcntl

    handle = path.open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ConfigError(
            f"another `bench month` is running on {path.parent}; wait for it to finish"
        ) from None
    return handle


def run_month_bench(
    settings: Settings,
    *,
    days: int = 30,
    turns_per_day: int = 1000,
    data: Path = DEFAULT_DATA,
    review_database_url: str = REVIEW_DATABASE_URL,
    raw_database_url: str = RAW_DATABASE_URL,
    redis_url: str = REVIEW_REDIS_URL,
    seed: int = 7,
    write: bool,
    console: Console,
    chart: Path | None = CHART,
    work_dir: Path = CACHE_DIR,
    embedder: Any = None,
    check: bool = True,
    what_if: bool = True,
) -> dict[str, Any]:
    """Run the month; returns its headline figures. `work_dir` holds the embedding cache and both
    Qdrant folders; `embedder` (default: the configured model) embeds what the cache lacks; `check=False`
    skips the bench-database name guard (for a test database, which its suite truncates anyway)."""
    from pipeline.core.logging import configure_logging

    configure_logging("WARNING", settings.log_json)
    started = time.perf_counter()
    load0 = os.getloadavg()[0]
    locomo, questions = locomo_data.load(data)
    traffic = generate(locomo, days=days, turns_per_day=turns_per_day, seed=seed)
    ids = {t.turn_id for t in traffic.turns}
    asked = evaluable(questions, ids)
    sample = random.Random(seed).sample(asked, min(SAMPLE_QUERIES, len(asked))) if asked else []

    work_dir.mkdir(parents=True, exist_ok=True)
    # Two runs at once would wipe each other's Qdrant folders and tables.
    with _exclusive(work_dir / "month.lock"):
        cache = VectorCache(settings, work_dir, embedder)
        texts = [t.content for t in traffic.turns] + [q.text for q in asked]
        t0 = time.perf_counter()
        embedded = cache.ensure(texts)
        console.print(
            f"traffic: {len(traffic.turns):,} turns over {days} days for {len(traffic.users)} users; "
            f"{len(set(texts)):,} distinct texts, {embedded:,} embedded now ({time.perf_counter() - t0:.0f} s), "
            "the rest from the cache",
            highlight=False,
        )
        embedder = CachedEmbedder(cache)
        horizon = T0 + timedelta(days=days + 2)
        review = open_side("review", review_database_url, settings, work_dir=work_dir, check=check)
        raw = open_side("raw", raw_database_url, settings, work_dir=work_dir, check=check)
        reviewed = ReviewedStore(review, settings, embedder, redis_url, horizon)
        result = MonthResult(kinds=traffic.kinds(), preference_changes=len(traffic.preference_changes))
        try:
            for day in range(days):
                result.days.append(
                    _one_day(day, traffic, reviewed, raw, cache, embedder, settings, sample, console)
                )
            end = T0 + timedelta(days=days)
            console.print(f"LoCoMo recall@10 over {len(asked):,} questions, both sides …", highlight=False)
            result.questions = len(asked)
            result.review_r10 = _recall_at_10(make_recaller(review, embedder), asked, end)
            result.raw_r10 = _recall_at_10(make_recaller(raw, embedder), asked, end)
            for exponent in (e for e in DECAY_EXPONENTS if e != DEFAULT_TUNING.decay_exponent):
                tuning = replace(DEFAULT_TUNING, decay_exponent=exponent)
                result.by_decay_exponent[exponent] = _recall_at_10(
                    make_recaller(review, embedder, tuning), asked, end
                )
            result.breakdown = review.breakdown({t.turn_id: t.kind for t in traffic.turns})
            result.batches, result.review_s = reviewed.batches, reviewed.review_s
            result.ceiling, result.evidence = review.evidence_hot(asked)
            if what_if:
                console.print("what if folded episodes went cold: asking again …", highlight=False)
                result.folded_cold = what_if_folded_cold(review, embedder, asked, end, settings)
        finally:
            reviewed.close()
            review.close()
            raw.close()
    result.embedded, result.texts = cache.embedded, len(set(texts))
    result.seconds = time.perf_counter() - started
    result.loads = (load0, os.getloadavg()[0])
    report(result, console)
    if write:
        if chart is not None:
            draw_chart(result, chart)
        write_section("month", "\n".join(section_lines(result, traffic)))
    return result.figures()


def _one_day(
    day: int,
    traffic: Traffic,
    reviewed: ReviewedStore,
    raw: Side,
    cache: VectorCache,
    embedder: CachedEmbedder,
    settings: Settings,
    sample: Sequence[Question],
    console: Console,
) -> Day:
    turns = traffic.day(day)
    for start in range(0, len(turns), TICK_TURNS):
        reviewed.ingest(turns[start : start + TICK_TURNS])
    day_end = T0 + timedelta(days=day + 1) - timedelta(seconds=1)
    decay = reviewed.end_day(day_end)
    store_raw(raw, turns, cache, settings)
    for side in (reviewed.side, raw):
        side.analyze()
    episodes, semantic = reviewed.side.active()
    raw_episodes, _ = raw.active()
    r50, r95 = latencies(make_recaller(reviewed.side, embedder), sample, day_end)
    w50, w95 = latencies(make_recaller(raw, embedder), sample, day_end)
    d = Day(
        day + 1,
        len(turns),
        episodes,
        semantic,
        raw_episodes,
        r50,
        r95,
        w50,
        w95,
        decay.went_cold,
        os.getloadavg()[0],
    )
    console.print(
        f"day {d.day:>2}: active {d.review_active:,} (episodes {episodes:,} + semantic {semantic:,}) vs raw "
        f"{d.raw_active:,}; recall p50/p95 {r50:.0f}/{r95:.0f} ms vs raw {w50:.0f}/{w95:.0f} ms; "
        f"decay sent {d.went_cold:,} cold; load {d.load:.1f}",
        highlight=False,
    )
    return d


def _recall_at_10(
    ask: Callable[[Question, datetime], list[tuple[str, ...]]], questions: Sequence[Question], now: datetime
) -> float:
    score = Score()
    for q in questions:
        score.add(ask(q, now), q.evidence)
    return score.at10


# -- output ------------------------------------------------------------------------------------------


def shown_days(days: Sequence[Day]) -> list[Day]:
    """Every day of a short run; every third day (and the last) of a long one."""
    if len(days) <= 10:
        return list(days)
    return [d for d in days if d.day % 3 == 0 or d.day == 1 or d.day == len(days)]


HEADERS = (
    "day",
    "turns so far",
    "active, review",
    "(episodes + semantic)",
    "active, raw",
    "review ÷ raw",
    "recall p50 / p95 ms, review",
    "recall p50 / p95 ms, raw",
)


def day_cells(d: Day, turns_so_far: int) -> list[str]:
    return [
        str(d.day),
        f"{turns_so_far:,}",
        f"{d.review_active:,}",
        f"{d.review_episodes:,} + {d.review_semantic:,}",
        f"{d.raw_active:,}",
        f"{d.review_active / d.raw_active:.2f}" if d.raw_active else "—",
        f"{d.review_p50:.0f} / {d.review_p95:.0f}",
        f"{d.raw_p50:.0f} / {d.raw_p95:.0f}",
    ]


def table_rows(r: MonthResult) -> list[list[str]]:
    so_far = {}
    total = 0
    for d in r.days:
        total += d.turns
        so_far[d.day] = total
    return [day_cells(d, so_far[d.day]) for d in shown_days(r.days)]


def verdict_lines(r: MonthResult) -> list[str]:
    active_ok = r.final_active <= ACTIVE_TARGET
    ratio_ok = r.ratio >= RATIO_TARGET
    last = r.days[-1] if r.days else None
    raw_active = last.raw_active if last else 0
    what_if = []
    if r.folded_cold is not None and r.raw_r10:
        active, r10 = r.folded_cold
        what_if = [
            f"What if episodes folded into a semantic memory went cold (found only through the summary; "
            f"measured on the final state): active **{active:,}**, recall@10 **{r10:.3f}**, ratio "
            f"**{r10 / r.raw_r10:.3f}**."
        ]
    if r.by_decay_exponent and r.raw_r10:
        pairs = ", ".join(
            f"decay^{e:g}: {r10:.3f} (ratio {r10 / r.raw_r10:.3f})" for e, r10 in r.by_decay_exponent.items()
        )
        what_if.append(
            f"The review side's recall@10 with decay counted otherwise in the ranking (a memory ranks with "
            f"base_weight x decay^e; default e = {DEFAULT_TUNING.decay_exponent:g}; 1 is DESIGN §2's "
            f"relevance x weight): {pairs}."
        )
    return [
        f"Active memories after {len(r.days)} days: **{r.final_active:,} with review vs {raw_active:,} raw** "
        f"(target ≤ {ACTIVE_TARGET:,}: {'met' if active_ok else '**missed**'}).",
        f"LoCoMo evidence recall@10 over {r.questions:,} questions: review **{r.review_r10:.3f}** vs raw "
        f"**{r.raw_r10:.3f}**, ratio **{r.ratio:.3f}** (target ≥ {RATIO_TARGET}: {'met' if ratio_ok else '**missed**'}).",
        f"Ceiling: on the review side, on average {r.ceiling:.3f} of a question's evidence turns are still hot "
        "(the rest went cold, by quality or decay: cold memories are not recalled by default).",
        *evidence_budget_lines(r),
        *what_if,
    ]


def evidence_budget_lines(r: MonthResult) -> list[str]:
    """What the active target leaves for turns no question asks about, if every turn stays its own unit."""
    distinct, hot, hot_episodes = r.evidence
    if not distinct:
        return []
    return [
        f"The {r.questions:,} questions cite {distinct:,} distinct turns; {hot:,} of them are among the review "
        f"side's {hot_episodes:,} hot episodes. Kept as episodes, the questions' evidence alone is "
        f"{distinct / ACTIVE_TARGET:.0%} of the {ACTIVE_TARGET:,} target, which leaves "
        f"{max(ACTIVE_TARGET - distinct, 0):,} for every other kept turn and memory of the month: review cannot "
        "know which turns will be asked about, so the target needs the evidence folded into fewer recall units "
        "(the what-if below is the summary-only form of that)."
    ]


def report(r: MonthResult, console: Console) -> None:
    table = Table(*HEADERS, title=f"simulated month: {len(r.days)} days")
    for cells in table_rows(r):
        table.add_row(*cells)
    console.print(table)
    for line in verdict_lines(r):
        console.print(line.replace("**", ""), highlight=False)
    states = breakdown_states(r)
    kinds = Table("turns of kind", *states, title="where the review side's episodes went")
    for cells in breakdown_rows(r, states):
        kinds.add_row(*cells)
    console.print(kinds)
    console.print(
        f"{r.batches:,} review batches in {r.review_s:.0f} s; whole run {r.seconds:.0f} s; "
        f"load average {r.loads[0]:.1f} at the start, {r.loads[1]:.1f} at the end (2 cores, shared)",
        highlight=False,
    )


def breakdown_states(r: MonthResult) -> list[str]:
    order = ["hot", "hot, folded", "cold (quality)", "cold (decay)", "merged"]
    seen = {state for per in r.breakdown.values() for state in per}
    return [s for s in order if s in seen] + sorted(seen - set(order))


def breakdown_rows(r: MonthResult, states: Sequence[str]) -> list[list[str]]:
    totals: dict[str, int] = {}
    out = []
    for kind in sorted(r.breakdown, key=lambda k: -sum(r.breakdown[k].values())):
        per = r.breakdown[kind]
        for state, n in per.items():
            totals[state] = totals.get(state, 0) + n
        out.append([kind, *(f"{per.get(state, 0):,}" for state in states)])
    out.append(["all", *(f"{totals.get(state, 0):,}" for state in states)])
    return out


def section_lines(r: MonthResult, traffic: Traffic) -> list[str]:
    kinds = ", ".join(f"{k} {v:,}" for k, v in r.kinds.items())
    lines = [
        "## A simulated month: `hindsight bench month`",
        "",
        f"One agent, {len(traffic.users)} users (one per LoCoMo conversation, the scope its questions are asked "
        f"in), {traffic.turns_per_day:,} turns a day for {len(r.days)} simulated days: {kinds} "
        f"({r.preference_changes} preference changes). Review side: the real scheduler policy, `review_batch` "
        "and `run_decay` in-process on a simulated clock (decay at the end of each day), the outbox drained "
        "into Qdrant's in-process engine. Raw side: the same turns with the same vectors stored as kept "
        "episodes, indexed the same way, never reviewed or decayed. Active = kept episodes + open kept "
        "semantic memories. Recall latency: the recall use case (hybrid, as `GET /v1/recall`, query vectors "
        f"from the cache) over the same {SAMPLE_QUERIES} LoCoMo questions each day. Recall@10: every LoCoMo "
        "question whose evidence went in; k counts distinct source turns, as in `bench locomo`.",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(r)]
    lines += [
        "",
        *verdict_lines(r),
        "",
        "Where the review side's episodes went, by kind of turn (hot = kept and recallable; folded = member "
        "of a semantic memory, weight lowered; merged = a near-duplicate folded into a newer episode):",
        "",
        "| turns of kind | " + " | ".join(breakdown_states(r)) + " |",
        "|---|" + "---:|" * len(breakdown_states(r)),
        *("| " + " | ".join(cells) + " |" for cells in breakdown_rows(r, breakdown_states(r))),
        "",
        "![active memories and recall p95 per day](docs/bench/month.png)",
        "",
        f"{r.batches:,} review batches took {r.review_s:.0f} s; the whole run {r.seconds:.0f} s "
        f"({r.texts:,} distinct texts, {r.embedded:,} embedded in this run, the rest from the cache). "
        f"1-minute load average {r.loads[0]:.1f} at the start, {r.loads[1]:.1f} at the end (2 cores shared "
        "with other work).",
    ]
    return lines


def draw_chart(r: MonthResult, path: Path) -> None:
    plt = charts.pyplot()
    days = [d.day for d in r.days]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    top.plot(days, [d.raw_active for d in r.days], label="raw (no review)", color="tab:gray")
    top.plot(days, [d.review_active for d in r.days], label="review + decay", color="tab:blue")
    top.axhline(ACTIVE_TARGET, color="tab:red", linestyle=":", label=f"target {ACTIVE_TARGET:,}")
    top.set_ylabel("active (hot) memories")
    top.legend()
    bottom.plot(days, [d.raw_p95 for d in r.days], label="raw p95", color="tab:gray")
    bottom.plot(days, [d.review_p95 for d in r.days], label="review p95", color="tab:blue")
    bottom.plot(days, [d.review_p50 for d in r.days], label="review p50", color="tab:blue", linestyle="--")
    bottom.set_ylabel("recall latency, ms")
    bottom.set_xlabel("simulated day")
    bottom.legend()
    fig.suptitle("hindsight bench month")
    charts.save(fig, path)


__all__ = ["run_month_bench"]
