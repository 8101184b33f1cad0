"""The Celery application. Configured from Settings; importing it loads no model."""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from pipeline.core.config import Settings, get_settings

REVIEW_QUEUE = "review"
MAINTENANCE_QUEUE = "maintenance"
REVIEW_TASK = "hindsight.review_batch"
RECONCILE_TASK = "hindsight.reconcile"
DECAY_TASK = "hindsight.decay"


def create_app(settings: Settings) -> Celery:
    app = Celery("hindsight", broker=settings.broker_url, include=["tasks.review", "tasks.maintenance"])
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        result_backend=None,
        task_ignore_result=True,
        # A task is acknowledged after it ran, and a worker that dies mid-task hands it back.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_queues=[Queue(REVIEW_QUEUE), Queue(MAINTENANCE_QUEUE)],
        task_default_queue=REVIEW_QUEUE,
        task_routes={
            REVIEW_TASK: {"queue": REVIEW_QUEUE},
            RECONCILE_TASK: {"queue": MAINTENANCE_QUEUE},
            DECAY_TASK: {"queue": MAINTENANCE_QUEUE},
        },
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            # Redis re-delivers an unacked task after this long; it must exceed the longest review,
            # or a slow review is delivered twice (harmless, tasks are idempotent, but wasteful).
            "visibility_timeout": settings.celery.visibility_timeout_s,
            # Sweep for tasks of dead workers every restore_interval_s (kombu's default is ~100 s).
            "unacked_restore_interval": settings.celery.restore_interval_s,
            "unacked_restore_throttle": 1,
        },
        worker_send_task_events=True,  # Flower
        task_send_sent_event=True,
        worker_hijack_root_logger=False,
        beat_schedule={
            "reconcile": {"task": RECONCILE_TASK, "schedule": settings.reconcile_every_s},
            "decay": {"task": DECAY_TASK, "schedule": settings.decay.every_s},
        },
    )
    return app


app = create_app(get_settings())
