"""`hindsight bench all` end to end, as a user runs it: two cheap benches at quick sizes against a real
PostgreSQL bench database and a real Redis db, through the CLI in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url

from bench import locomo
from bench.locomo_data import LocomoTurn
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.tables import episodes
from tests.integration.harness import REDIS_URL, REPO_ROOT

# The decay bench TRUNCATEs and refills its database, so it gets one of its own (a name with "bench" in it).
BENCH_DB_URL = os.environ.get(
    "HINDSIGHT_TEST_BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_test"
)


def _ensure_database(url: str) -> None:
    target = make_url(url)
    admin = target.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        if (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (target.database,)).fetchone()
            is None
        ):
            conn.execute(f'CREATE DATABASE "{target.database}"')


def test_bench_all_quick_runs_the_chosen_benches_and_summarises_their_figures(tmp_path: Path) -> None:
    _ensure_database(BENCH_DB_URL)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "COLUMNS": "200",  # the summary table on one line per row
        "HINDSIGHT_LOG_LEVEL": "WARNING",
    }
    t0 = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "bench",
            "all",
            "--quick",
            "--only",
            "decay",
            "--only",
            "ingest",
            "--no-write",
            "--database-url",
            BENCH_DB_URL,
            "--redis-url",
            REDIS_URL,
        ],
        cwd=tmp_path,  # BENCHMARKS.md and docs/bench/ would land here: --no-write must leave it empty
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - t0
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert elapsed < 90, f"bench all --quick of two cheap benches took {elapsed:.0f} s"

    summary = done.stdout.split("bench all: summary", 1)[1]
    assert "quick sizes" in summary
    # Registry order (ingest before decay), whatever order --only named them in.
    ingest = re.search(
        r"│ ingest\s+│\s+([\d.]+) s\s+│ write_memory ÷ raw XADD, p50: ([\d.]+)\s+│ ≤ 2.0\s+│ (yes|no)",
        summary,
    )
    decay = re.search(
        r"│ decay\s+│\s+([\d.]+) s\s+│ full pass, 20,000 rows \(s\): ([\d.]+)\s+│ ≤ 0.6 s\s+│ (yes|no)",
        summary,
    )
    assert ingest is not None, summary
    assert decay is not None, summary
    assert ingest.start() < decay.start()
    assert 0.0 < float(ingest.group(2)) < 50.0  # write_memory costs more than a raw XADD, not 50 times more
    assert float(decay.group(2)) > 0.0
    assert re.search(r"full pass ÷ plain UPDATE of the same rows: [\d.]+", summary)
    assert re.search(
        r"machine: CPU .+; cores \d+; RAM [\d.]+ GiB; .*torch .*onnxruntime .*commit \w+", summary
    )
    assert list(tmp_path.iterdir()) == []


def test_locomo_reuse_needs_the_ingested_turns_not_only_the_fingerprint(
    repo: Repository, clean: None
) -> None:
    # `bench all --database-url` shares one database: a later bench TRUNCATEs the episodes but not the
    # fingerprint table, and reusing then would score an empty index (recall 0.000, seen in a quick run).
    turns = [
        LocomoTurn("conv-x", "D1:1", 1, "Ana", "I moved to Lisbon.", None, datetime(2023, 5, 1, tzinfo=UTC)),
        LocomoTurn("conv-x", "D1:2", 1, "Bo", "Nice, since when?", None, datetime(2023, 5, 1, tzinfo=UTC)),
    ]
    assert not locomo._holds_turns(repo.engine, turns)
    with repo.engine.begin() as conn:
        conn.execute(
            insert(episodes),
            [
                {
                    "turn_id": turns[0].turn_id,
                    "agent_id": locomo.AGENT,
                    "user_id": turns[0].conversation,
                    "session_id": turns[0].session_id,
                    "role": "user",
                    "content": turns[0].content,
                    "ts": turns[0].ts,
                    "source": "user",
                    "status": "kept",
                }
            ],
        )
    assert locomo._holds_turns(repo.engine, turns)
    with repo.engine.begin() as conn:
        conn.execute(text("UPDATE episodes SET agent_id = 'someone-else'"))
    assert not locomo._holds_turns(repo.engine, turns)  # another agent's rows do not count
