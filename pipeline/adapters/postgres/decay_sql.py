"""The decay pass as set-based SQL, in chunks of ids so no transaction holds a million row locks."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import make_engine, translate_errors
from pipeline.core.config import DecaySettings
from pipeline.forgetting.decay import SECONDS_PER_DAY, DecayParams

# weight = base_weight · exp(−λ · idle days), idle since the last access (or since it was stored).
# Only a memory that goes cold is queued for the indexer (its point must leave the index): the index holds
# no weight, recall reads it from PostgreSQL.
#
# Two details measured by `hindsight bench decay` (1M rows, see BENCHMARKS.md):
# - idle seconds come from date_part('epoch', …), a float8, not extract(epoch FROM …), which returns
#   numeric since PostgreSQL 14: the numeric arithmetic cost ~3 µs a row, ~3 s of a full pass.
# - the UPDATE's own side of the self-join repeats the chunk's id range: with only `e.id = next.id` the
#   planner hashed the chunk and joined it against a sequential scan of the whole table, every chunk.
_EPISODES = f"""
WITH next AS (
    SELECT id,
           base_weight * exp(-:rate * greatest(date_part('epoch', :now - coalesce(last_accessed, received_at)), 0)
                         / {SECONDS_PER_DAY}) AS w
    FROM episodes
    WHERE id >= :lo AND id < :hi AND status = 'kept' AND NOT core
), changed AS (
    UPDATE episodes e
    SET weight = next.w,
        status = CASE WHEN next.w < :cold THEN 'cold' ELSE e.status END,
        cold_reason = CASE WHEN next.w < :cold THEN 'decay' ELSE e.cold_reason END,
        cold_since = CASE WHEN next.w < :cold THEN :now ELSE e.cold_since END
    FROM next
    WHERE e.id = next.id AND e.id >= :lo AND e.id < :hi AND abs(e.weight - next.w) > 1e-9
    RETURNING e.id, next.w < :cold AS went_cold
), queued AS (  -- runs to completion although nothing reads it (a data-modifying WITH)
    INSERT INTO index_outbox (kind, ref_id) SELECT 'episode', id FROM changed WHERE went_cold
)
SELECT count(*) AS updated, count(*) FILTER (WHERE went_cold) AS cold
FROM changed
"""

_SEMANTIC = f"""
WITH next AS (
    SELECT id,
           base_weight * exp(-:rate * greatest(date_part('epoch', :now - coalesce(last_accessed, created_at)), 0)
                         / {SECONDS_PER_DAY}) AS w
    FROM semantic_memories
    WHERE id >= :lo AND id < :hi AND status = 'kept' AND NOT core AND valid_to IS NULL
), changed AS (
    UPDATE semantic_memories m
    SET weight = next.w,
        status = CASE WHEN next.w < :cold THEN 'cold' ELSE m.status END,
        cold_since = CASE WHEN next.w < :cold THEN :now ELSE m.cold_since END
    FROM next
    WHERE m.id = next.id AND m.id >= :lo AND m.id < :hi AND abs(m.weight - next.w) > 1e-9
    RETURNING m.id, next.w < :cold AS went_cold
), queued AS (  -- runs to completion although nothing reads it (a data-modifying WITH)
    INSERT INTO index_outbox (kind, ref_id) SELECT 'semantic', id FROM changed WHERE went_cold
)
SELECT count(*) AS updated, count(*) FILTER (WHERE went_cold) AS cold
FROM changed
"""


@dataclass
class DecayReport:
    updated: int = 0
    went_cold: int = 0
    queued: int = 0
    chunks: int = 0
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)


def run_decay(
    engine: Engine, now: datetime, params: DecayParams, *, chunk: int = 50_000, parallel: int = 1
) -> DecayReport:
    """One decay pass over every hot episode and open semantic memory. Returns what changed.

    The chunks are disjoint id ranges, so `parallel` connections can run them at once without waiting on
    each other's row locks; PostgreSQL spends the pass's time in the backend (computing and writing rows),
    so a second connection uses a second core (`hindsight bench decay`)."""
    report = DecayReport()
    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="decay") as pool:
        for kind, table, sql in (
            ("episode", "episodes", _EPISODES),
            ("semantic", "semantic_memories", _SEMANTIC),
        ):
            with translate_errors(), engine.connect() as conn:
                lo, hi = conn.execute(
                    text(f"SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM {table}")
                ).one()
            starts = range(int(lo), int(hi) + 1, chunk)
            results = list(pool.map(partial(_decay_chunk, engine, sql, now, params, chunk=chunk), starts))
            updated = sum(u for u, _ in results)
            cold = sum(c for _, c in results)
            # each memory gone cold leaves the index; nothing else is queued
            report.by_kind[kind] = {"updated": updated, "cold": cold, "queued": cold}
            report.chunks += len(results)
            report.updated += updated
            report.went_cold += cold
            report.queued += cold
    return report


def run_configured_decay(db_url: str, now: datetime, settings: DecaySettings) -> DecayReport:
    """The pass as configured (the beat job, `hindsight decay`), on a pool of its own sized to its
    connections: a process's shared pool is sized for other work and would make the chunks queue for it."""
    engine = make_engine(db_url, pool_size=settings.parallel)
    try:
        return run_decay(
            engine,
            now,
            DecayParams(rate_per_day=settings.rate_per_day, cold_below=settings.cold_below),
            chunk=settings.chunk,
            parallel=settings.parallel,
        )
    finally:
        engine.dispose()


def _decay_chunk(
    engine: Engine, sql: str, now: datetime, params: DecayParams, start: int, *, chunk: int
) -> tuple[int, int]:
    """(rows updated, rows gone cold) of the ids [start, start + chunk), in one transaction."""
    with translate_errors(), engine.begin() as conn:
        row = conn.execute(
            text(sql),
            {
                "rate": params.rate_per_day,
                "cold": params.cold_below,
                "now": now,
                "lo": start,
                "hi": start + chunk,
            },
        ).one()
        if row.cold:
            conn.execute(text("SELECT pg_notify('hindsight_outbox', 'decay')"))
    return int(row.updated), int(row.cold)
