"""hindsight.review_batch: one batch through the review use case.

Every failure, whatever its class, counts against the batch's attempts (`batches.attempts`, raised by each
delivery that starts it): an upstream error (PostgreSQL down, a lock timeout) and a defect or bad data alike
are retried with backoff, and after MAX_ATTEMPTS the batch is given up (status `failed`, its last error
kept). Before, an error classed retryable was retried without limit, so a batch whose write could never
succeed (an INSERT past PostgreSQL's 65,535 parameters, issue 44) never reached the give-up path and kept
a worker busy for good while other scopes waited. A given-up batch's episodes stay `pending`: recallable
as unreviewed (read your writes), and an operator can send the batch again (`hindsight review --retry-failed`).
"""

from __future__ import annotations

import os
import socket

from celery import Task

from pipeline.adapters.postgres.batch_lease import batch_lease
from pipeline.core.config import get_settings
from pipeline.core.errors import RetryableError
from pipeline.core.logging import get_logger
from pipeline.ingest.validation import utcnow
from pipeline.review.review_batch import review_batch as review_use_case
from tasks import deps
from tasks.app import REVIEW_TASK, app

log = get_logger(__name__)
WORKER = f"{socket.gethostname()}:{os.getpid()}"
# Deliveries of one batch that started it (first run, retries, redeliveries, reconcile) before it is given
# up. An outage that keeps a review from starting (no lease, no start_batch) does not use any up.
MAX_ATTEMPTS = 5
# Celery's own bound on re-sends of one task, for when not even the failure can be recorded (PostgreSQL
# down for good): about an hour of 10 s countdowns; the batch then waits for beat's reconcile.
MAX_CELERY_RETRIES = 360


@app.task(name=REVIEW_TASK, bind=True, max_retries=MAX_CELERY_RETRIES, acks_late=True)
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
            if deps.repository().given_up(int(batch_id)):
                log.info("review.skipped", batch_id=batch_id, reason="given up after its attempts")
                return
            deps.check_model()
            report = review_use_case(
                int(batch_id),
                repo=deps.repository(),
                embedder=deps.embedder(),
                clock=utcnow,
                config=deps.review_config(),
                llm=deps.review_llm(),
                worker=WORKER,
            )
    except Exception as exc:
        _failed(self, int(batch_id), exc)
        return
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


def retry_delay(retries: int, *, base_s: float, cap_s: float) -> float:
    """Seconds before the next delivery of a failed review: doubling from base_s, never over cap_s. With a cap
    of 60, a 30 s database outage could leave a review waiting 32 s past its end (1+2+4+8+16 s of retries,
    then a 32 s countdown); settings.celery caps it at 10."""
    return min(base_s * 2 ** min(retries, 6), cap_s)


def _failed(task: Task, batch_id: int, exc: Exception) -> None:
    """Record the failure on the batch; give it up after MAX_ATTEMPTS, else send it again with backoff."""
    retryable = isinstance(exc, RetryableError)
    reason = f"{'retryable' if retryable else 'error'}: {exc!r}"
    try:
        gave_up = deps.repository().fail_batch(batch_id, reason, max_attempts=MAX_ATTEMPTS)
    except RetryableError as store_exc:
        # Not even the failure can be written (PostgreSQL down): no attempt was counted either; try later.
        gave_up = False
        log.warning("review.unrecorded", batch_id=batch_id, error=str(store_exc)[:300])
    celery = get_settings().celery
    delay = retry_delay(task.request.retries, base_s=celery.retry_base_s, cap_s=celery.retry_max_delay_s)
    if gave_up:
        # The dead-letter path: status `failed` with its reason (stats, metrics); the episodes stay pending.
        log.error("review.gave_up", batch_id=batch_id, attempts=MAX_ATTEMPTS, error=reason[:300])
        return
    if retryable:
        log.warning("review.retry", batch_id=batch_id, error=str(exc)[:300], retry_in_s=delay)
    else:
        log.exception("review.failed", batch_id=batch_id, retry_in_s=delay)
    raise task.retry(exc=exc, countdown=delay) from exc
