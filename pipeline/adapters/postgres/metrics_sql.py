"""The pipeline's counters and histograms, read from the system of record at scrape time.

Workers and schedulers run in other processes (and on other machines). Rather than have each of them
export its own metrics, every review already leaves a row in `reviews` (durations, batch size, LLM
calls and failures) and every dispatch a row in `batches`: the API aggregates those in one pass per
scrape. Counters derived this way survive worker restarts and need no shared multiprocess directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine, text

from pipeline.adapters.postgres.engine import translate_errors

# Upper bounds, in seconds (durations) and episodes (batch sizes); +Inf is added by the exporter.
DURATION_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
SIZE_BUCKETS = (1, 5, 10, 30, 50, 100, 250, 500, 1000)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Cumulative bucket counts (one per bound, then +Inf), the sum and the count."""

    buckets: tuple[int, ...]
    total: float
    count: int


@dataclass
class ReviewMetrics:
    dispatched: dict[tuple[str, str], int] = field(default_factory=dict)  # (trigger, kind) -> batches
    batches_by_status: dict[str, int] = field(default_factory=dict)
    duration: dict[str, Histogram] = field(default_factory=dict)  # kind -> seconds
    size: dict[str, Histogram] = field(default_factory=dict)  # kind -> episodes
    llm: dict[str, int] = field(default_factory=dict)  # llm_calls / llm_failures / llm_fallbacks
    outbox_pending: int = 0
    outbox_oldest_s: float = 0.0


def _histogram_sql(expr: str, bounds: tuple[float, ...], prefix: str) -> str:
    # Bounds are module constants (never user input), so formatting them into the SQL is safe.
    cols = [f"count(*) FILTER (WHERE {expr} <= {b}) AS {prefix}_{i}" for i, b in enumerate(bounds)]
    return ", ".join([*cols, f"coalesce(sum({expr}), 0) AS {prefix}_sum"])


_DURATION = "extract(epoch FROM r.finished_at - r.started_at)"
_SIZE = "coalesce((r.counts->>'episodes')::int, 0)"
_REVIEWS_SQL = f"""
    SELECT r.kind, count(*) AS n,
           {_histogram_sql(_DURATION, DURATION_BUCKETS_S, "d")},
           {_histogram_sql(_SIZE, tuple(float(b) for b in SIZE_BUCKETS), "s")},
           coalesce(sum((r.counts->>'llm_calls')::int), 0) AS llm_calls,
           coalesce(sum((r.counts->>'llm_failures')::int), 0) AS llm_failures,
           coalesce(sum((r.counts->>'llm_fallbacks')::int), 0) AS llm_fallbacks
    FROM reviews r GROUP BY r.kind
"""


def _hist(row: object, prefix: str, n_bounds: int, count: int) -> Histogram:
    buckets = (*tuple(int(getattr(row, f"{prefix}_{i}")) for i in range(n_bounds)), count)
    return Histogram(buckets, float(getattr(row, f"{prefix}_sum")), count)


def read_review_metrics(engine: Engine) -> ReviewMetrics:
    """One snapshot: a handful of aggregate queries (one scan of `reviews`, one of `batches`)."""
    m = ReviewMetrics()
    with translate_errors(), engine.connect() as conn:
        # A fast worker can start a batch before its dispatcher stamps dispatched_at (which then stays
        # NULL): a batch that started was dispatched all the same.
        for trigger, kind, n in conn.execute(
            text(
                "SELECT trigger, kind, count(*) FROM batches "
                "WHERE dispatched_at IS NOT NULL OR started_at IS NOT NULL GROUP BY trigger, kind"
            )
        ):
            m.dispatched[(trigger, kind)] = int(n)
        for status, n in conn.execute(text("SELECT status, count(*) FROM batches GROUP BY status")):
            m.batches_by_status[status] = int(n)
        llm = {"llm_calls": 0, "llm_failures": 0, "llm_fallbacks": 0}
        for row in conn.execute(text(_REVIEWS_SQL)):
            count = int(row.n)
            m.duration[row.kind] = _hist(row, "d", len(DURATION_BUCKETS_S), count)
            m.size[row.kind] = _hist(row, "s", len(SIZE_BUCKETS), count)
            for key in llm:
                llm[key] += int(getattr(row, key))
        m.llm = llm
        pending, oldest = conn.execute(
            text("SELECT count(*), extract(epoch FROM now() - min(created_at)) FROM index_outbox")
        ).one()
        m.outbox_pending, m.outbox_oldest_s = int(pending), float(oldest or 0.0)
    return m
