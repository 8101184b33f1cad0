"""The `hindsight` command line: the app, its global options, every command group, and `main()`.

Roles run in-process; client commands talk to the HTTP API. The commands live beside this module, one module
per group: inspect (read-only views), roles (the long-running processes), memory (turns in, memories out,
review, decay, forget), quarantine, keys and bench.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from pipeline.cli import bench, inspect, keys, memory, quarantine, roles, support, updates
from pipeline.cli.support import example, fail
from pipeline.core.errors import HindsightError, RetryableError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Hindsight: agent memory that improves in hindsight.",
    epilog=example("hindsight up", 'hindsight recall "where does the user live" --agent demo --user ana'),
)


@app.callback()
def _global(
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help="the API key client commands send (default: HINDSIGHT_API_KEY)"),
    ] = None,
) -> None:
    support.api_key_option = api_key


# `hindsight --help` lists the commands in the order they are registered, then the groups in theirs.
inspect.register(app)
roles.register(app)
memory.register(app)
bench.register(app)
quarantine.register(app)
updates.register(app)
keys.register(app)


def main() -> None:
    import redis
    from sqlalchemy.exc import OperationalError

    try:
        app()
    except RetryableError as exc:  # something we depend on is down: exit 2, like an unreachable API
        _die(str(exc), 2)
    except HindsightError as exc:
        _die(str(exc), 1)
    except OperationalError as exc:
        _die(f"cannot reach PostgreSQL: {exc.orig}", 2)
    except redis.ConnectionError as exc:
        _die(f"cannot reach Redis: {exc}", 2)


def _die(message: str, code: int) -> None:
    try:
        fail(message, code)
    except typer.Exit as stop:
        sys.exit(stop.exit_code)


if __name__ == "__main__":
    main()
