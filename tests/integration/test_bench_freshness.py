"""`hindsight bench freshness`, small: real embedded PostgreSQL and Redis, a real scheduler, worker and API with
the indexer inside it (bench/stack.py), turns written with the Python client and recalled over HTTP."""

from __future__ import annotations

import math

import pytest
from rich.console import Console

from bench import freshness
from pipeline.core.config import Settings


@pytest.mark.timeout(240)
def test_freshness_finds_every_sampled_turn_before_its_review_and_measures_review_both_ways() -> None:
    console = Console(record=True, width=160)
    r = freshness.run_freshness_bench(
        Settings(),
        rate=10.0,
        scopes=3,
        seconds=5.0,
        sample_every=2,
        review_scopes=2,
        review_per_scope=30,
        rounds=1,
        ingest_n=200,
        ingest_rounds=1,
        write=False,
        console=console,
    )
    f = r.freshness
    assert f.written == 50
    assert len(f.samples) == 25
    # Every sampled turn was returned by recall, by both sides, well within the time allowed.
    assert (f.found(), f.missed()) == (25, 0)
    assert (f.found(dense=True), f.missed(dense=True)) == (25, 0)
    # 50 turns over 3 scopes never reach the 30-turn trigger: found before any review, every one.
    assert f.found_unreviewed == 25
    for s in f.samples:
        assert s.any_s is not None
        assert s.dense_s is not None
        assert 0 < s.any_s <= s.dense_s < f.timeout_s
        assert s.any_gap_s is not None
        assert 0 < s.any_gap_s <= s.any_s
    assert 0 < f.p(0.5) <= f.p(0.95) <= f.p(1.0) < f.timeout_s
    assert f.recalls >= 25
    assert f.recall_errors == 0
    assert f.achieved_rate == pytest.approx(10.0, rel=0.1)

    assert math.isfinite(r.ingest["ratio_p50"])
    assert r.ingest["ratio_p50"] > 0

    assert [run.unreviewed for run in r.rounds] == [True, False]
    for run in r.rounds:
        assert run.turns == 60
        assert 0 < run.elapsed_s <= run.indexed_s
        assert run.turns_per_s == pytest.approx(60 / run.elapsed_s)
        assert {"worker", "scheduler", "indexer", "postgres"} <= set(run.cpu_s)
        assert all(run.cpu_s[role] > 0 for role in ("worker", "postgres")), run.cpu_s
    # Off, the indexer embeds nothing; on, it embeds every turn before its review does.
    assert r.cpu_ms_per_turn(True, "indexer") > r.cpu_ms_per_turn(False, "indexer")
    assert math.isfinite(r.review_ratio)
    assert r.review_ratio > 0

    figures = freshness.figures(r)
    assert figures["any_p95_s"] == f.p(0.95)
    assert figures["review_ratio"] == r.review_ratio
    assert r.problems == {}, r.problems  # no error in any role's log
    text = console.export_text()
    assert "write returned → returned by recall, p95" in text
    assert "review turns/s, read your writes on ÷ off" in text
