"""The scaling model's arithmetic: per-core rate, ceilings, the first to saturate, cost per million turns."""

from __future__ import annotations

import pytest

from bench.scaling import Micro, Run, group_usage, per_turn_costs, scaling_model
from bench.stack import Usage


def test_workers_scale_linearly_until_the_lowest_ceiling() -> None:
    per_turn = {"worker": 0.020, "scheduler": 0.001, "indexer": 0.0005, "postgres": 0.002, "redis": 0.0001}
    m = scaling_model(per_turn, Micro(), pg_cores=4)
    assert m.per_worker_core == pytest.approx(50.0)
    assert m.ceilings == pytest.approx(
        {"scheduler": 1000.0, "indexer": 2000.0, "postgres (4 cores)": 2000.0, "redis": 10_000.0}
    )
    assert m.first == ("scheduler", pytest.approx(1000.0))
    rows = {w: (tps, lim) for w, tps, lim in m.rows}
    assert rows[16] == (pytest.approx(800.0), "workers")
    assert rows[32] == (pytest.approx(1000.0), "scheduler")
    # 23.6 ms of CPU per turn: 1e6 turns = 23,600 CPU-s = 6.56 CPU-hours.
    assert m.cpu_hours_per_million == pytest.approx(23.6e-3 * 1e6 / 3600)
    assert m.per_turn_ms["worker"] == pytest.approx(20.0)


def test_micro_benchmarks_add_their_own_ceilings() -> None:
    m = scaling_model({"worker": 0.01}, Micro(xadd_per_s=30_000, xreadgroup_per_s=60_000, upsert_per_s=500))
    assert m.ceilings["redis streams alone"] == pytest.approx(20_000.0)  # one XADD and one delivery per turn
    assert m.first == ("qdrant upsert (local)", 500.0)


def test_cpu_is_summed_per_role_group_between_two_readings() -> None:
    before = {"worker-1": Usage(10.0, 500), "worker-2": Usage(5.0, 500), "scheduler": Usage(1.0, 90)}
    after = {
        "worker-1": Usage(30.0, 600),
        "worker-2": Usage(20.0, 600),
        "scheduler": Usage(2.5, 90),
        "postgres": Usage(4.0, 60),  # not read before: counted from zero
    }
    assert group_usage(before, after) == pytest.approx({"worker": 35.0, "scheduler": 1.5, "postgres": 4.0})


def test_per_turn_costs_pool_every_run() -> None:
    runs = [Run(1, 0, 100, cpu_s={"worker": 2.0, "redis": 0.1}), Run(2, 0, 300, cpu_s={"worker": 6.0})]
    assert per_turn_costs(runs) == pytest.approx({"worker": 0.02, "redis": 0.1 / 400})
