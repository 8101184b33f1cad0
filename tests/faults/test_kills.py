"""10,000 turns while workers, schedulers and the indexer are SIGKILLed at random moments and restarted.

Afterwards nothing is lost or doubled: every turn is one episode, every batch was reviewed once in
effect, PostgreSQL and the Qdrant index agree point for point, and no fact chain overlaps itself.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.faults.stack import Stack, Traffic, push, record

TURNS = 10_000
MIN_KILLS = 20
SEED = 8  # the kill schedule and the traffic are reproducible from this
KILLABLE = {"worker-0": 3, "worker-1": 3, "scheduler": 2, "indexer": 2}  # role -> weight


@pytest.mark.timeout(1200)
def test_sigkill_storm_loses_and_doubles_nothing(stack: Stack) -> None:
    rng = random.Random(SEED)
    for name in ("worker-0", "worker-1"):
        stack.add(name, "worker", "--loglevel=INFO")
    stack.add("scheduler", "scheduler")
    stack.add("indexer", "indexer", "--embedded")
    stack.add("beat", "beat")
    stack.start(*stack.roles)
    traffic = Traffic.generate(TURNS, seed=SEED)
    chunks = list(traffic.chunks(250))
    stream = stack.stream()
    turn_ids = sorted(traffic.unique_turn_ids)

    kill_log: list[dict[str, object]] = []
    started = time.monotonic()
    next_kill = started + rng.uniform(2, 6)
    # Kills go on through arrival and catch-up alike, until everything is in and at least MIN_KILLS.
    while chunks or len(kill_log) < MIN_KILLS or not stack.caught_up(turn_ids):
        now = time.monotonic()
        if chunks:
            push(stream, chunks.pop(0))
        if now >= next_kill:
            # Workers are killed only once they took tasks: killing one that is still loading the model
            # would test nothing but start-up.
            ready = {name: w for name, w in KILLABLE.items() if stack.roles[name].ready()}
            if ready:
                name = rng.choices(list(ready), weights=list(ready.values()))[0]
                role = stack.roles[name]
                pid = role.process.pid if role.process else None
                role.kill()
                role.start()
                kill_log.append({"t_s": round(now - started, 2), "role": name, "pid": pid})
            next_kill = now + rng.uniform(4, 14)
        time.sleep(0.8 if chunks else 2.0)
        assert time.monotonic() - started < 1100, f"no catch-up after {len(kill_log)} kills: {kill_log}"
    elapsed = time.monotonic() - started
    (stack.root / "kills.json").write_text(json.dumps(kill_log, indent=1))
    print(f"{len(kill_log)} kills (seed {SEED}): {kill_log}")

    stack.roles["indexer"].stop()
    assert len(kill_log) >= MIN_KILLS
    assert {k["role"] for k in kill_log} >= {"scheduler", "indexer"}
    assert any(str(k["role"]).startswith("worker") for k in kill_log)
    stack.assert_nothing_lost(traffic)
    stack.assert_no_overlapping_facts()
    expected, _, _ = stack.assert_index_agrees()
    batches = stack.scalar("SELECT count(*) FROM batches")
    assert expected > 0
    assert stack.scalar("SELECT count(*) FROM facts") > 0  # the chains checked above exist
    by_role = Counter(str(k["role"]).split("-")[0] for k in kill_log)
    summary = (
        f"SIGKILL storm (`pytest tests/faults/test_kills.py`, seed {SEED}): {TURNS} turns "
        f"(+{traffic.duplicates} re-sent duplicates, {traffic.session_ends} session ends, 12 scopes) through 2 "
        f"`hindsight worker`, a `scheduler`, an `indexer --embedded` and `beat` on private servers; "
        f"{len(kill_log)} SIGKILLs ({', '.join(f'{r} {n}' for r, n in sorted(by_role.items()))}), each role "
        f"restarted at once. Everything reviewed and indexed {elapsed:.0f} s after the first turn; afterwards "
        f"0 lost or doubled episodes, {batches} batches each reviewed once, {expected} index points and 0 "
        f"missing/orphan, 0 overlapping fact intervals. Load average {Path('/proc/loadavg').read_text().split()[:3]} "
        "(2 cores, shared)."
    )
    record("faults-sigkill", "## Faults: SIGKILL storm (`hindsight bench faults`)\n\n" + summary)
