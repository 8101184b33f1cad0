"""`/metrics` for Prometheus.

Two sources, chosen so that no process other than the API has to export anything:
- scrape time: stream length and consumer lag, dead letters and the LLM budget come from Redis;
  batches by trigger, review durations and sizes, LLM calls/failures and outbox lag come from
  PostgreSQL (`pipeline.adapters.postgres.metrics_sql`). These are true for the whole fleet at once,
  however many workers and schedulers run, and survive their restarts.
- in process: recall latency, measured where recall runs (this API).
A source that cannot be read is reported as `hindsight_scrape_up{source=...} 0` instead of failing
the scrape, so a Redis outage shows on the dashboard rather than as a gap.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from pipeline.adapters.llm import RedisBudget
from pipeline.adapters.postgres.metrics_sql import (
    DURATION_BUCKETS_S,
    SIZE_BUCKETS,
    ReviewMetrics,
    ReviewMetricsReader,
)
from pipeline.core.errors import HindsightError
from pipeline.core.logging import get_logger

log = get_logger(__name__)
RECALL_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ApiMetrics:
    """One registry per app (tests build several apps in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.recall_latency = Histogram(
            "hindsight_recall_latency_seconds",
            "Time to answer one recall request, embedding the query included.",
            buckets=RECALL_BUCKETS_S,
            registry=self.registry,
        )

    def attach(self, deps: Any) -> None:
        self.registry.register(PipelineCollector(deps))


def _buckets(bounds: tuple[float, ...], counts: tuple[int, ...]) -> list[tuple[str, float]]:
    labels = [repr(float(b)) for b in bounds] + ["+Inf"]
    return list(zip(labels, [float(c) for c in counts], strict=True))


class PipelineCollector(Collector):
    def __init__(self, deps: Any) -> None:
        self.deps = deps
        self._reviews = ReviewMetricsReader(deps.repo.engine)

    def collect(self) -> Iterator[Any]:
        up = GaugeMetricFamily(
            "hindsight_scrape_up", "1 if the source could be read this scrape.", labels=["source"]
        )
        try:
            yield from self._redis()
            up.add_metric(["redis"], 1)
        except HindsightError as exc:
            log.warning("metrics.redis_unavailable", error=str(exc)[:200])
            up.add_metric(["redis"], 0)
        try:
            yield from self._postgres(self._reviews.read())
            up.add_metric(["postgres"], 1)
        except HindsightError as exc:
            log.warning("metrics.postgres_unavailable", error=str(exc)[:200])
            up.add_metric(["postgres"], 0)
        yield up

    def _redis(self) -> Iterator[Any]:
        settings = self.deps.settings
        s = self.deps.stream.stats(settings.scheduler_group)
        yield GaugeMetricFamily("hindsight_stream_length", "Entries in the turn stream.", value=s["length"])
        yield GaugeMetricFamily(
            "hindsight_stream_lag",
            "Stream entries not yet delivered to the scheduler group (consumer lag).",
            value=s["lag"],
        )
        yield GaugeMetricFamily(
            "hindsight_stream_pending",
            "Entries delivered to a scheduler and not yet acknowledged.",
            value=s["pending"],
        )
        yield GaugeMetricFamily(
            "hindsight_dead_letters", "Entries in the dead-letter stream.", value=s["dead_letters"]
        )
        llm = settings.llm
        yield GaugeMetricFamily(
            "hindsight_llm_enabled", "1 if an LLM endpoint is configured.", value=int(llm.enabled)
        )
        left = RedisBudget(self.deps.stream.client, llm.daily_calls, llm.daily_tokens).remaining()
        budget = GaugeMetricFamily(
            "hindsight_llm_budget_remaining", "LLM calls and tokens left today (UTC).", labels=["resource"]
        )
        budget.add_metric(["calls"], left["calls"])
        budget.add_metric(["tokens"], left["tokens"])
        yield budget

    def _postgres(self, m: ReviewMetrics) -> Iterator[Any]:
        dispatched = CounterMetricFamily(
            "hindsight_batches_dispatched", "Review batches sent to the workers.", labels=["trigger", "kind"]
        )
        for (trigger, kind), n in sorted(m.dispatched.items()):
            dispatched.add_metric([trigger, kind], n)
        yield dispatched
        status = GaugeMetricFamily("hindsight_batches", "Review batches by status.", labels=["status"])
        for name, n in sorted(m.batches_by_status.items()):
            status.add_metric([name], n)
        yield status
        duration = HistogramMetricFamily(
            "hindsight_review_duration_seconds", "Wall time of one review, claim to commit.", labels=["kind"]
        )
        size = HistogramMetricFamily(
            "hindsight_review_batch_size", "Episodes in one reviewed batch.", labels=["kind"]
        )
        for kind in sorted(m.duration):
            d, b = m.duration[kind], m.size[kind]
            duration.add_metric([kind], _buckets(DURATION_BUCKETS_S, d.buckets), d.total)
            size.add_metric([kind], _buckets(tuple(float(x) for x in SIZE_BUCKETS), b.buckets), b.total)
        yield duration
        yield size
        yield CounterMetricFamily(
            "hindsight_llm_calls", "LLM calls made by reviews.", value=m.llm.get("llm_calls", 0)
        )
        yield CounterMetricFamily(
            "hindsight_llm_failures",
            "LLM calls that failed (the review fell back to rules).",
            value=m.llm.get("llm_failures", 0),
        )
        yield GaugeMetricFamily(
            "hindsight_outbox_pending", "Index updates waiting for the indexer.", value=m.outbox_pending
        )
        yield GaugeMetricFamily(
            "hindsight_outbox_oldest_seconds",
            "Age of the oldest waiting index update (index lag behind PostgreSQL).",
            value=m.outbox_oldest_s,
        )


router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    registry: CollectorRegistry = request.app.state.deps.metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
