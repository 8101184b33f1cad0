"""The real pipeline as `hindsight up` runs it, for the scaling and soak benches.

Private embedded PostgreSQL and Redis (pipeline/runtime/embedded_postgres.py and embedded_redis.py) under
a scratch directory by default, so that the CPU seconds and memory of PostgreSQL and Redis are this run's
alone (the machine's shared servers also serve other work); or a given disposable database and Redis db,
whose server processes are then not measured. The roles are real `hindsight scheduler`, `worker` and
`indexer` processes (pipeline/runtime/supervisor.py `Child`), the indexer writing the in-process Qdrant
Edge shard under the scratch data directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import redis
from sqlalchemy import Engine, text

from bench.review import REPO_ROOT, TABLES, check_disposable
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.core.config import Settings
from pipeline.core.models import Turn
from pipeline.ingest.validation import encode_event
from pipeline.runtime.embedded import EmbeddedServer
from pipeline.runtime.embedded_postgres import start_postgres
from pipeline.runtime.embedded_redis import start_redis
from pipeline.runtime.supervisor import Child, role_argv

READY_TIMEOUT_S = 240.0  # a worker loads the model (~700 MB) first; on a busy 2-core machine that is slow


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Usage:
    """CPU seconds (user + system) and memory of a process and its children, read from /proc by psutil."""

    cpu_s: float
    mem_mb: float


def tree_usage(pid: int) -> Usage:
    """A process and its descendants: CPU seconds, and proportional set size (shared pages split among the
    processes sharing them, so a PostgreSQL postmaster and its backends are not counted once each)."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return Usage(0.0, 0.0)
    cpu = mem = 0.0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            t = p.cpu_times()
            cpu += t.user + t.system
            try:
                mem += getattr(p.memory_full_info(), "pss", 0.0) or p.memory_info().rss
            except psutil.AccessDenied:
                mem += p.memory_info().rss
    return Usage(cpu, mem / 2**20)


@dataclass
class BenchStack:
    """Servers plus role processes. `start_roles` / `stop_roles` may run many times over one set of servers."""

    root: Path
    database_url: str | None = None  # None: embedded PostgreSQL under root
    redis_url: str | None = None  # None: embedded Redis under root
    env_overrides: dict[str, str] = field(default_factory=dict)
    servers: list[EmbeddedServer] = field(default_factory=list)
    roles: dict[str, Child] = field(default_factory=dict)
    _engine: Engine | None = None
    _redis: redis.Redis | None = None

    # -- servers ---------------------------------------------------------------------------------

    def start_servers(self, settings: Settings) -> None:
        if self.redis_url is None:
            self.servers.append(start_redis(self.root / "redis", free_port()))
            self.redis_url = self.servers[-1].url
        if self.database_url is None:
            self.servers.append(start_postgres(self.root / "postgres", free_port()))
            self.database_url = self.servers[-1].url
        if not self.embedded:
            check_disposable(self.db_url, self.broker_url, settings)
        upgrade(self.db_url)

    @property
    def embedded(self) -> bool:
        return len(self.servers) == 2

    @property
    def db_url(self) -> str:
        assert self.database_url is not None, "start_servers first"
        return self.database_url

    @property
    def broker_url(self) -> str:
        assert self.redis_url is not None, "start_servers first"
        return self.redis_url

    def server_pids(self) -> dict[str, int]:
        """The embedded servers' processes by name (postgres, redis); empty for external servers."""
        return {s.name: s.pid for s in self.servers}

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self.db_url, pool_size=2)
        return self._engine

    @property
    def repo(self) -> Repository:
        return Repository(self.engine)

    @property
    def redis(self) -> redis.Redis:
        if self._redis is None:
            self._redis = connect(self.broker_url)
        return self._redis

    def stream(self, settings: Settings) -> TurnStream:
        return TurnStream(self.redis, settings.stream_turns, settings.stream_dead)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def index_path(self) -> Path:
        return self.data_dir / "qdrant"

    def reset(self) -> None:
        """Empty tables, Redis db and index: each run starts from nothing. Roles must be stopped."""
        assert not any(c.alive() for c in self.roles.values()), "stop the roles before a reset"
        with self.engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {TABLES}, index_outbox RESTART IDENTITY CASCADE"))
        self.redis.flushdb()
        shutil.rmtree(self.index_path, ignore_errors=True)

    def close(self, *, remove: bool = False) -> None:
        """Stop everything; `remove` also deletes the scratch directory (kept after a failure, for its logs)."""
        self.stop_roles()
        if self._engine is not None:
            self._engine.dispose()
        if self._redis is not None:
            self._redis.close()
        for server in reversed(self.servers):
            server.stop()
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- roles -----------------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        env.update(
            {
                "HINDSIGHT_DATABASE_URL": self.db_url,
                "HINDSIGHT_REDIS_URL": self.broker_url,
                "HINDSIGHT_DATA_DIR": str(self.data_dir),
                # One torch (or ONNX) intra-op thread per worker: a worker is one core's worth of review.
                "HINDSIGHT_EMBEDDING__TORCH_THREADS": "1",
                "OMP_NUM_THREADS": "1",
                "TOKENIZERS_PARALLELISM": "false",
                "HINDSIGHT_LLM__BASE_URL": "",  # rules only: what is measured is the pipeline, not an LLM
                "HINDSIGHT_LOG_JSON": "true",
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
                "PYTHONPATH": str(REPO_ROOT),
            }
        )
        env.update(self.env_overrides)
        return env

    def start_roles(self, workers: int, *, indexer: bool = True) -> None:
        """A scheduler, `workers` review workers (solo pool each) and an indexer; returns once all are ready."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        logs = self.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        env = self.env()
        wanted: list[tuple[str, list[str]]] = [("scheduler", role_argv("scheduler"))]
        wanted += [(f"worker-{i + 1}", role_argv("worker", "--loglevel=INFO")) for i in range(workers)]
        if indexer:
            wanted.append(("indexer", role_argv("indexer", "--embedded")))
        for name, argv in wanted:
            log_path = logs / f"{name}-{int(time.time() * 1000)}.log"
            child = Child(name, argv, env, log_path)
            child.start()
            self.roles[name] = child
        deadline = time.monotonic() + READY_TIMEOUT_S
        for name in self.worker_names():
            while " ready." not in self.log(name):
                self.check_alive()
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{name} not ready after {READY_TIMEOUT_S:.0f}s; see {self.roles[name].log_path}"
                    )
                time.sleep(0.25)

    def worker_names(self) -> list[str]:
        return [n for n in self.roles if n.startswith("worker")]

    def log(self, name: str) -> str:
        path = self.roles[name].log_path
        return path.read_text(errors="replace") if path.exists() else ""

    def check_alive(self) -> None:
        for name, child in self.roles.items():
            if not child.alive():
                tail = self.log(name)[-2000:]
                code = child.process.returncode if child.process else None
                raise RuntimeError(f"{name} exited with {code}:\n{tail}")

    def stop_roles(self) -> None:
        # The scheduler first (no new batches), then the workers, then the indexer (it drains last).
        for name in sorted(
            self.roles, key=lambda n: ("scheduler", "worker", "indexer").index(n.split("-")[0])
        ):
            child = self.roles[name]
            if child.process is not None and child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, signal.SIGTERM)
            child.stop(20.0)
        self.roles.clear()

    def usage(self) -> dict[str, Usage]:
        """Every role and embedded server, now."""
        out = {name: tree_usage(c.process.pid) for name, c in self.roles.items() if c.process is not None}
        out.update({name: tree_usage(pid) for name, pid in self.server_pids().items()})
        return out

    # -- progress --------------------------------------------------------------------------------

    def progress(self) -> dict[str, int]:
        """Episodes stored and reviewed, rows waiting in the index outbox (one cheap query)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM episodes) AS episodes,"
                    " (SELECT count(*) FROM episodes WHERE reviewed_at IS NOT NULL) AS reviewed,"
                    " (SELECT count(*) FROM index_outbox) AS outbox"
                )
            ).one()
        return {"episodes": int(row.episodes), "reviewed": int(row.reviewed), "outbox": int(row.outbox)}

    def reviewed_in_batches(self) -> int:
        """Episodes of finished review batches: a progress poll that costs little while a run is measured
        (batches holds a row per 30 turns; counting episodes scans them all, twice a second). It can run
        ahead of `progress()` (an episode in a light and a full batch counts twice), never behind."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    text("SELECT coalesce(sum(episode_count), 0) FROM batches WHERE status = 'done'")
                ).scalar_one()
            )

    def outbox(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM index_outbox")).scalar_one())

    def push_and_review(self, settings: Settings, turns: Sequence[Turn], total: int) -> float:
        """Push `turns` onto the stream at once and wait until `total` turns are reviewed (their batches done
        and every one marked reviewed). Returns the seconds from the push."""
        entries = [encode_event(t) for t in turns]
        timeout = max(600.0, len(turns) / 2)
        t0 = time.perf_counter()
        push_chunks(self.stream(settings), entries)
        self.wait_for(
            lambda: self.reviewed_in_batches() >= total, timeout=timeout, what="every batch reviewed"
        )
        self.wait_for(
            lambda: self.progress()["reviewed"] >= total,
            timeout=timeout,
            what="every turn reviewed",
            poll_s=0.05,
        )
        return time.perf_counter() - t0

    def wait_indexed(self, timeout: float = 600.0) -> float:
        """Wait until the index outbox is empty. Returns the seconds waited."""
        t0 = time.perf_counter()
        self.wait_for(lambda: self.outbox() == 0, timeout=timeout, what="the index to catch up")
        return time.perf_counter() - t0

    def wait_for(self, done: Any, *, timeout: float, poll_s: float = 0.5, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            self.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}: {self.progress()}")
            time.sleep(poll_s)


def scratch_root(prefix: str) -> Path:
    # Not under a pytest tmp dir: as root the embedded PostgreSQL runs as another account that must be
    # able to traverse to its data directory (see tests/faults/conftest.py).
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    return root


def push_chunks(stream: TurnStream, entries: Sequence[dict[str, str]], chunk: int = 500) -> None:
    for start in range(0, len(entries), chunk):
        stream.add_many(entries[start : start + chunk])


def sum_usage(values: Iterable[Usage]) -> Usage:
    cpu = mem = 0.0
    for u in values:
        cpu += u.cpu_s
        mem += u.mem_mb
    return Usage(cpu, mem)
