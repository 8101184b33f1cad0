"""Beat jobs on the maintenance queue."""

from __future__ import annotations

from pipeline.config import get_settings
from pipeline.logging import get_logger
from pipeline.validation import utcnow
from tasks import deps
from tasks.app import RECONCILE_TASK, REVIEW_TASK, app

log = get_logger(__name__)
# A claimed batch not dispatched this long after its claim was left by a scheduler that died.
UNDISPATCHED_S = 30.0


@app.task(name=RECONCILE_TASK, acks_late=True)
def reconcile() -> int:
    """Send again every batch that is stuck: never dispatched, or dispatched and never finished."""
    settings = get_settings()
    repo = deps.repository()
    stalled = repo.stalled_batches(undispatched_s=UNDISPATCHED_S, unfinished_s=settings.batch_stuck_s)
    for batch_id in stalled:
        app.send_task(REVIEW_TASK, args=[batch_id])
    if stalled:
        repo.mark_dispatched(stalled, utcnow())
        log.warning("reconcile.redispatched", batches=stalled[:50], count=len(stalled))
    return len(stalled)
