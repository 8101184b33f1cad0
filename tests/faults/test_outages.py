"""Outages of what the pipeline depends on: each time it recovers by itself and loses nothing.

One private stack for the module (starting review workers is the expensive part); the tests run in
file order and each leaves the stack whole again. Each measures the recovery time, from the end of its
fault until every turn it pushed is reviewed and indexed, and the last one writes the figures to
BENCHMARKS.md (section `faults`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.faults.stack import REPO_ROOT, Role, Servers, Stack, Traffic, push, record
from tests.helpers import free_port, wait_until
from tests.llm_stub import Reply, StubLLM

PG_DOWN_S = 30.0
LLM_FAULT_S = 20.0
TURNS = 300  # per scenario, half before the fault and half during it
CATCH_UP_S = 300.0
GOOD_JUDGE = Reply.good({"score": 0.8, "reason": "stub judge", "facts": []})

recoveries: dict[str, dict[str, object]] = {}


@pytest.fixture(scope="module")
def llm() -> Iterator[StubLLM]:
    with StubLLM(default=GOOD_JUDGE) as stub:
        yield stub


@pytest.fixture(scope="module")
def live(llm: StubLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    root = Path(tempfile.mkdtemp(prefix="hindsight-faults-"))
    servers = Servers(root)
    st = Stack(
        servers,
        tmp_path_factory.mktemp("outages"),
        extra_env={
            "HINDSIGHT_LLM__BASE_URL": llm.url,
            "HINDSIGHT_LLM__TIMEOUT_S": "2",
            "HINDSIGHT_LLM__MAX_RETRIES": "1",
            "HINDSIGHT_LLM__BREAKER_COOLDOWN_S": "5",
        },
    )
    try:
        servers.start()
        st.add("worker", "worker", "--loglevel=INFO")
        st.add("scheduler", "scheduler")
        st.add("indexer", "indexer", "--embedded")
        st.add("beat", "beat")
        st.start(*st.roles)
        st.roles["worker"].wait_ready()
        yield st
    finally:
        st.stop_all()
        if st._engine is not None:
            st._engine.dispose()
        servers.stop()
        shutil.rmtree(root, ignore_errors=True)


def _traffic(name: str, seed: int) -> tuple[Traffic, list[list[dict[str, str]]]]:
    traffic = Traffic.generate(TURNS, seed=seed, agents=2, users=2, duplicate_rate=0.02, prefix=name)
    half = len(traffic.entries) // 2
    return traffic, [traffic.entries[:half], traffic.entries[half:]]


def _catch_up(stack: Stack, traffic: Traffic, fault_ended: float, name: str, **extra: object) -> float:
    ids = sorted(traffic.unique_turn_ids)
    wait_until(lambda: stack.caught_up(ids), timeout=CATCH_UP_S, interval=0.25, what=f"recovery from {name}")
    recovery = time.monotonic() - fault_ended
    recoveries[name] = {"recovery_s": round(recovery, 1), "turns": len(ids), **extra}
    return recovery


def test_postgres_stopped_for_30_s(live: Stack) -> None:
    traffic, (before, during) = _traffic("pg", 101)
    stream = live.stream()
    push(stream, before)
    time.sleep(2)  # let reviews be in flight when the database goes away
    assert live.servers.pg is not None
    live.servers.pg.stop()
    down_at = time.monotonic()
    push(stream, during)  # the ingress keeps taking turns: Redis is up
    time.sleep(max(0.0, PG_DOWN_S - (time.monotonic() - down_at)))
    live.servers.start_postgres()
    ended = time.monotonic()
    _catch_up(live, traffic, ended, "PostgreSQL stopped 30 s", down_s=round(ended - down_at, 1))
    live.assert_nothing_lost(traffic)
    for name in ("worker", "scheduler", "indexer"):
        assert live.roles[name].alive(), f"{name} died of the outage:\n{live.roles[name].log()[-2000:]}"


def test_redis_restarted(live: Stack) -> None:
    traffic, (before, during) = _traffic("redis", 202)
    stream = live.stream()
    push(stream, before)
    time.sleep(1)
    assert live.servers.redis is not None
    live.servers.redis.stop()  # SHUTDOWN: the append-only file keeps what it acknowledged
    down_at = time.monotonic()
    live.servers.start_redis()
    ended = time.monotonic()
    push(live.stream(), during)
    _catch_up(live, traffic, ended, "Redis restarted (AOF)", down_s=round(ended - down_at, 1))
    live.assert_nothing_lost(traffic)
    for name in ("worker", "scheduler", "indexer"):
        assert live.roles[name].alive(), f"{name} died of the restart:\n{live.roles[name].log()[-2000:]}"


def test_index_folder_removed_then_reindex(live: Stack) -> None:
    traffic, (before, during) = _traffic("idx", 303)
    push(live.stream(), before + during)
    ids = sorted(traffic.unique_turn_ids)
    wait_until(lambda: live.caught_up(ids), timeout=CATCH_UP_S, interval=0.5, what="turns indexed")
    live.roles["indexer"].stop()
    expected = len(live.repo.indexable_point_ids())
    assert expected > 0
    shutil.rmtree(live.index_path)
    # Embedded mode: the API process owns the folder and runs the indexer that rebuilds it.
    port = free_port()
    api_env = {"HINDSIGHT_API_PORT": str(port), "HINDSIGHT_API_URL": f"http://127.0.0.1:{port}"}
    api = live.add("api", "api", "--indexer", env=api_env)
    api.start()
    try:
        wait_until(lambda: _healthy(port, api), timeout=180, interval=0.5, what="the API")
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "pipeline.cli", "reindex"],
            env=api.env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "queued" in result.stdout, result.stdout
        wait_until(lambda: live.repo.outbox_lag()[0] == 0, timeout=CATCH_UP_S, interval=0.25, what="reindex")
        recovery = time.monotonic() - started
        points = httpx.get(f"http://127.0.0.1:{port}/v1/stats", timeout=30).json()["index"]["points"]
    finally:
        api.stop()
        del live.roles["api"]
    recoveries["Qdrant folder removed, `hindsight reindex`"] = {
        "recovery_s": round(recovery, 1),
        "turns": len(ids),
        "points": points,
    }
    assert points == expected
    live.assert_index_agrees()
    live.roles["indexer"].start()


def _healthy(port: int, api: Role) -> bool:
    if not api.alive():
        raise AssertionError(f"the API exited:\n{api.log()[-2000:]}")
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.parametrize(
    ("mode", "reply"),
    [("failing", Reply.error(500)), ("hanging", Reply.hang(30))],
)
def test_llm_endpoint_failing_or_hanging(live: Stack, llm: StubLLM, mode: str, reply: Reply) -> None:
    traffic, (before, during) = _traffic(f"llm{mode}", 404 if mode == "failing" else 505)
    llm.default = reply
    stream = live.stream()
    fault_at = time.monotonic()
    push(stream, before)
    time.sleep(LLM_FAULT_S / 2)
    push(stream, during)
    time.sleep(max(0.0, LLM_FAULT_S - (time.monotonic() - fault_at)))
    llm.default = GOOD_JUDGE
    ended = time.monotonic()
    _catch_up(live, traffic, ended, f"LLM endpoint {mode} {LLM_FAULT_S:.0f} s")
    live.assert_nothing_lost(traffic)
    fallbacks = live.scalar(
        "SELECT coalesce(sum((counts->>'llm_fallbacks')::int), 0) FROM reviews r"
        " WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.turn_id = ANY(:ids)"
        " AND r.batch_id IN (e.full_batch_id, e.light_batch_id))",
        ids=sorted(traffic.unique_turn_ids),
    )
    # The rules took over while the endpoint was down: reviews went on, they did not wait for it.
    assert fallbacks > 0
    recoveries[f"LLM endpoint {mode} {LLM_FAULT_S:.0f} s"]["llm_fallbacks"] = fallbacks


def test_zz_pipeline_whole_after_all_faults(live: Stack) -> None:
    live.roles["indexer"].stop()
    live.assert_no_overlapping_facts()
    live.assert_index_agrees()
    live.roles["indexer"].start()
    lines = [
        "## Faults: recovery from outages (`hindsight bench faults`)",
        "",
        "Fault recovery (`pytest tests/faults/test_outages.py`): private embedded PostgreSQL and Redis (AOF),",
        "real `hindsight worker` (1), `scheduler`, `indexer --embedded` and `beat` processes, LLM at tests/llm_stub.py.",
        "Recovery = from the end of the fault until every turn of the scenario is reviewed and indexed.",
        "",
        "| fault | turns | recovery (s) | notes |",
        "|---|---:|---:|---|",
    ]
    for name, r in recoveries.items():
        notes = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("recovery_s", "turns"))
        lines.append(f"| {name} | {r['turns']} | {r['recovery_s']} | {notes} |")
    lines.append("")
    lines.append(
        f"Load average at the end: {Path('/proc/loadavg').read_text().split()[:3]} (2 cores, shared)."
    )
    record("faults", "\n".join(lines))
    assert len(recoveries) == 5, recoveries
