"""Embedded Redis and PostgreSQL that `hindsight up` starts when no URLs are configured.

Layout under the data directory (default ./.hindsight):

    redis/          redis.conf (rewritten on every start), appendonly.aof, redis.log, redis.pid
    pg/             PGDATA (initdb'd once; owned by the account PostgreSQL runs as)
    postgres.log    PostgreSQL server log (pg_ctl -l)
    run/            PostgreSQL unix socket (or /tmp/hindsight-pg-<hash> when that path is too long)

Both servers bind 127.0.0.1 only and run in their own session, so a Ctrl-C on the terminal reaches
the parent alone and the parent decides the order they stop in.

This module holds what the two share: the server handle, the data directory, port, pid and log checks.
The servers are started by `embedded_redis.start_redis` and `embedded_postgres.start_postgres`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.logging import get_logger

log = get_logger(__name__)

HOST = "127.0.0.1"
LOG_TAIL_LINES = 25


@dataclass(eq=False)
class EmbeddedServer:
    """A running embedded server. `stop()` is idempotent and safe to call from several places."""

    name: str
    url: str
    pid: int
    log_path: Path
    data_path: Path
    _stopper: Callable[[float], None] = field(repr=False)
    _stopped: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self, timeout_s: float = 30) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopper(timeout_s)
            self._stopped = True
        log.info("embedded.stopped", server=self.name, pid=self.pid)


def prepare_data_dir(data_dir: Path) -> Path:
    # Absolute: paths end up in server configs and pg_ctl runs with cwd=/.
    data_dir = data_dir.expanduser().resolve()
    with setup_step("create the data directory", data_dir):
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    return data_dir


@contextlib.contextmanager
def setup_step(what: str, where: Path) -> Iterator[None]:
    """File-system failures while preparing a server become a ConfigError saying what and where."""
    try:
        yield
    except OSError as exc:
        raise ConfigError(f"cannot {what} ({where}): {exc}") from exc


def mkdir_private(path: Path) -> None:
    # Private on creation: the AOF and the cluster hold every turn ingested. Existing dirs are left as
    # they are (PostgreSQL itself insists on 0700/0750 for PGDATA).
    path.mkdir(parents=True, exist_ok=True, mode=0o700)


def port_answers(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((HOST, port)) == 0


def read_pid(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16_384))
            data = fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        return f"(log unreadable: {exc})"
    return "\n".join(data.splitlines()[-lines:]) or "(log empty)"


__all__ = ["EmbeddedServer"]
