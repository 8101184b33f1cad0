"""`hindsight bench faults`: the fault suite (tests/faults) run as a benchmark of record.

The scenarios are tests first: CI runs them with `make test-faults` and they assert the recovery. Run
from here they also write their recovery times, the SIGKILL storm and the backlog figures to
BENCHMARKS.md. They need the repository checkout (the scenarios live under tests/), private embedded
servers (they stop and start them), and 15-30 minutes of a 2-core machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from pipeline.core.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
SUITE = REPO_ROOT / "tests" / "faults"
WRITE_ENV = "HINDSIGHT_BENCH_WRITE"  # read by tests/faults/stack.py


def run_faults_bench(*, write: bool, console: Console, select: str | None = None) -> dict[str, float]:
    """Run the fault scenarios (all, or those matching pytest's `-k select`); raise if one fails."""
    if not SUITE.is_dir():
        raise ConfigError(f"the fault scenarios are not here ({SUITE}): run this from a repository checkout")
    command = [sys.executable, "-m", "pytest", str(SUITE), "-q", "-s", "-p", "no:cacheprovider"]
    if select:
        command += ["-k", select]
    env = {**os.environ, WRITE_ENV: "1" if write else "0"}
    started = time.perf_counter()
    console.print(f"running {' '.join(command[2:])} (15-30 minutes)")
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise ConfigError(f"fault scenarios failed (pytest exit {done.returncode}) after {seconds:.0f} s")
    console.print(f"fault scenarios passed in {seconds:.0f} s" + ("; BENCHMARKS.md updated" if write else ""))
    return {"seconds": round(seconds, 1), "passed": 1.0}
