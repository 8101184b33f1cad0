"""Run `hindsight` under a pseudo-terminal, as a person at a terminal would: Rich then writes colours,
hyperlinks and everything else a terminal obeys, which a pipe would not show."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    args: list[str], env: dict[str, str], *, columns: int = 160, timeout: float = 180.0
) -> tuple[int, str]:
    """(exit code, everything written to the terminal: stdout and stderr, as the terminal received it)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    clean = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM")}
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *args],
        stdin=slave, stdout=slave, stderr=slave, cwd=REPO_ROOT, start_new_session=True,
        env={**clean, "TERM": "xterm-256color", "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                raise AssertionError(f"hindsight {args} ran past {timeout}s: {b''.join(chunks)[-2000:]!r}")
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    return process.wait(30), b"".join(chunks).decode("utf-8", "replace")
