"""The fault suite's own world: private PostgreSQL and Redis servers and real role processes.

Everything here may be stopped, killed or deleted by a test: the servers are the embedded ones
`hindsight up` uses (pipeline/runtime/embedded_postgres.py and embedded_redis.py), started on free ports
with their data under the test's tmp dir, never the machine's shared PostgreSQL/Redis. The roles are real
`hindsight worker`, `scheduler`, `indexer`, `beat` and `api` processes.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.qdrant_edge import EdgeVectorIndex
from pipeline.adapters.redis_stream import TurnStream
from pipeline.core.config import STREAM_DEAD, STREAM_TURNS, Settings
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest.validation import encode_event
from pipeline.runtime.embedded import EmbeddedServer
from pipeline.runtime.embedded_postgres import start_postgres
from pipeline.runtime.embedded_redis import start_redis
from tests.helpers import free_port, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
# Set by `hindsight bench faults`: only a benchmark run of record rewrites BENCHMARKS.md, not every
# `make test-faults` (CI, a developer checking a change).
WRITE_ENV = "HINDSIGHT_BENCH_WRITE"


def record(section: str, text: str, path: Path = REPO_ROOT / "BENCHMARKS.md") -> None:
    """Print a fault scenario's figures; write them to BENCHMARKS.md when run as the benchmark."""
    print(text)
    if os.environ.get(WRITE_ENV) == "1":
        from bench.report import write_section

        write_section(section, text, path)


# The default model's (the fault stack runs `hindsight up` on the default settings).
DIMENSION = Settings().embedding.dimension


# ------------------------------------------------------------------------------------------ servers


@dataclass
class Servers:
    """A private PostgreSQL and a private Redis (append-only file on) that tests may stop and restart."""

    root: Path
    pg_port: int = field(default_factory=free_port)
    redis_port: int = field(default_factory=free_port)
    pg: EmbeddedServer | None = None
    redis: EmbeddedServer | None = None

    def start(self) -> None:
        self.start_postgres()
        self.start_redis()
        upgrade(self.db_url)

    def start_postgres(self) -> None:
        self.pg = start_postgres(self.root / "postgres", self.pg_port)

    def start_redis(self) -> None:
        self.redis = start_redis(self.root / "redis", self.redis_port)

    def stop(self) -> None:
        for server in (self.redis, self.pg):
            if server is not None:
                server.stop()

    @property
    def db_url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.pg_port}/hindsight"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"


# -------------------------------------------------------------------------------------------- roles


@dataclass
class Role:
    """One real `hindsight <role>` process; `kill()` is a SIGKILL to its whole process group."""

    name: str
    args: list[str]
    env: dict[str, str]
    log_dir: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0
    log_path: Path = field(init=False)

    def start(self) -> None:
        self.starts += 1
        self.log_path = self.log_dir / f"{self.name}-{self.starts}.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pipeline.cli", *self.args],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=REPO_ROOT,
            )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ready(self) -> bool:
        """Workers: Celery said ready. Other roles: running for a second."""
        if not self.alive():
            return False
        if self.args[0] == "worker":
            return " ready." in self.log_path.read_text(errors="replace")
        return True

    def wait_ready(self, timeout: float = 180.0) -> None:
        def check() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited {self.process.returncode}:\n{self.log()[-3000:]}")
            return self.ready()

        wait_until(check, timeout=timeout, interval=0.25, what=f"{self.name} to be ready")

    def kill(self) -> None:
        assert self.process is not None
        self.kills += 1
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self, timeout: float = 30.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def rss_mb(self) -> float:
        """Resident memory of the role's process (MiB), from /proc."""
        if not self.alive():
            return 0.0
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@dataclass
class Stack:
    """Private servers plus role processes, and the checks every fault test ends with."""

    servers: Servers
    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    roles: dict[str, Role] = field(default_factory=dict)
    _engine: Engine | None = None

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def index_path(self) -> Path:
        return self.data_dir / "qdrant"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        env.update(
            {
                "HINDSIGHT_DATABASE_URL": self.servers.db_url,
                "HINDSIGHT_REDIS_URL": self.servers.redis_url,
                "HINDSIGHT_DATA_DIR": str(self.data_dir),
                # A task of a SIGKILLed worker comes back after this plus one restore sweep.
                "HINDSIGHT_CELERY__VISIBILITY_TIMEOUT_S": "20",
                "HINDSIGHT_CELERY__RESTORE_INTERVAL_S": "1",
                "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
                "HINDSIGHT_SCHEDULER_TICK_S": "0.5",
                "HINDSIGHT_SCHEDULER_CLAIM_IDLE_MS": "5000",
                "HINDSIGHT_INDEXER_POLL_S": "0.5",
                # The reconcile job (beat) re-sends batches a dead scheduler or a lost task left behind.
                "HINDSIGHT_RECONCILE_EVERY_S": "5",
                "HINDSIGHT_BATCH_STUCK_S": "90",
                "HINDSIGHT_POLICY__IDLE_S": "5",
                "HINDSIGHT_LOG_JSON": "true",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "PYTHONPATH": str(REPO_ROOT),
            }
        )
        env.update(self.extra_env)
        return env

    def add(self, name: str, *args: str, env: dict[str, str] | None = None) -> Role:
        role = Role(name, list(args), {**self.env(), **(env or {})}, self.root)
        self.roles[name] = role
        return role

    def start(self, *names: str) -> None:
        for name in names:
            self.roles[name].start()

    def stop_all(self) -> None:
        for role in self.roles.values():
            role.stop()

    # -- clients -------------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self.servers.db_url, pool_size=2)
        return self._engine

    @property
    def repo(self) -> Repository:
        return Repository(self.engine)

    def stream(self) -> TurnStream:
        return TurnStream(redis.Redis.from_url(self.servers.redis_url), STREAM_TURNS, STREAM_DEAD)

    def scalar(self, sql: str, **params: Any) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()

    def rows(self, sql: str, **params: Any) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(text(sql), params))

    def caught_up(self, turn_ids: list[str]) -> bool:
        """Every turn is an episode, reviewed, and nothing waits in the outbox."""
        progress = self.repo.turn_progress(turn_ids)
        return progress["indexed"] == len(turn_ids) and self.repo.outbox_lag()[0] == 0

    # -- invariants ----------------------------------------------------------------------------

    def assert_nothing_lost(self, sent: Traffic) -> None:
        """Every distinct turn is exactly one episode, reviewed; every batch done and reviewed once."""
        unique = sorted(sent.unique_turn_ids)
        counts = self.rows(
            "SELECT turn_id, count(*) AS n FROM episodes WHERE turn_id = ANY(:ids) GROUP BY turn_id",
            ids=unique,
        )
        assert len(counts) == len(unique), f"{len(unique) - len(counts)} turns never became episodes"
        assert all(r.n == 1 for r in counts)
        unreviewed = self.scalar("SELECT count(*) FROM episodes WHERE reviewed_at IS NULL")
        assert unreviewed == 0, f"{unreviewed} episodes were never reviewed"
        not_done = self.rows("SELECT id, status, error FROM batches WHERE status <> 'done'")
        assert not not_done, f"batches not done: {not_done[:5]}"
        batches, reviews, distinct = self.rows(
            "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM reviews),"
            " (SELECT count(DISTINCT batch_id) FROM reviews)"
        )[0]
        assert batches == reviews == distinct, (batches, reviews, distinct)
        # Each episode belongs to at most one full and one light batch by construction (one column each);
        # an episode whose batch is not done would have been caught above.
        orphans = self.scalar(
            "SELECT count(*) FROM episodes e WHERE NOT EXISTS (SELECT 1 FROM batches b"
            " WHERE b.id = coalesce(e.full_batch_id, e.light_batch_id))"
        )
        assert orphans == 0

    def assert_no_overlapping_facts(self) -> None:
        overlaps = self.scalar(
            """
            SELECT count(*) FROM facts a JOIN facts b
              ON a.agent_id = b.agent_id AND a.user_id = b.user_id AND a.entity = b.entity
             AND a.attribute = b.attribute AND a.id < b.id
            WHERE a.retracted_at IS NULL AND b.retracted_at IS NULL
              AND tstzrange(a.valid_from, a.valid_to) && tstzrange(b.valid_from, b.valid_to)
            """
        )
        assert overlaps == 0, f"{overlaps} overlapping fact intervals"

    def index_ids(self) -> set[str]:
        """Point ids in the in-process index. The process that owns the folder must be stopped first."""
        index = EdgeVectorIndex(self.index_path, DIMENSION)
        try:
            return index.ids()
        finally:
            index.close()

    def assert_index_agrees(self) -> tuple[int, int, int]:
        """(expected, missing, orphan) after comparing the index with what PostgreSQL says belongs in it."""
        expected = self.repo.indexable_point_ids()
        actual = self.index_ids()
        missing, orphan = expected - actual, actual - expected
        assert not missing, f"{len(missing)} points missing from the index, e.g. {sorted(missing)[:3]}"
        assert not orphan, f"{len(orphan)} orphan points in the index, e.g. {sorted(orphan)[:3]}"
        return len(expected), len(missing), len(orphan)


# ------------------------------------------------------------------------------------------ traffic

PLACES = ["Paris", "Berlin", "Shanghai", "Lisbon", "Toronto", "Nairobi", "Osaka", "Lima", "Oslo", "Austin"]
FOODS = ["ramen", "tacos", "dumplings", "risotto", "falafel", "pho", "paella", "curry", "sushi", "pierogi"]
HOBBIES = ["climbing", "chess", "sailing", "pottery", "running", "painting", "cycling", "baking", "birding"]
PEOPLE = [
    "my sister Ana",
    "my manager Li",
    "my neighbour Tom",
    "my friend Sara",
    "my son Kai",
    "my aunt Rosa",
]
THINGS = [
    "the quarterly report",
    "the garden fence",
    "the flight to Rome",
    "the dentist visit",
    "the new laptop",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend", "next month"]
USER_LINES = [
    "I moved to {place} last year and I still love the food there.",
    "My favourite dish is {food}, I could eat it every week.",
    "Remind me to call {person} on {day} about {thing}.",
    "I started {hobby} again, twice a week after work.",
    "Please don't book anything for {day}, I am busy with {thing}.",
    "I am allergic to peanuts, keep that in mind when suggesting {food}.",
    "We are planning a trip to {place} with {person} on {day}.",
    "I prefer short answers in the morning and details in the evening.",
    "Can you find a good {hobby} club near {place}?",
    "{person} recommended a place for {food} in {place}.",
]
AGENT_LINES = [
    "Noted: you prefer {food}; I will suggest places that serve it near {place}.",
    "I scheduled a reminder for {day} to follow up on {thing}.",
    "Here are three {hobby} groups that meet near {place} on {day}.",
    "I summarised {thing}: two open items remain for {day}.",
    "Understood, I will keep {day} free and move {thing} to another day.",
]
TOOL_LINES = [
    "calendar.search returned 3 events on {day} mentioning {thing}.",
    "weather.lookup {place}: 18C, light rain expected on {day}.",
    "maps.nearby {place} {food}: 12 results, best rated 4.7.",
    "contacts.get '{person}': phone and email found.",
    "web.search '{hobby} {place}': 25 results.",
]


@dataclass
class Traffic:
    """Real-text turns over several scopes and sessions, with session ends and re-sent duplicates."""

    seed: int
    entries: list[dict[str, str]] = field(default_factory=list)
    unique_turn_ids: set[str] = field(default_factory=set)
    by_priority: dict[int, set[str]] = field(default_factory=dict)
    duplicates: int = 0
    session_ends: int = 0

    @classmethod
    def generate(
        cls,
        n: int,
        *,
        seed: int,
        agents: int = 3,
        users: int = 4,
        session_len: tuple[int, int] = (20, 60),
        duplicate_rate: float = 0.03,
        end_sessions: bool = True,
        prefix: str = "t",
    ) -> Traffic:
        rng = random.Random(seed)
        out = cls(seed)
        scopes = [(f"agent-{a}", f"user-{u}") for a in range(agents) for u in range(users)]
        open_sessions: dict[tuple[str, str], tuple[str, int]] = {}
        start = datetime(2026, 1, 1, tzinfo=UTC)
        session_no = 0
        for i in range(n):
            scope = rng.choice(scopes)
            if scope not in open_sessions:
                session_no += 1
                open_sessions[scope] = (f"s{seed}-{session_no}", rng.randint(*session_len))
            session_id, left = open_sessions[scope]
            turn = _turn(rng, f"{prefix}{seed}-{i}", scope, session_id, start + timedelta(seconds=i))
            out.entries.append(encode_event(turn))
            out.unique_turn_ids.add(turn.turn_id)
            out.by_priority.setdefault(turn.priority, set()).add(turn.turn_id)
            if rng.random() < duplicate_rate:
                # A client retry: the same turn_id again, later in the stream.
                out.entries.append(encode_event(turn))
                out.duplicates += 1
            if left <= 1:
                del open_sessions[scope]
                if end_sessions:
                    end = SessionEnd(scope[0], scope[1], session_id, start + timedelta(seconds=i))
                    out.entries.append(encode_event(end))
                    out.session_ends += 1
            else:
                open_sessions[scope] = (session_id, left - 1)
        return out

    def chunks(self, size: int) -> Iterator[list[dict[str, str]]]:
        for i in range(0, len(self.entries), size):
            yield self.entries[i : i + size]


def _turn(rng: random.Random, turn_id: str, scope: tuple[str, str], session_id: str, ts: datetime) -> Turn:
    kind = rng.random()
    words = {
        "place": rng.choice(PLACES),
        "food": rng.choice(FOODS),
        "hobby": rng.choice(HOBBIES),
        "person": rng.choice(PEOPLE),
        "thing": rng.choice(THINGS),
        "day": rng.choice(DAYS),
    }
    metadata: dict[str, Any] = {}
    if kind < 0.4:
        role, source, content = "user", "user", rng.choice(USER_LINES).format(**words)
        if rng.random() < 0.15:
            # Explicit facts: the same chain (scope, user, city) gets new versions, some out of order.
            metadata = {"entity": "user", "attribute": "city", "value": words["place"]}
            content = f"I live in {words['place']} now."
    elif kind < 0.75:
        role, source, content = "assistant", "agent", rng.choice(AGENT_LINES).format(**words)
    else:
        role, source, content = "tool", "tool", rng.choice(TOOL_LINES).format(**words)
    # Out-of-order event times within a few minutes, as real clients deliver them.
    ts = ts + timedelta(seconds=rng.randint(-120, 120))
    return Turn(turn_id, scope[0], scope[1], session_id, role, content, ts, source, metadata)


def push(stream: TurnStream, entries: Iterable[dict[str, str]]) -> int:
    batch = list(entries)
    stream.add_many(batch)
    return len(batch)
