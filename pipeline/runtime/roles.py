"""The long-running roles, one per process: what `hindsight <role>` and `hindsight up` start."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from typing import Any

from pipeline.core.config import SECRET_FILES, Settings
from pipeline.core.logging import get_logger

log = get_logger(__name__)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, _frame: Any) -> None:
        log.info("signal.received", signal=signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def run_scheduler(settings: Settings) -> None:
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.redis_stream import TurnStream, connect
    from pipeline.ingest.validation import utcnow
    from scheduler.runner import SchedulerRunner, config_from_settings
    from tasks.app import REVIEW_TASK, create_app
    from tasks.deps import write_side_screen

    celery_app = create_app(settings)

    def dispatch(batch_id: int) -> None:
        celery_app.send_task(REVIEW_TASK, args=[batch_id])

    runner = SchedulerRunner(
        repo=Repository(make_engine(settings.db_url, pool_size=2)),
        stream=TurnStream(connect(settings.broker_url), settings.stream_turns, settings.stream_dead),
        dispatch=dispatch,
        config=config_from_settings(
            settings, group=settings.scheduler_group, screen=write_side_screen(settings)
        ),
        clock=utcnow,
    )
    _stop_on_signals(runner.stop_event)
    runner.run()


def run_worker(settings: Settings, *, queues: str, loglevel: str) -> None:
    from pipeline.runtime.heap import trim_between_tasks
    from tasks import deps
    from tasks.app import app

    # Without it a worker's memory climbs with every batch (glibc heap fragmentation; see pipeline/runtime/heap.py);
    # it trims only once memory has grown, since trimming after every batch slowed the next embedding.
    trim_between_tasks()
    check_model_at_start(settings)
    # Load the model before taking tasks (on a machine's first start, export it to ONNX: ~10 s), so the
    # first review is not slower than the rest and a broken model install fails the worker at start.
    deps.embedder().warm_up()
    name = f"review-{os.getpid()}@{socket.gethostname()}"
    # One review at a time per process (solo pool): scale out with more processes or machines.
    app.worker_main(
        ["worker", "--pool=solo", f"--queues={queues}", f"--loglevel={loglevel}", f"--hostname={name}"]
    )


def check_model_at_start(settings: Settings) -> None:
    """The configured embedding model is the store's (ConfigError otherwise: model_check says why)."""
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.runtime.model_check import checked_model

    engine = make_engine(settings.db_url, pool_size=1)
    try:
        checked_model(settings, engine)
    finally:
        engine.dispose()


def run_beat(settings: Settings, *, loglevel: str) -> None:
    from tasks.app import app

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    schedule = settings.data_dir / "celerybeat-schedule"
    app.start(["beat", f"--schedule={schedule}", f"--loglevel={loglevel}"])


def flower_password(settings: Settings) -> str:
    """The configured password, else the data directory's own (made once, 0600)."""
    from pipeline.runtime.secret_files import data_secret

    if settings.flower_password is not None:
        return settings.flower_password.get_secret_value()
    return data_secret(settings.data_dir, SECRET_FILES["flower"])


def run_flower(settings: Settings) -> None:
    from pipeline.core.errors import ConfigError

    user, password = settings.flower_user, flower_password(settings)
    if "," in user or ":" in user or "," in password:
        # Flower splits FLOWER_BASIC_AUTH at commas (several user:password pairs) and each at ':'.
        raise ConfigError("HINDSIGHT_FLOWER_USER / _PASSWORD: no ',' (nor ':' in the user) please")
    argv = [
        sys.executable,
        "-m",
        "celery",
        "--app=tasks.app",
        "flower",
        f"--port={settings.flower_port}",
        f"--address={settings.api_host}",
    ]
    # The credentials go through the environment (readable by this account only, /proc/<pid>/environ),
    # never argv, which any local user sees in `ps`.
    os.execve(sys.executable, argv, {**os.environ, "FLOWER_BASIC_AUTH": f"{user}:{password}"})


def build_api_deps(settings: Settings, *, run_indexer: bool) -> Any:
    from pipeline.adapters.embedder import make_embedder
    from pipeline.adapters.index_factory import open_index
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.forgetting_sql import ForgettingStore
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.redis_stream import TurnStream, connect
    from pipeline.adapters.switchable import SwitchableEmbedder, SwitchableIndex
    from pipeline.api.app import ApiDeps
    from pipeline.runtime.model_check import checked_model
    from tasks.app import REVIEW_TASK, create_app

    celery_app = create_app(settings)
    engine = make_engine(settings.db_url)
    recorded = checked_model(settings, engine)
    return ApiDeps(
        settings=settings,
        repo=Repository(engine),
        forgetting=ForgettingStore(engine),
        stream=TurnStream(connect(settings.broker_url), settings.stream_turns, settings.stream_dead),
        # Swappable, so that a model change (POST /v1/reindex with a model) switches them in place.
        index=SwitchableIndex(open_index(settings, recorded.collection), recorded.collection),
        embedder=SwitchableEmbedder(make_embedder(settings)),
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id]),
        run_indexer=run_indexer,
        claim_limit=settings.policy.max_batch,
    )


def run_api(settings: Settings, *, run_indexer: bool) -> None:
    import uvicorn

    from pipeline.api.app import create_app
    from pipeline.api.http_server import server_config

    app = create_app(build_api_deps(settings, run_indexer=run_indexer))
    config = server_config(app, host=settings.api_host, port=settings.api_port, log_level="warning")
    uvicorn.Server(config).run()


def run_indexer(settings: Settings) -> None:
    from pipeline.adapters.embedder import make_embedder
    from pipeline.adapters.index_factory import open_index
    from pipeline.adapters.indexer import Indexer
    from pipeline.adapters.model_identity import identity_of
    from pipeline.adapters.postgres.engine import libpq_dsn, make_engine
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.runtime.model_check import checked_model

    dsn = libpq_dsn(settings.db_url)
    engine = make_engine(settings.db_url, pool_size=2)
    # A model change switches collections inside the API process; a separate indexer is restarted after it.
    index = open_index(settings, checked_model(settings, engine).collection)
    embedder = None
    if settings.recall.unreviewed:  # it embeds the turns recallable before their review
        embedder = make_embedder(settings)
        embedder.warm_up()
    indexer = Indexer(
        # After a model change it refuses to index (and logs why) until it is restarted with the new model.
        Repository(engine, vectors_by=identity_of(settings)),
        index,
        dsn=dsn,
        poll_s=settings.indexer_poll_s,
        batch=settings.indexer_batch,
        embedder=embedder,
    )
    stop = threading.Event()
    _stop_on_signals(stop)
    indexer.start()
    stop.wait()
    indexer.stop()
    index.close()
