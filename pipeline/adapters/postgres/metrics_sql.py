"""The pipeline's counters and histograms, read from the system of record at scrape time.

Workers and schedulers run in other processes (and on other machines). Rather than have each of them
export its own metrics, every review already leaves a row in `reviews` (durations, batch size, LLM
calls and failures) and every dispatch a row in `batches`: the API aggregates those at scrape time.
Counters derived this way survive worker restarts and need no shared multiprocess directory.

`reviews` only grows (one row per batch, never updated), so it is not rescanned per scrape: rows
finished more than `settle_s` ago are folded once into running totals, and each scrape aggregates only
the rows after them (an index range scan of the primary key). Settling by age, not by id alone, is what
keeps a review whose transaction commits after a later one's from being skipped: it assumes a review
commits within `settle_s` of finishing (its commit follows at once in the same transaction).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

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
    FROM reviews r WHERE r.id > :after AND r.id <= :upto GROUP BY r.kind
"""
_SETTLED_UPTO_SQL = """
    SELECT max(r.id) FROM reviews r
    WHERE r.id > :after AND r.finished_at < now() - make_interval(secs => :settle_s)
"""
_NO_LIMIT = 2**63 - 1


def _hist(row: dict[str, float], prefix: str, n_bounds: int, count: int) -> Histogram:
    buckets = (*tuple(int(row[f"{prefix}_{i}"]) for i in range(n_bounds)), count)
    return Histogram(buckets, float(row[f"{prefix}_sum"]), count)


# Per kind, the aggregate row's numbers in _REVIEWS_SQL's column order (after kind).
_Totals = dict[str, list[float]]


def _add(into: _Totals, rows: _Totals) -> _Totals:
    out = {k: list(v) for k, v in into.items()}
    for kind, values in rows.items():
        if kind in out:
            out[kind] = [a + b for a, b in zip(out[kind], values, strict=True)]
        else:
            out[kind] = list(values)
    return out


class ReviewMetricsReader:
    """The /metrics aggregates; keep one per process so settled review rows are read once."""

    def __init__(self, engine: Engine, *, settle_s: float = 300.0) -> None:
        self.engine = engine
        self.settle_s = settle_s
        self._settled_id = 0
        self._settled: _Totals = {}
        self._lock = threading.Lock()  # scrapes may overlap; the fold must happen once

    def read(self) -> ReviewMetrics:
        with self._lock:
            return self._read()

    def _aggregate(self, conn: Any, after: int, upto: int) -> _Totals:
        rows = conn.execute(text(_REVIEWS_SQL), {"after": after, "upto": upto})
        return {row.kind: [float(v) for v in tuple(row)[1:]] for row in rows}

    def _read(self) -> ReviewMetrics:
        m = ReviewMetrics()
        with translate_errors(), self.engine.connect() as conn:
            upto = conn.execute(
                text(_SETTLED_UPTO_SQL), {"after": self._settled_id, "settle_s": self.settle_s}
            ).scalar()
            if upto is not None:
                self._settled = _add(self._settled, self._aggregate(conn, self._settled_id, int(upto)))
                self._settled_id = int(upto)
            totals = _add(self._settled, self._aggregate(conn, self._settled_id, _NO_LIMIT))
            _read_batches(conn, m)
        _fill_reviews(m, totals)
        return m


def _fill_reviews(m: ReviewMetrics, totals: _Totals) -> None:
    columns = ["n", *_column_names("d", len(DURATION_BUCKETS_S)), *_column_names("s", len(SIZE_BUCKETS))]
    columns += ["llm_calls", "llm_failures", "llm_fallbacks"]
    llm = {"llm_calls": 0, "llm_failures": 0, "llm_fallbacks": 0}
    for kind, values in totals.items():
        row = dict(zip(columns, values, strict=True))
        count = int(row["n"])
        m.duration[kind] = _hist(row, "d", len(DURATION_BUCKETS_S), count)
        m.size[kind] = _hist(row, "s", len(SIZE_BUCKETS), count)
        for key in llm:
            llm[key] += int(row[key])
    m.llm = llm


def _column_names(prefix: str, n_bounds: int) -> list[str]:
    return [*(f"{prefix}_{i}" for i in range(n_bounds)), f"{prefix}_sum"]


def read_review_metrics(engine: Engine) -> ReviewMetrics:
    """One snapshot from scratch (every review row); the API keeps a ReviewMetricsReader instead."""
    return ReviewMetricsReader(engine).read()


def _read_batches(conn: Any, m: ReviewMetrics) -> None:
    # One scan of `batches` for both families (a scrape used to read it twice). A fast worker can start a
    # batch before its dispatcher stamps dispatched_at (which then stays NULL): a batch that started was
    # dispatched all the same.
    rows = conn.execute(
        text(
            "SELECT trigger, kind, status, (dispatched_at IS NOT NULL OR started_at IS NOT NULL), count(*) "
            "FROM batches GROUP BY 1, 2, 3, 4"
        )
    )
    for trigger, kind, status, dispatched, n in rows:
        m.batches_by_status[status] = m.batches_by_status.get(status, 0) + int(n)
        if dispatched:
            m.dispatched[(trigger, kind)] = m.dispatched.get((trigger, kind), 0) + int(n)
    pending, oldest = conn.execute(
        text("SELECT count(*), extract(epoch FROM now() - min(created_at)) FROM index_outbox")
    ).one()
    m.outbox_pending, m.outbox_oldest_s = int(pending), float(oldest or 0.0)
