"""Secrets `hindsight up` makes for itself and keeps in the data directory (<data_dir>/secrets/).

Each is random, made once, written 0600 in a 0700 directory, and read back on every later start, so
a restart keeps the same passwords. Roles get them through the environment or read the file; never
through argv, which every local user can read in `ps`.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from pipeline.core.errors import ConfigError
from pipeline.core.logging import get_logger

log = get_logger(__name__)


def secret_path(data_dir: Path, name: str) -> Path:
    return data_dir.expanduser().resolve() / "secrets" / name


def data_secret(data_dir: Path, name: str) -> str:
    """The secret `name` of this data directory, made on first use (48 hex characters: safe in URLs,
    config files and `user:password` pairs without quoting)."""
    path = secret_path(data_dir, name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return _read(path)
        value = secrets.token_hex(24)
        with os.fdopen(fd, "w") as out:
            out.write(value + "\n")
        log.info("secret.created", path=str(path))
        return value
    except OSError as exc:
        raise ConfigError(f"cannot keep the secret {name} in {path}: {exc}") from exc


def _read(path: Path) -> str:
    info = path.stat()
    if stat.S_IMODE(info.st_mode) & 0o077:
        # Made private again rather than refused: the file is ours, and refusing would leave the
        # operator with a stack that does not start over a chmod.
        path.chmod(0o600)
        log.warning("secret.permissions_tightened", path=str(path), mode=oct(stat.S_IMODE(info.st_mode)))
    value = path.read_text().strip()
    if not value:
        raise ConfigError(f"the secret file {path} is empty; delete it to have a new one made")
    return value
