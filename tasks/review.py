"""hindsight.review_batch: one batch through the review use case."""

from __future__ import annotations

import os
import socket

from celery import Task

from pipeline.adapters.postgres.batch_lease import batch_lease
from pipeline.core.errors import RetryableError
from pipeline.core.logging import get_logger
from pipeline.ingest.validation import utcnow
from pipeline.review.review_batch import review_batch as review_use_case
from tasks import deps
from tasks.app import REVIEW_TASK, app

log = get_logger(__name__)
# Longest countdown before a review retried for upstream trouble runs again: with 60, a 30 s database outage
# could leave a review waiting 32 s past its end (1+2+4+8+16 s of retries, then a 32 s countdown).
MAX_RETRY_DELAY_S = 10
WORKER = f"{socket.gethostname()}:{os.getpid()}"
# Deliveries of one batch (first run, redeliveries, reconcile) before it is marked failed.
MAX_ATTEMPTS = 5


@app.task(name=REVIEW_TASK, bind=True, max_retries=None, acks_late=True)
def review_batch(self: Task, batch_id: int) -> None:
    try:
        # The lease (an advisory lock on a connection of its own) says "a live worker runs this batch":
        # if this process dies, it goes with the connection and beat's reconcile re-sends the batch
        # within a minute, instead of waiting for the broker's visibility timeout.
        with batch_lease(deps.lease_dsn(), int(batch_id)) as held:
            if not held:
                # Another delivery of the same batch (a visibility-timeout redelivery, a reconcile
                # re-send) is running it now; it finishes the batch, or its death frees the lease.
                log.info("review.skipped", batch_id=batch_id, reason="another worker holds its lease")
                return
            report = review_use_case(
                int(batch_id),
                repo=deps.repository(),
                embedder=deps.embedder(),
                clock=utcnow,
                config=deps.review_config(),
                llm=deps.review_llm(),
                worker=WORKER,
            )
    except RetryableError as exc:
        # Upstream trouble (PostgreSQL down...): try again later with backoff, nothing is lost meanwhile.
        delay = min(2 ** min(self.request.retries, 6), MAX_RETRY_DELAY_S)
        log.warning("review.retry", batch_id=batch_id, error=str(exc)[:300], retry_in_s=delay)
        raise self.retry(exc=exc, countdown=delay) from exc
    except Exception as exc:
        # A bug or bad data: keep the reason on the batch; the reconcile job retries it a few times.
        gave_up = deps.repository().fail_batch(int(batch_id), repr(exc), max_attempts=MAX_ATTEMPTS)
        log.exception("review.failed", batch_id=batch_id, gave_up=gave_up)
        raise
    if report is None:
        log.info("review.skipped", batch_id=batch_id, reason="already done or unknown")
        return
    log.info(
        "review.done",
        batch_id=report.batch_id,
        kind=report.kind,
        trigger=report.trigger,
        applied=report.applied,
        **report.counts,
        **{f"{k}_ms": v for k, v in report.timings_ms.items()},
    )
