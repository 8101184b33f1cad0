"""Beat jobs on the maintenance queue."""

from __future__ import annotations

from datetime import timedelta

from pipeline.adapters.postgres.decay_sql import run_configured_decay
from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
from pipeline.core.config import get_settings
from pipeline.core.logging import get_logger
from pipeline.ingest.validation import utcnow
from tasks import deps
from tasks.app import DECAY_TASK, RECONCILE_TASK, REVIEW_TASK, app
from tasks.review import MAX_ATTEMPTS

log = get_logger(__name__)
# A claimed batch not dispatched this long after its claim was left by a scheduler that died.
UNDISPATCHED_S = 30.0
# A running batch nobody holds the lease of is re-sent once it started this long ago: long enough for a
# review retried after an error (countdown <= settings.celery.retry_max_delay_s, at most 10 s) to take its
# lease again.
LEASE_GRACE_S = 15.0


@app.task(name=RECONCILE_TASK, acks_late=True)
def reconcile() -> int:
    """Send again every batch that is stuck: never dispatched, running on a worker that died (its lease
    is free), or dispatched and never started. A batch whose worker died in each of its MAX_ATTEMPTS
    starts is given up instead (the review task counts the failures it sees; these it never saw)."""
    settings = get_settings()
    repo = deps.repository()
    exhausted = repo.give_up_exhausted(max_attempts=MAX_ATTEMPTS, lease_grace_s=LEASE_GRACE_S)
    if exhausted:
        log.error("reconcile.gave_up", batches=exhausted[:50], count=len(exhausted), attempts=MAX_ATTEMPTS)
    stalled = repo.stalled_batches(
        undispatched_s=UNDISPATCHED_S, unfinished_s=settings.batch_stuck_s, lease_grace_s=LEASE_GRACE_S
    )
    for batch_id in stalled:
        app.send_task(REVIEW_TASK, args=[batch_id])
    if stalled:
        repo.mark_dispatched(stalled, utcnow())
        log.warning("reconcile.redispatched", batches=stalled[:50], count=len(stalled))
    return len(stalled)


@app.task(name=DECAY_TASK, acks_late=True)
def decay() -> dict[str, int]:
    """Hourly: recompute weights, move what faded below the threshold to cold storage."""
    settings = get_settings()
    report = run_configured_decay(settings.db_url, utcnow(), settings.decay)
    purged = 0
    if settings.decay.cold_retention_days is not None:
        cutoff = utcnow() - timedelta(days=settings.decay.cold_retention_days)
        purged = ForgettingStore(deps.repository().engine).purge_cold(older_than=cutoff)
    log.info(
        "decay.done", updated=report.updated, went_cold=report.went_cold, queued=report.queued, purged=purged
    )
    return {"updated": report.updated, "went_cold": report.went_cold, "purged": purged}
