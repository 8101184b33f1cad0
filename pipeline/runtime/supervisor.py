"""`hindsight up`: the embedded servers plus one process per role, restarted if they die, stopped in order."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pipeline.core.config import Settings
from pipeline.core.logging import get_logger

log = get_logger(__name__)

# Stopped first to last: stop taking turns in, then stop serving, then stop reviewing. A role not named
# here is still stopped (see stop_order): a role added to `up` without a place here once kept its port
# after Ctrl-C, and the next `up` crash-looped it.
STOP_ORDER = ("scheduler", "beat", "mcp", "api", "indexer", "worker", "flower")


def stop_order(roles: list[str]) -> list[str]:
    """Every one of `roles`, each once: those STOP_ORDER names in its order, then the rest, last started first."""
    known = [r for r in STOP_ORDER if r in roles]
    rest = [r for r in reversed(list(dict.fromkeys(roles))) if r not in STOP_ORDER]
    return known + rest


@dataclass
class Child:
    role: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    started_at: float = 0.0
    dead_since: float | None = None
    _log_file: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
        self._log_file = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the child
        # A new session: Ctrl-C in the terminal reaches `up` only, which stops children in order.
        self.process = subprocess.Popen(
            self.argv, env=self.env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.started_at = time.monotonic()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout_s: float) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("up.kill", role=self.role, pid=self.process.pid)
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self._log_file is not None:
            self._log_file.close()


class Supervisor:
    def __init__(self, children: list[Child], *, on_tick: Callable[[], None] | None = None) -> None:
        self.children = children
        self.stop_event = threading.Event()
        self.on_tick = on_tick

    def run(self) -> None:
        for child in self.children:
            child.start()
            log.info("up.started", role=child.role, pid=child.process.pid if child.process else None)
        while not self.stop_event.wait(1.0):
            now = time.monotonic()
            for child in self.children:
                if child.alive():
                    continue
                if child.dead_since is None:
                    child.dead_since = now
                    code = child.process.returncode if child.process else None
                    log.warning("up.exited", role=child.role, exit_code=code, restarts=child.restarts)
                # Back off when a role keeps crashing, so a broken config does not spin.
                delay = 0 if child.restarts < 3 else min(2 ** (child.restarts - 2), 60)
                if now - child.dead_since >= delay:
                    child.restarts += 1
                    child.dead_since = None
                    child.start()
                    log.info("up.restarted", role=child.role, restarts=child.restarts)
            if self.on_tick is not None:
                self.on_tick()

    def stop(self, timeout_s: float = 20.0) -> None:
        self.stop_event.set()
        for role in stop_order([c.role for c in self.children]):
            for child in self.children:
                if child.role == role:
                    try:
                        child.stop(timeout_s)
                    except Exception:  # one role's failure to stop must not leave the others running
                        log.exception("up.stop_failed", role=role)


def role_argv(role: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", role, *extra]


def child_env(settings: Settings, urls: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(urls)
    env.setdefault("HINDSIGHT_LOG_JSON", "true")
    env["HINDSIGHT_DATA_DIR"] = str(settings.data_dir.resolve())
    return env
