"""The scaling and soak benches' machinery, small: real embedded PostgreSQL and Redis, real scheduler,
worker and indexer processes (bench/stack.py), as `hindsight bench scaling|soak` run them."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from bench import scaling, soak
from bench.review import E2E_TRIGGER
from pipeline.core.config import Settings
from tests.tiny_locomo import write_tiny_locomo


@pytest.mark.timeout(240)
def test_scaling_reviews_every_turn_with_1_and_2_workers_and_costs_come_from_real_counts(
    tmp_path: Path,
) -> None:
    console = Console(record=True, width=140)
    r = scaling.run_scaling_bench(
        Settings(),
        turns=60,
        rounds=1,
        data=write_tiny_locomo(tmp_path / "locomo.json"),
        micro_points=600,
        micro_entries=2000,
        write=False,
        console=console,
    )
    assert [run.workers for run in r.runs] == [1, 2]
    for run in r.runs:
        assert run.reviewed == 60  # every pushed turn, warm-up excluded
        assert len(run.per_worker_reviews) == run.workers
        # 60 turns over 10 scopes: at least one review per scope, each logged by the worker that ran it.
        assert sum(run.per_worker_reviews) >= 60 // E2E_TRIGGER
        assert run.turns_per_s == pytest.approx(60 / run.elapsed_s)
        assert run.indexed_s >= run.elapsed_s > 0
        assert set(run.cpu_s) == {"worker", "scheduler", "indexer", "postgres", "redis"}
        # Redis may use less than one clock tick (10 ms) of CPU for 60 turns: only the others must show.
        assert all(run.cpu_s[role] > 0 for role in ("worker", "scheduler", "indexer", "postgres")), run.cpu_s
        assert run.cpu_s["redis"] >= 0
    two = r.side(2)[0]
    assert all(n > 0 for n in two.per_worker_reviews), f"both workers took reviews: {two.per_worker_reviews}"
    worker_ms = sum(run.cpu_s["worker"] for run in r.runs) * 1000 / 120
    assert r.model.per_turn_ms["worker"] == pytest.approx(worker_ms)
    assert r.model.per_worker_core == pytest.approx(1000 / worker_ms)
    assert r.wall_ratio == pytest.approx(r.tps(2) / r.tps(1))
    assert r.micro.xadd_per_s > 0
    assert r.micro.upsert_per_s > 0
    assert r.micro.search_per_s > 0
    first, at = r.model.first
    assert at == min(r.model.ceilings.values())
    assert first in r.model.ceilings
    scaling.chart(r, tmp_path / "scaling.png")
    assert (tmp_path / "scaling.png").read_bytes()[:4] == b"\x89PNG"
    assert "turns per worker-CPU-second" in console.export_text()


@pytest.mark.timeout(240)
def test_soak_loses_nothing_dead_letters_bad_input_and_samples_memory(tmp_path: Path) -> None:
    r = soak.run_soak_bench(
        Settings(),
        turns=150,
        bad_every=25,
        sample_s=1.0,
        data=write_tiny_locomo(tmp_path / "locomo.json"),
        write=False,
        console=Console(record=True, width=140),
    )
    assert r.injected == 6
    failed = [c for c in r.checks if not c.ok]
    assert not failed, failed
    assert {c.name for c in r.checks} >= {
        "soak turns stored as episodes",
        "kept points missing from the index",
    }
    assert sum(r.dead_reasons.values()) == 6
    assert set(r.dead_reasons) == {"role", "content", "ts", "metadata"}  # each injected kind, with its reason
    assert r.lost_ok
    roles = set(r.trends)
    assert {"scheduler", "worker-1", "worker-2", "indexer", "postgres", "redis"} <= roles
    assert all(t.end_mb > 0 for t in r.trends.values())
    assert r.samples[-1].reviewed == 150
    assert r.samples[-1].pushed == 150
    soak.chart(r, tmp_path / "soak.png")
    assert (tmp_path / "soak.png").read_bytes()[:4] == b"\x89PNG"
