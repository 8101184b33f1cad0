"""`hindsight bench review`: what a review costs, each figure side by side with its baseline in one run.

1. A full review of a scope of `episodes` kept, embedded episodes: the consolidation path (load, cluster,
   plan, summarise) against 5 s, plus two whole `review_batch` runs of a 30-episode tail.
2. One light batch of 100 turns against 100 light batches of one, with and without the embedding
   (target ratio <= 0.10), next to the raw embedder's own 1x100 / 100x1 ratio (the floor of the first).
3. End to end: a real scheduler thread and one real worker process review `turns` LoCoMo turns; turns/s
   over the raw embedder's sentences/s on the same texts, one torch thread each (target >= 0.80).

Everything runs against a disposable database and Redis db (`hindsight_bench`, db 12 by default) that
are wiped before each part. Texts come from the LoCoMo conversations, read where they lie; their
embeddings are cached under .hindsight/bench-cache/ so reruns skip the 10k-sentence embedding.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import redis
from rich.console import Console
from rich.table import Table
from sqlalchemy import Engine, insert, text
from sqlalchemy.engine import make_url

from bench.report import write_section
from pipeline.adapters.embedder import SentenceTransformerEmbedder
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import batches
from pipeline.core.config import MINILM_MODEL, Settings
from pipeline.core.errors import ConfigError
from pipeline.core.logging import configure_logging
from pipeline.core.models import DEFAULT_SOURCE, PRIORITY_BY_SOURCE, Dispatch, Scope, Turn
from pipeline.core.ports import Embedder, Vector
from pipeline.core.review_records import BatchEpisode, BatchInfo
from pipeline.ingest.validation import encode_event, utcnow
from pipeline.review import clustering, consolidation, summarise
from pipeline.review.review_batch import ReviewConfig, review_batch

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO_ROOT / ".hindsight" / "bench-cache"
BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/12"
TABLES = "embedding_model, reindex_job, reindex_vectors, supersessions, reviews, agent_insight_members, semantic_members, semantic_memories, facts, index_outbox, memory_audit, episodes, batches, sessions"

AGENT = "bench-agent"
TAIL = 30  # the policy's batch trigger: a full review comes with 30 new turns
BATCH_N = 100  # part 2: one batch of this many against this many batches of one
BATCH_ROUNDS = 2  # part 2 runs each comparison this often, alternating which side goes first
E2E_SCOPES = 10  # part 3: one scope per LoCoMo conversation
E2E_TRIGGER = 30
WARM_USER = "warm-up"  # part 3's first batch, reviewed before the clock starts
PUSH_CHUNK = 500
# Part 3 checks this often whether every turn is reviewed. The finish time comes from the last review's
# NOTIFY, so a slow poll costs no precision, and each poll is CPU taken from the pipeline it measures.
POLL_S = 2.0
T0 = datetime(2023, 1, 1, tzinfo=UTC)  # event time of the first synthetic turn; one minute per turn after

FULL_TARGET_MS = 5000.0
BATCH_TARGET = 0.10
E2E_TARGET = 0.80
STAGES = ("load", "embed", "screen", "dedup", "score", "cluster", "summarise", "write")
LIGHT_STAGES = (
    "load",
    "embed",
    "screen",
    "dedup",
    "score",
    "write",
)  # a light review neither clusters nor summarises
PATH_RUNS = 2  # part 1 times the consolidation path this often and reports the fastest run
EMBEDDING_DIM = 384  # all-MiniLM-L6-v2; only says which clustering path a count of points takes


# -- the texts ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Utterance:
    conversation: str  # LoCoMo sample_id: one user (scope) per conversation
    session: str  # "session_3"; "notes" for LoCoMo's annotations
    role: str  # speaker_a is the user, speaker_b (and the annotations) the assistant
    content: str


@dataclass(frozen=True)
class Corpus:
    turns: tuple[Utterance, ...]  # every conversation turn, conversation by conversation, in session order
    notes: tuple[Utterance, ...]  # observation and session-summary sentences (generated annotations)

    def by_conversation(self) -> list[list[Utterance]]:
        groups: dict[str, list[Utterance]] = {}
        for u in self.turns:
            groups.setdefault(u.conversation, []).append(u)
        return list(groups.values())


_SESSION = re.compile(r"session_(\d+)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
VARIATIONS = ("Like I said, ", "Again: ", "To repeat, ", "Once more: ")


def parse_locomo(data: list[dict[str, Any]]) -> Corpus:
    turns: list[Utterance] = []
    notes: list[Utterance] = []
    for sample in data:
        conv, sid = sample["conversation"], str(sample["sample_id"])
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := _SESSION.fullmatch(key)) and isinstance(conv[key], list)
        )
        for _, key in sessions:
            for turn in conv[key]:
                content = str(turn.get("text", "")).strip()
                if content:
                    role = "user" if turn.get("speaker") == conv.get("speaker_a") else "assistant"
                    turns.append(Utterance(sid, key, role, content))
        for per_speaker in (sample.get("observation") or {}).values():
            for items in per_speaker.values():
                notes.extend(
                    Utterance(sid, "notes", "assistant", str(item[0]).strip()) for item in items if item
                )
        for summary in (sample.get("session_summary") or {}).values():
            notes.extend(
                Utterance(sid, "notes", "assistant", s.strip())
                for s in _SENTENCE_END.split(str(summary))
                if s.strip()
            )
    return Corpus(tuple(turns), tuple(u for u in notes if u.content))


def load_locomo(path: Path) -> Corpus:
    if not path.exists():
        raise ConfigError(f"LoCoMo data not found at {path}: pass --data PATH to locomo10.json")
    corpus = parse_locomo(json.loads(path.read_text()))
    if not corpus.turns:
        raise ConfigError(f"{path} holds no LoCoMo conversation turns")
    return corpus


def fill(corpus: Corpus, n: int) -> tuple[list[Utterance], str]:
    """n texts: every turn first, then the annotation sentences, then turns again with a light variation
    (a spoken-style prefix, so no two texts are identical). Also says which of these it took."""
    out = list(corpus.turns[:n])
    parts = [f"{len(out):,} LoCoMo turns"]
    if len(out) < n:
        notes = list(corpus.notes[: n - len(out)])
        out += notes
        parts.append(f"{len(notes):,} observation/session-summary sentences")
    repeated = 0
    while len(out) < n:
        prefix = VARIATIONS[(repeated // len(corpus.turns)) % len(VARIATIONS)]
        base = corpus.turns[repeated % len(corpus.turns)]
        out.append(Utterance(base.conversation, base.session, base.role, prefix + base.content))
        repeated += 1
    if repeated:
        parts.append(f"{repeated:,} turns repeated with a prefix such as {VARIATIONS[0]!r}")
    return out, " + ".join(parts)


def round_robin(groups: Sequence[Sequence[T]], n: int) -> list[T]:
    """Up to n items taken one from each group in turn, as turns of many users arrive at once."""
    out: list[T] = []
    for i in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if i < len(g):
                out.append(g[i])
                if len(out) == n:
                    return out
    return out


# -- embeddings --------------------------------------------------------------------------------------


def cached_embeddings(texts: Sequence[str], embedder: Embedder, settings: Settings) -> tuple[Vector, bool]:
    """(vectors, every one came from the cache): `bench.vector_cache` under the configured embedder's name;
    what it lacks is embedded on every core (one-off and untimed)."""
    from bench.vector_cache import cached_vectors, embedder_name

    def embed(missing: list[str]) -> Vector:
        with torch_threads(os.cpu_count() or 1):
            return embedder.embed(missing)

    got = cached_vectors(texts, embed, embedder_name(settings))
    return got.vectors, got.embedded == 0


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Torch's intra-op threads set to `n` for the block, when torch is in use. Not imported otherwise: an onnx
    embedder never loads it, and importing it only to set its threads costs ~8 s and ~500 MB."""
    if "torch" not in sys.modules:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def raw_embed_s(embedder: SentenceTransformerEmbedder, texts: Sequence[str], batch: int) -> float:
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start : start + batch])
    return time.perf_counter() - t0


# -- the disposable store ------------------------------------------------------------------------------


def check_disposable(database_url: str, redis_url: str, settings: Settings) -> None:
    """The bench wipes its database and Redis db: never let it point at the pipeline's own."""
    db = make_url(database_url).database or ""
    if "bench" not in db:
        raise ConfigError(
            f"the review bench truncates its database; {db!r} does not look like a bench database"
        )
    if redis_url == settings.broker_url and "bench" not in (make_url(settings.db_url).database or ""):
        raise ConfigError(f"the review bench flushes {redis_url}, which is the configured pipeline's broker")


@dataclass
class Bench:
    settings: Settings  # with the bench database and Redis
    engine: Engine
    repo: Repository
    redis: redis.Redis
    embedder: SentenceTransformerEmbedder
    config: ReviewConfig
    console: Console

    def reset(self) -> None:
        """Each part starts from empty tables and an empty Redis db, so parts cannot interfere."""
        with self.engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        self.redis.flushdb()

    def review(self, batch_id: int) -> tuple[float, dict[str, float]]:
        """(wall ms, the review's own stage timings) of one in-process review, rules only."""
        t0 = time.perf_counter()
        report = review_batch(
            batch_id, repo=self.repo, embedder=self.embedder, clock=utcnow, config=self.config, worker="bench"
        )
        wall = (time.perf_counter() - t0) * 1000
        if report is None or not report.applied:
            raise RuntimeError(f"batch {batch_id} was not reviewed")
        return wall, report.timings_ms

    def claim(self, scope: Scope, kind: str, *, limit: int) -> int:
        d = Dispatch(scope, "full" if kind == "full" else "light", "manual")
        batch_id = self.repo.claim(d, min_count=1, limit=limit)
        if batch_id is None:
            raise RuntimeError(f"nothing to claim in {scope}")
        return batch_id


def copy_episodes(
    engine: Engine,
    scope: Scope,
    items: Sequence[Utterance],
    *,
    prefix: str,
    first_minute: int,
    status: str = "pending",
    vectors: Vector | None = None,
    full_batch_id: int | None = None,
) -> None:
    """Bulk-load episodes with COPY (10k rows in about a second; an INSERT per row would take a minute)."""
    from psycopg.types.json import Jsonb

    kept = status == "kept"
    columns = (
        "turn_id, agent_id, user_id, session_id, role, content, ts, source, metadata, priority, status, "
        "quality, embedding, reviewed_at, full_batch_id"
    )
    raw = engine.raw_connection()
    try:
        conn = cast(Any, raw.driver_connection)
        with conn.cursor() as cur, cur.copy(f"COPY episodes ({columns}) FROM STDIN") as copy:
            for i, u in enumerate(items):
                ts = T0 + timedelta(minutes=first_minute + i)
                source = DEFAULT_SOURCE[u.role]
                copy.write_row(
                    (
                        f"{prefix}-{i}",
                        scope.agent_id,
                        scope.user_id,
                        f"{u.conversation}-{u.session}",
                        u.role,
                        u.content,
                        ts,
                        source,
                        Jsonb({}),
                        PRIORITY_BY_SOURCE[source],
                        status,
                        Jsonb({"total": 0.6, "why": "bench"}) if kept else None,
                        None if vectors is None else np.asarray(vectors[i], dtype="<f4").tobytes(),
                        ts if kept else None,
                        full_batch_id,
                    )
                )
        raw.commit()
    finally:
        raw.close()


def _done_batch(engine: Engine, scope: Scope, episodes: int) -> int:
    """The full review the stored history went through (its episodes are no longer pending)."""
    with engine.begin() as conn:
        return int(
            conn.execute(
                insert(batches)
                .values(
                    agent_id=scope.agent_id,
                    user_id=scope.user_id,
                    kind="full",
                    trigger="batch_size",
                    status="done",
                    episode_count=episodes,
                )
                .returning(batches.c.id)
            ).scalar_one()
        )


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# -- part 1: a full review of a big scope -------------------------------------------------------------


@dataclass
class FullResult:
    episodes: int
    texts_note: str
    from_cache: bool
    embed_cache_s: float
    points: int = 0
    steps_ms: dict[str, float] = field(default_factory=dict)  # load, cluster, plan, summarise
    clusters: int = 0
    memories: int = 0
    reviews: list[tuple[str, float, dict[str, float], dict[str, int]]] = field(default_factory=list)
    cluster_params: clustering.ClusterParams = field(default_factory=clustering.ClusterParams)
    other_totals_ms: list[float] = field(default_factory=list)  # the slower runs of the path

    @property
    def total_ms(self) -> float:
        return sum(self.steps_ms.values())


def consolidation_path(
    repo: Repository,
    batch: BatchInfo,
    tail: Sequence[BatchEpisode],
    vectors: dict[int, Vector],
    config: ReviewConfig,
) -> tuple[dict[str, float], int, int, int]:
    """The steps `review._consolidate` takes, timed one by one: (ms per step, points, clusters, memories).

    The batch's episodes count as kept with their (cached) vectors, as after scoring; nothing is written.
    "load" is the review's one read of the scope (`Repository.review_inputs`), which also serves dedup.
    """
    t0 = time.perf_counter()
    inputs = repo.review_inputs(
        batch, memory_limit=config.scope_memory_limit, cluster_limit=config.cluster_limit
    )
    batch_points = [
        consolidation.Point(ep.id, (ep.turn_id,), ep.content, ep.ts, vectors[ep.id], 0.5) for ep in tail
    ]
    points = batch_points + inputs.points[: max(config.cluster_limit - len(batch_points), 0)]
    facts = {state.key: (state, set(turn_ids)) for state, turn_ids in inputs.fact_groups}
    open_memories = inputs.open_memories
    steps = {"load": _ms(t0)}

    t1 = time.perf_counter()
    matrix = np.stack([p.vector for p in points])
    groups = consolidation.fact_groups(points, facts)
    grouped = {i for _, g in groups for i in g}
    rest = [i for i in range(len(points)) if i not in grouped]
    found, _ = clustering.cluster(matrix[rest], config.cluster) if len(rest) >= 2 else ([], rest)
    clusters = [list(g) for _, g in groups] + [[rest[i] for i in c.members] for c in found]
    ordered = [[c[i] for i in clustering.central_order(matrix[c])] for c in clusters]
    steps["cluster"] = _ms(t1)

    t2 = time.perf_counter()
    plan = consolidation.plan(points, ordered, open_memories, match_cosine=config.match_cosine)
    steps["plan"] = _ms(t2)

    t3 = time.perf_counter()
    by_id = {p.episode_id: p for p in points}
    for memory in plan.memories:
        texts = [by_id[i].content for i in memory.members]
        summarise.extractive_summary(texts, list(range(len(texts))))
    steps["summarise"] = _ms(t3)
    return steps, len(points), len(clusters), len(plan.memories)


def _warm_up_clustering(config: ReviewConfig) -> None:
    """A worker is long-lived: its first review pays for importing scikit-learn, the bench should not."""
    from sklearn.decomposition import PCA  # noqa: F401  (the import is the point)

    rng = np.random.default_rng(0)
    clustering.cluster(rng.standard_normal((200, 384)).astype(np.float32), config.cluster)


def run_full(b: Bench, corpus: Corpus, episodes: int) -> FullResult:
    b.reset()
    texts, note = fill(corpus, episodes + 2 * TAIL)
    t0 = time.perf_counter()
    vectors, from_cache = cached_embeddings([u.content for u in texts], b.embedder, b.settings)
    result = FullResult(episodes, note, from_cache, time.perf_counter() - t0, cluster_params=b.config.cluster)
    # The two tails are the newest turns. With the history they make a scope of exactly `episodes` at the
    # first full review, and `episodes` + 30 at the next one, past cluster_limit as any scope that keeps
    # growing. (The pool holds `episodes` + 60 texts so that part 2 can share its cache.)
    tails, history = texts[: 2 * TAIL], texts[2 * TAIL : episodes + TAIL]
    scope = Scope(AGENT, "full-scope")
    done = _done_batch(b.engine, scope, len(history))
    copy_episodes(
        b.engine,
        scope,
        history,
        prefix="hist",
        first_minute=0,
        status="kept",
        vectors=vectors[2 * TAIL : episodes + TAIL],
        full_batch_id=done,
    )
    copy_episodes(b.engine, scope, tails[:TAIL], prefix="tail1", first_minute=len(history))
    with b.engine.begin() as conn:
        conn.execute(text("ANALYZE episodes"))  # autovacuum would have; fresh COPYs leave no statistics
    _warm_up_clustering(b.config)

    batch_id = b.claim(scope, "full", limit=TAIL)
    batch = BatchInfo(batch_id, scope.agent_id, scope.user_id, None, "full", "manual", "pending", 0)
    tail = b.repo.batch_episodes(batch)
    # "tail1-<i>" is texts[i]: the review would embed these 30 itself; the cache stands in for that here.
    cached = {ep.id: vectors[int(ep.turn_id.rsplit("-", 1)[1])] for ep in tail}
    # Read-only, so it runs twice: other load on the machine only ever adds time, the faster run is the cost.
    runs = [consolidation_path(b.repo, batch, tail, cached, b.config) for _ in range(PATH_RUNS)]
    runs.sort(key=lambda run: sum(run[0].values()))
    result.steps_ms, result.points, result.clusters, result.memories = runs[0]
    result.other_totals_ms = [sum(run[0].values()) for run in runs[1:]]
    wall, timings = b.review(batch_id)
    result.reviews.append(
        (f"first, {episodes:,} in scope", wall, timings, _review_counts(b.engine, batch_id))
    )

    # Steady state: the scope's memories exist now; 30 more turns arrive and the next full review runs.
    copy_episodes(b.engine, scope, tails[TAIL:], prefix="tail2", first_minute=len(history) + TAIL)
    batch_id = b.claim(scope, "full", limit=TAIL)
    wall, timings = b.review(batch_id)
    result.reviews.append(
        (
            f"next, {episodes + TAIL:,} in scope, memories open",
            wall,
            timings,
            _review_counts(b.engine, batch_id),
        )
    )
    return result


def _review_counts(engine: Engine, batch_id: int) -> dict[str, int]:
    with engine.connect() as conn:
        counts = conn.execute(
            text("SELECT counts FROM reviews WHERE batch_id = :b"), {"b": batch_id}
        ).scalar_one()
    return {k: int(v) for k, v in counts.items()}


# -- part 2: one batch of 100 against 100 batches of one --------------------------------------------


@dataclass
class Side:
    wall_ms: float = 0.0
    stages_ms: dict[str, float] = field(default_factory=dict)

    def add(self, wall: float, timings: dict[str, float]) -> None:
        self.wall_ms += wall
        for k, v in timings.items():
            self.stages_ms[k] = self.stages_ms.get(k, 0.0) + v

    @property
    def other_ms(self) -> float:
        """Bookkeeping outside the named stages (start_batch, the report)."""
        return self.wall_ms - sum(self.stages_ms.values())


@dataclass
class BatchingResult:
    n: int
    rounds: int
    raw_one_ms: float = 0.0  # the raw embedder, 1 call of n sentences
    raw_each_ms: float = 0.0  # n calls of 1 sentence
    # Inside the model, per side ("one": as `embed` batches n sentences, "each": n × 1), summed over rounds.
    model_split: dict[str, ModelSplit] = field(default_factory=dict)
    sides: dict[tuple[bool, str], Side] = field(default_factory=dict)  # (pre-stored, "batch"|"single")

    def ratio(self, prestored: bool) -> float:
        return self.sides[(prestored, "batch")].wall_ms / self.sides[(prestored, "single")].wall_ms

    @property
    def raw_ratio(self) -> float:
        return self.raw_one_ms / self.raw_each_ms


@dataclass
class ModelSplit:
    tokenize_ms: float = 0.0
    forward_ms: float = 0.0  # the transformer, pooling and normalisation
    tokens: int = 0  # what the forward passes computed, padding included

    def add(self, other: ModelSplit) -> None:
        self.tokenize_ms += other.tokenize_ms
        self.forward_ms += other.forward_ms
        self.tokens += other.tokens


def model_split(embedder: SentenceTransformerEmbedder, groups: Sequence[Sequence[str]]) -> ModelSplit:
    """Tokenizer against forward pass, one call per group: what a call of the model costs beyond its tokens."""
    import torch

    model = cast(Any, embedder.model())
    out = ModelSplit()
    for group in groups:
        t0 = time.perf_counter()
        features = model.preprocess(list(group))
        t1 = time.perf_counter()
        with torch.inference_mode():
            model.forward(features)
        out.tokenize_ms += (t1 - t0) * 1000
        out.forward_ms += _ms(t1)
        out.tokens += int(features["input_ids"].numel())
    return out


def embed_groups(texts: Sequence[str], batch_size: int) -> list[list[str]]:
    """The groups sentence-transformers' `encode` runs: longest first, `batch_size` at a time."""
    ordered = sorted(texts, key=lambda t: -len(t))
    return [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]


def run_batching(b: Bench, corpus: Corpus, episodes: int, rounds: int = BATCH_ROUNDS) -> BatchingResult:
    b.reset()
    texts, _ = fill(corpus, episodes + 2 * TAIL)
    vectors, _ = cached_embeddings([u.content for u in texts], b.embedder, b.settings)
    # The same 100 texts on both sides, with the vectors the cache holds for them.
    items, item_vectors = texts[2 * TAIL : 2 * TAIL + BATCH_N], vectors[2 * TAIL : 2 * TAIL + BATCH_N]
    result = BatchingResult(len(items), rounds)
    sentences = [u.content for u in items]
    b.embedder.embed(sentences[:10])  # the first call after loading is slow; neither side should pay it
    for r in range(rounds):
        t0 = time.perf_counter()
        b.embedder.embed(sentences)
        result.raw_one_ms += _ms(t0)
        t0 = time.perf_counter()
        for s in sentences:
            b.embedder.embed([s])
        result.raw_each_ms += _ms(t0)
        groups = {
            "one": embed_groups(sentences, b.settings.embedding.batch_size),
            "each": [[s] for s in sentences],
        }
        for side, side_groups in groups.items():
            result.model_split.setdefault(side, ModelSplit()).add(model_split(b.embedder, side_groups))
        for prestored in (False, True):
            order = ("batch", "single") if r % 2 == 0 else ("single", "batch")
            for side in order:
                scope = Scope(AGENT, f"{side}-{'stored' if prestored else 'embed'}-{r}")
                copy_episodes(
                    b.engine,
                    scope,
                    items,
                    prefix=f"{scope.user_id}",
                    first_minute=0,
                    vectors=item_vectors if prestored else None,
                )
                timed = result.sides.setdefault((prestored, side), Side())
                if side == "batch":
                    timed.add(*b.review(b.claim(scope, "light", limit=len(items))))
                else:
                    # Claims are the scheduler's work, done before any review here: only reviews are timed.
                    for batch_id in [b.claim(scope, "light", limit=1) for _ in items]:
                        timed.add(*b.review(batch_id))
    return result


# -- part 3: end to end through a real scheduler and worker -------------------------------------------


@dataclass
class E2EResult:
    turns: int
    scopes: int
    elapsed_s: float = 0.0
    raw_s: float = 0.0
    raw_halves_s: tuple[float, float] = (0.0, 0.0)
    reviews: dict[str, int] = field(default_factory=dict)  # kind -> count
    mean_batch: float = 0.0
    task_s: float = 0.0  # the worker's Celery tasks, summed: how long it was busy
    stages_ms: dict[str, float] = field(default_factory=dict)  # the reviews' own stages, summed
    worker_peak_rss_mb: float = 0.0  # the worker process's high-water mark (VmHWM)

    @property
    def review_ms(self) -> float:
        return sum(self.stages_ms.values())

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.elapsed_s

    @property
    def raw_per_s(self) -> float:
        return self.turns / self.raw_s

    @property
    def ratio(self) -> float:
        return self.turns_per_s / self.raw_per_s

    @property
    def same_load_ratio(self) -> float:
        """Turns/s over the worker's own embedding rate: both taken in the same seconds on the same CPU, so
        other load on the machine cancels out. What is left is the pipeline's own overhead."""
        embed_s = self.stages_ms.get("embed", 0.0) / 1000
        return embed_s / self.elapsed_s if self.elapsed_s else 0.0


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGTERM when the bench that started it dies. A worker left behind by
    a killed bench consumed the next bench's tasks from the shared Redis db against its own database and
    skipped them as unknown batches (seen once: a set's review never started)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


@dataclass
class WorkerProcess:
    """One real `hindsight worker` (Celery, solo pool), as tests/integration/harness.py starts it."""

    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 180.0) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pipeline.cli", "worker", "--loglevel=INFO"],
                env={**os.environ, **self.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so stop() reaches Celery's children too
                cwd=REPO_ROOT,
                preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + timeout
        while " ready." not in self.log_path.read_text(errors="replace"):
            self.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker was not ready after {timeout:.0f}s; see {self.log_path}")
            time.sleep(0.25)

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the worker exited with {self.process.returncode}:\n{tail}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


def _turn(u: Utterance, turn_id: str, minute: int, *, user: str | None = None) -> Turn:
    ts = T0 + timedelta(minutes=minute)
    return Turn(
        turn_id, AGENT, user or u.conversation, u.session, u.role, u.content, ts, DEFAULT_SOURCE[u.role]
    )


def _start_scheduler(b: Bench) -> tuple[Any, threading.Thread]:
    from pipeline.adapters.redis_stream import TurnStream, connect
    from scheduler.runner import RunnerConfig, SchedulerRunner
    from tasks.app import REVIEW_TASK, create_app

    celery_app = create_app(b.settings)
    runner = SchedulerRunner(
        repo=b.repo,
        stream=TurnStream(connect(b.settings.broker_url), b.settings.stream_turns, b.settings.stream_dead),
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id]),
        config=RunnerConfig(
            group=b.settings.scheduler_group,
            read_count=b.settings.scheduler_read_count,
            block_ms=100,
            claim_idle_ms=b.settings.scheduler_claim_idle_ms,
            # The default tick: a batch that fills is dispatched at once without it (RunnerConfig.eager_tick_s).
            tick_s=b.settings.scheduler_tick_s,
            batch_size=E2E_TRIGGER,
            # Batches of exactly the trigger size, as under a steady stream (a burst would otherwise be
            # claimed in batches of up to 500), so that pipeline and raw embedder embed alike.
            max_batch=E2E_TRIGGER,
            # A scope whose last turns fall short of the trigger gets a light review after 1 s, not 10 min.
            idle_s=1.0,
        ),
        clock=utcnow,
        consumer="bench-scheduler",
    )
    thread = threading.Thread(target=runner.run, name="bench-scheduler", daemon=True)
    thread.start()
    return runner, thread


def _push_and_wait(b: Bench, worker: WorkerProcess, turns: Sequence[Turn], timeout: float) -> float:
    """Seconds from the first push until the commit of the review that finished the last turn."""
    import psycopg

    from pipeline.adapters.postgres.engine import libpq_dsn
    from pipeline.adapters.postgres.outbox_sql import OUTBOX_CHANNEL
    from pipeline.adapters.redis_stream import TurnStream

    stream = TurnStream(b.redis, b.settings.stream_turns, b.settings.stream_dead)
    entries = [encode_event(t) for t in turns]
    ids = [t.turn_id for t in turns]
    # Every review commit sends a NOTIFY on the outbox channel; waiting on it gives the time of the last
    # commit, where the poll alone saw the finish up to POLL_S late. The poll still decides when every
    # turn is done.
    with psycopg.connect(libpq_dsn(b.settings.db_url), autocommit=True) as listen:
        listen.execute(f"LISTEN {OUTBOX_CHANNEL}")
        t0 = time.perf_counter()
        last_commit = t0
        for start in range(0, len(entries), PUSH_CHUNK):
            stream.add_many(entries[start : start + PUSH_CHUNK])
        next_poll = t0
        while True:
            now = time.perf_counter()
            if now >= next_poll:
                if b.repo.turn_progress(ids)["reviewed"] >= len(ids):
                    break
                worker.check_alive()
                if now - t0 > timeout:
                    raise RuntimeError(f"timed out after {timeout:.0f}s: {b.repo.turn_progress(ids)}")
                next_poll = now + POLL_S
            ready, _, _ = select.select([listen.fileno()], [], [], max(0.0, next_poll - time.perf_counter()))
            if ready and _drain(listen):
                last_commit = time.perf_counter()
        # The finishing commit's NOTIFY was sent before the poll saw it; if it is still unread, count it now.
        if _drain(listen):
            last_commit = time.perf_counter()
    return last_commit - t0


def _drain(conn: Any) -> bool:
    """Read every NOTIFY already received; True if there was one."""
    received = [n.payload for n in conn.notifies(timeout=0)]
    return bool(received)


def _worker_env(b: Bench) -> dict[str, str]:
    return {
        "HINDSIGHT_DATABASE_URL": b.settings.db_url,
        "HINDSIGHT_REDIS_URL": b.settings.broker_url,
        # The raw embedder it is compared with is torch at one thread (`open_bench`): the same on both sides,
        # whatever the configured default is.
        "HINDSIGHT_EMBEDDING__BACKEND": "torch",
        "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
        "HINDSIGHT_LLM__BASE_URL": "",  # rules only, like the in-process parts
        "HINDSIGHT_LOG_JSON": "true",
    }


def run_e2e(b: Bench, corpus: Corpus, n: int, env: Mapping[str, str] | None = None) -> E2EResult:
    """`env`: settings for the worker on top of the bench's (another embedding model, say)."""
    b.reset()
    picked = round_robin(corpus.by_conversation()[:E2E_SCOPES], n)
    result = E2EResult(len(picked), len({u.conversation for u in picked}))
    texts = [u.content for u in picked]
    # The raw embedder runs in two halves, one before and one after the pipeline, so that a change in the
    # machine's load (tests share it) hits both sides alike.
    with torch_threads(1):
        first = raw_embed_s(b.embedder, texts[::2], E2E_TRIGGER)
    worker = WorkerProcess({**_worker_env(b), **(env or {})}, CACHE_DIR / "worker.log")
    runner, thread = None, None
    try:
        worker.start()
        runner, thread = _start_scheduler(b)
        # The worker's first reviews import scikit-learn and run the model cold: start-up, not throughput.
        warm = [_turn(u, f"warm-{i}", i, user=WARM_USER) for i, u in enumerate(corpus.notes[:E2E_TRIGGER])]
        _push_and_wait(b, worker, warm, timeout=300)
        turns = [_turn(u, f"e2e-{i}", 100_000 + i) for i, u in enumerate(picked)]
        result.elapsed_s = _push_and_wait(b, worker, turns, timeout=max(600.0, n / 2))
        result.worker_peak_rss_mb = peak_rss_mb(worker.process.pid) if worker.process is not None else 0.0
    finally:
        if runner is not None and thread is not None:
            runner.stop_event.set()
            thread.join(10)
        worker.stop()
    with torch_threads(1):
        second = raw_embed_s(b.embedder, texts[1::2], E2E_TRIGGER)
    result.raw_halves_s, result.raw_s = (first, second), first + second
    _collect_reviews(b.engine, worker.log_path.read_text(errors="replace"), result)
    return result


def peak_rss_mb(pid: int) -> float:
    """A live process's resident high-water mark (Linux /proc; 0 where there is none)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


_SUCCEEDED = re.compile(r"Task \S+ succeeded in ([0-9.]+)s")


def worker_reviews(log: str) -> list[tuple[dict[str, Any], float]]:
    """(the `review.done` event, the Celery task's seconds) of each review a solo-pool worker logged.

    The reviews table cannot say this: its timings are stored before the write stage has run.
    """
    out: list[tuple[dict[str, Any], float]] = []
    done: dict[str, Any] | None = None
    for line in log.splitlines():
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "review.done":
                done = event
        elif done is not None and (m := _SUCCEEDED.search(line)):
            out.append((done, float(m.group(1))))  # solo pool: the task that just logged review.done
            done = None
    return out


def _collect_reviews(engine: Engine, log: str, result: E2EResult) -> None:
    with engine.connect() as conn:
        warm = set(conn.scalars(text("SELECT id FROM batches WHERE user_id = :u"), {"u": WARM_USER}))
    sizes: list[int] = []
    for event, task_s in worker_reviews(log):
        if event.get("batch_id") in warm:
            continue
        kind = str(event.get("kind"))
        result.reviews[kind] = result.reviews.get(kind, 0) + 1
        result.task_s += task_s
        sizes.append(int(event.get("episodes", 0)))
        for stage in STAGES:
            result.stages_ms[stage] = result.stages_ms.get(stage, 0.0) + float(event.get(f"{stage}_ms", 0.0))
    result.mean_batch = sum(sizes) / len(sizes) if sizes else 0.0


# -- reporting -----------------------------------------------------------------------------------------


def _row_ms(values: dict[str, float], keys: Sequence[str]) -> list[str]:
    return [f"{values.get(k, 0.0):,.0f}" for k in keys]


def full_lines(r: FullResult) -> list[str]:
    lines = [
        f"### 1. Full review of a {r.episodes:,}-episode scope",
        "",
        f"Texts: {r.texts_note}. Embeddings "
        + ("from the cache" if r.from_cache else f"computed once ({r.embed_cache_s:.0f} s) and cached")
        + f" under `.hindsight/bench-cache/`. The consolidation path, step by step as `review._consolidate` "
        f"takes it: {r.points:,} points ({clustering.plan(r.points, EMBEDDING_DIM, r.cluster_params).algorithm}) "
        f"→ {r.clusters} clusters → {r.memories} memories.",
        "",
        f"Fastest of {PATH_RUNS} runs"
        + (
            f" (the other: {', '.join(f'{t:,.0f}' for t in r.other_totals_ms)} ms)"
            if r.other_totals_ms
            else ""
        )
        + "; the new turns count as kept here, while the whole reviews below cluster only those scored kept.",
        "",
        "| consolidation path | ms |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v:,.0f} |" for k, v in r.steps_ms.items()]
    lines += [
        f"| **total** (target ≤ {FULL_TARGET_MS:,.0f}) | **{r.total_ms:,.0f}** {verdict(r.total_ms <= FULL_TARGET_MS)} |",
        "",
        f"Whole `review_batch` runs of a full batch of {TAIL} new turns (embedded by the review), ms; "
        "points = what it clustered, and how (`clustering.plan`):",
        "",
        "| review_batch | points | " + " | ".join(STAGES) + " | wall | wall − embed |",
        "|---|---:|" + "---:|" * (len(STAGES) + 2),
    ]
    for label, wall, timings, counts in r.reviews:
        n = counts.get("clustered", 0)
        how = clustering.plan(n, EMBEDDING_DIM, r.cluster_params).algorithm
        lines.append(
            f"| {label} | {n:,} {how} | "
            + " | ".join(_row_ms(timings, STAGES))
            + f" | {wall:,.0f} | {wall - timings.get('embed', 0.0):,.0f} |"
        )
    return lines


def batching_lines(r: BatchingResult) -> list[str]:
    lines = [
        f"### 2. One batch of {r.n} against {r.n} batches of one (light reviews, in-process)",
        "",
        f"Totals over {r.rounds} rounds, the side going first alternating; torch threads = 1; claims (the "
        "scheduler's work) not timed. " + batching_sentence(r),
        "",
        f"| measure | 1 × {r.n} (ms) | {r.n} × 1 (ms) | ratio (target ≤ {BATCH_TARGET:.2f}) |",
        "|---|---:|---:|---:|",
    ]
    for prestored, label in ((False, "review, embedding included"), (True, "review, embeddings pre-stored")):
        one, each = r.sides[(prestored, "batch")], r.sides[(prestored, "single")]
        ratio = r.ratio(prestored)
        lines.append(
            f"| {label} | {one.wall_ms:,.0f} | {each.wall_ms:,.0f} | **{ratio:.3f}** {verdict(ratio <= BATCH_TARGET)} |"
        )
    lines += [
        f"| raw embedder alone (floor of the first row) | {r.raw_one_ms:,.0f} | {r.raw_each_ms:,.0f} | "
        f"{r.raw_ratio:.3f} |",
    ]
    m_one, m_each = r.model_split.get("one"), r.model_split.get("each")
    if m_one is not None and m_each is not None:
        lines += [
            f"| inside the model: tokenizer | {m_one.tokenize_ms:,.0f} | {m_each.tokenize_ms:,.0f} | "
            f"{m_one.tokenize_ms / m_each.tokenize_ms:.3f} |",
            f"| inside the model: forward pass | {m_one.forward_ms:,.0f} | {m_each.forward_ms:,.0f} | "
            f"{m_one.forward_ms / m_each.forward_ms:.3f} |",
            f"| tokens computed (padding included) | {m_one.tokens:,} | {m_each.tokens:,} | {m_one.tokens / m_each.tokens:.3f} |",
        ]
    lines += [
        "",
        "| where the time goes (ms) | " + " | ".join((*LIGHT_STAGES, "other")) + " |",
        "|---|" + "---:|" * (len(LIGHT_STAGES) + 1),
    ]
    for (prestored, side), s in sorted(r.sides.items()):
        label = f"{'1 × ' if side == 'batch' else ''}{r.n}{' × 1' if side == 'single' else ''}, " + (
            "pre-stored" if prestored else "embedding"
        )
        lines.append(
            f"| {label} | " + " | ".join(_row_ms(s.stages_ms, LIGHT_STAGES)) + f" | {s.other_ms:,.0f} |"
        )
    return lines


def batching_sentence(r: BatchingResult) -> str:
    embed, stored = r.ratio(False), r.ratio(True)
    inside = ""
    m_one, m_each = r.model_split.get("one"), r.model_split.get("each")
    if m_one is not None and m_each is not None:
        inside = (
            f" Inside the model the per-call part, the tokenizer, is {m_each.tokenize_ms:,.0f} ms of the "
            f"{r.n} single calls; the forward pass is the cost, and batched it computes "
            f"{m_one.tokens / m_each.tokens:.1f}× the tokens (padding to the longest sentence of each group)."
        )
    return (
        f"With the embedding included the ratio is {embed:.2f} and cannot reach {BATCH_TARGET:.2f}: the model "
        f"alone takes {r.raw_one_ms:,.0f} ms for 1 × {r.n} sentences and {r.raw_each_ms:,.0f} ms for "
        f"{r.n} × 1 at one thread, so a review costing nothing beyond the model would still score "
        f"{r.raw_ratio:.2f}.{inside} The review's own per-batch overhead, isolated with the embeddings "
        f"pre-stored, gives {stored:.3f} ({verdict(stored <= BATCH_TARGET).lower()})."
    )


def e2e_sentence(r: E2EResult) -> str:
    embed_s = r.stages_ms.get("embed", 0.0) / 1000
    rest = 1 - embed_s * 1000 / r.review_ms if r.review_ms else 0.0
    lo, hi = sorted(r.raw_halves_s)
    worker_rate = r.turns / embed_s if embed_s else 0.0
    return (
        f"The worker was busy {r.task_s / r.elapsed_s:.0%} of the run and {rest:.0%} of its review time went "
        f"to stages other than embedding. Its embedding ran at {worker_rate:.1f} sentences/s against the raw "
        f"embedder's {r.raw_per_s:.1f} (whose halves differ by {hi / lo - 1:.0%}): the second ratio leaves "
        "that difference out, whether it comes from other load on the machine or from the pipeline's own "
        "processes (scheduler, PostgreSQL) sharing the CPU with the worker."
    )


def e2e_lines(r: E2EResult) -> list[str]:
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(r.reviews.items()))
    share = (
        ", ".join(f"{k} {v / r.review_ms:.0%}" for k, v in r.stages_ms.items() if v) if r.review_ms else ""
    )
    return [
        "### 3. End to end: reviewed turns/s over raw embedding sentences/s",
        "",
        f"{r.turns:,} LoCoMo turns pushed at once through `TurnStream.add_many`, {r.scopes} scopes (one per "
        f"conversation), batch trigger {E2E_TRIGGER} (batches capped at {E2E_TRIGGER}), a scheduler thread and "
        "one worker process (solo pool, torch threads = 1, warmed up with one batch first).",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| pipeline: first push → the commit of the last review | {r.elapsed_s:.1f} s |",
        f"| pipeline throughput | {r.turns_per_s:.1f} turns/s |",
        f"| raw embedder, same texts, batches of {E2E_TRIGGER}, 1 thread (halves before/after: "
        f"{r.raw_halves_s[0]:.1f} s + {r.raw_halves_s[1]:.1f} s) | {r.raw_per_s:.1f} sentences/s |",
        f"| **ratio** (target ≥ {E2E_TARGET:.2f}) | **{r.ratio:.3f}** {verdict(r.ratio >= E2E_TARGET)} |",
        f"| same ratio against the worker's own embedding rate (same seconds, same CPU) | "
        f"{r.same_load_ratio:.3f} {verdict(r.same_load_ratio >= E2E_TARGET)} |",
        f"| reviews | {kinds}; mean batch {r.mean_batch:.1f} |",
        f"| worker busy in tasks / in review stages | {r.task_s:.1f} s / {r.review_ms / 1000:.1f} s of "
        f"{r.elapsed_s:.1f} s |",
        f"| review stages | {share} |",
        "",
        e2e_sentence(r),
    ]


def dominant_cost(full: FullResult | None, e2e: E2EResult | None) -> str:
    """One sentence on what dominates, from the measurements."""
    parts: list[str] = []
    if e2e is not None and e2e.review_ms:
        ranked = sorted(e2e.stages_ms.items(), key=lambda kv: -kv[1])
        (top, ms), (second, ms2) = ranked[0], ranked[1]
        parts.append(
            f"end to end it is the {top} stage, {ms / e2e.review_ms:.0%} of the worker's review time "
            f"(next: {second}, {ms2 / e2e.review_ms:.0%})"
        )
    if full is not None and full.steps_ms:
        step, ms = max(full.steps_ms.items(), key=lambda kv: kv[1])
        parts.append(
            f"in the full review of {full.episodes:,} episodes it is the {step} step, {ms / full.total_ms:.0%} "
            "of the consolidation path, and it grows with the scope, not the batch"
        )
    return ("What dominates the cost: " + "; ".join(parts) + ".") if parts else ""


def print_table(console: Console, lines: list[str]) -> None:
    """Render the markdown tables of a part as rich tables (one source for the console and the file)."""
    title, rows = "", []
    for line in [*lines, ""]:
        if line.startswith("### "):
            title = line[4:]
        elif line.startswith("|"):
            rows.append([c.strip().replace("**", "") for c in line.strip("|").split("|")])
        else:
            if rows:
                table = Table(*rows[0], title=title or None)
                for row in rows[2:]:
                    table.add_row(*row)
                console.print(table)
                rows, title = [], ""
            elif line and not line.startswith("#"):
                console.print(line, highlight=False)


# -- the command ---------------------------------------------------------------------------------------


def open_bench(settings: Settings, database_url: str, redis_url: str, console: Console) -> Bench:
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.migrate import upgrade
    from pipeline.adapters.redis_stream import connect
    from tasks import deps

    check_disposable(database_url, redis_url, settings)
    upgrade(database_url)
    bench_settings = settings.model_copy(update={"database_url": database_url, "redis_url": redis_url})
    engine = make_engine(database_url, pool_size=4)
    # MiniLM on torch whatever the default: this bench times the model's own parts (model_split); what the
    # default model costs a review end to end is `bench model-cost`'s.
    embedder = SentenceTransformerEmbedder(
        settings.embedding.with_model(MINILM_MODEL).model_copy(update={"torch_threads": 1})
    )
    embedder.warm_up()
    return Bench(
        bench_settings,
        engine,
        Repository(engine),
        connect(redis_url),
        embedder,
        deps.review_config(),
        console,
    )


def run_review_bench(
    settings: Settings,
    *,
    episodes: int,
    turns: int,
    data: Path,
    database_url: str,
    redis_url: str,
    parts: Sequence[str],
    write: bool,
    console: Console,
    batch_rounds: int = BATCH_ROUNDS,
) -> dict[str, float]:
    # The scheduler thread logs every dispatch at INFO: the bench's output is its tables.
    configure_logging("WARNING", settings.log_json)
    corpus = load_locomo(data)
    b = open_bench(settings, database_url, redis_url, console)
    figures: dict[str, float] = {}
    sections: list[list[str]] = []
    full: FullResult | None = None
    e2e: E2EResult | None = None

    def do_full() -> list[str]:
        nonlocal full
        full = run_full(b, corpus, episodes)
        figures.update(full_total_ms=full.total_ms, **{f"full_{k}_ms": v for k, v in full.steps_ms.items()})
        return full_lines(full)

    def do_batching() -> list[str]:
        r = run_batching(b, corpus, episodes, batch_rounds)
        figures.update(
            batch_ratio_embed=r.ratio(False), batch_ratio_stored=r.ratio(True), raw_ratio=r.raw_ratio
        )
        return batching_lines(r)

    def do_e2e() -> list[str]:
        nonlocal e2e
        e2e = run_e2e(b, corpus, turns)
        figures.update(e2e_turns_per_s=e2e.turns_per_s, e2e_raw_per_s=e2e.raw_per_s, e2e_ratio=e2e.ratio)
        figures.update({f"e2e_stage_{k}_ms": v for k, v in e2e.stages_ms.items()})
        return e2e_lines(e2e)

    steps: list[tuple[str, Callable[[], list[str]]]] = [
        ("full", do_full),
        ("batching", do_batching),
        ("e2e", do_e2e),
    ]
    try:
        with torch_threads(1):
            for name, step in steps:
                if name in parts:
                    console.rule(f"[bold]bench review: {name}")
                    load_before = os.getloadavg()[0]
                    lines = step()
                    # Other work on a small shared machine moves every figure: say how busy it was.
                    lines += [
                        "",
                        f"Machine load (1-minute load average, {os.cpu_count()} cores): "
                        f"{load_before:.1f} when this part started, {os.getloadavg()[0]:.1f} when it ended.",
                    ]
                    print_table(console, lines)
                    sections.append(lines)
    finally:
        b.engine.dispose()
        b.redis.close()
    summary = dominant_cost(full, e2e)
    if summary:
        console.print(summary, highlight=False)
    if write and len(sections) == len(steps):
        body = ["## Review: `hindsight bench review`", ""]
        for lines in sections:
            body += [*lines, ""]
        write_section("review", "\n".join([*body, summary]))
    elif write:
        console.print("[yellow]not all parts ran: BENCHMARKS.md left as it was[/yellow]")
    return figures
