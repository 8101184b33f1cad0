"""structlog set-up: key-value events, JSON when not on a terminal."""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrNowLogger(structlog.PrintLogger):
    """Prints to whatever sys.stderr is at the time of the call, not the one at configure time: test and
    CLI runners swap and close stderr, and a logger holding the old one would fail on a closed file."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def configure_logging(level: str = "INFO", json: bool | None = None) -> None:
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(message)s", force=True)
    # Chatty at INFO and never what an operator is looking for.
    for name in ("httpx", "httpcore", "alembic", "urllib3"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=lambda *_args: _StderrNowLogger(),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
