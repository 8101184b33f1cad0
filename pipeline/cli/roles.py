"""Long-running processes, one per role: `up` (all of them here), `migrate`, `scheduler`, `worker`, `beat`,
`api`, `indexer`, `mcp` and `flower`. They run in-process; the supervisor and compose start each with
`python -m pipeline.cli <role>`."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.support import example, fail, load_settings, out
from pipeline.core.errors import HindsightError


def up() -> None:
    """Run the whole pipeline here; with no URLs configured, on embedded Redis, PostgreSQL and Qdrant."""
    from pipeline.runtime.up import run_up

    try:
        run_up(load_settings(), out)
    except HindsightError as exc:
        fail(str(exc))


def migrate() -> None:
    """Create or upgrade the PostgreSQL schema."""
    from pipeline.adapters.postgres.migrate import upgrade

    settings = load_settings()
    upgrade(settings.db_url)
    out.print("schema is up to date")


def scheduler() -> None:
    """Consume the turn stream, store episodes and dispatch review batches."""
    from pipeline.runtime.roles import run_scheduler

    run_scheduler(load_settings())


def worker(
    queues: Annotated[str, typer.Option(help="Celery queues to consume")] = "review,maintenance",
    loglevel: str = "INFO",
) -> None:
    """A review worker (one review at a time; start more to scale out)."""
    from pipeline.runtime.roles import run_worker

    run_worker(load_settings(), queues=queues, loglevel=loglevel)


def beat(loglevel: str = "INFO") -> None:
    """The periodic jobs (reconcile stalled batches)."""
    from pipeline.runtime.roles import run_beat

    run_beat(load_settings(), loglevel=loglevel)


def api(
    indexer: Annotated[
        bool | None,
        typer.Option("--indexer/--no-indexer", help="also run the outbox indexer (default: when embedded)"),
    ] = None,
) -> None:
    """The HTTP API (recall, turns, stats)."""
    from pipeline.runtime.roles import run_api

    settings = load_settings()
    run_api(settings, run_indexer=(settings.qdrant_url is None) if indexer is None else indexer)


def indexer_cmd(
    embedded: Annotated[
        bool,
        typer.Option(
            "--embedded",
            help="own the in-process Qdrant under HINDSIGHT_DATA_DIR (no `hindsight api --indexer` may run on it)",
        ),
    ] = False,
) -> None:
    """Drain the index outbox into Qdrant (needs HINDSIGHT_QDRANT_URL; embedded mode runs it inside `api`)."""
    from pipeline.runtime.roles import run_indexer

    settings = load_settings()
    if settings.qdrant_url is None and not embedded:
        fail(
            "the embedded Qdrant can be opened by one process only: in embedded mode the indexer runs inside "
            "`hindsight api`; set HINDSIGHT_QDRANT_URL to run it on its own (or pass --embedded when no API "
            "process opens the folder)"
        )
    run_indexer(settings)


def mcp_cmd(
    transport: Annotated[str, typer.Option(help="stdio (a desktop client launches it) or http")] = "stdio",
    host: Annotated[str, typer.Option(help="http: address to listen on")] = "127.0.0.1",
    port: Annotated[
        int | None, typer.Option(help="http: port (0 = any free port; default HINDSIGHT_MCP_PORT or 8701)")
    ] = None,
) -> None:
    """The MCP server: memory tools over stdio or streamable HTTP (at /mcp), talking to the HTTP API.

    Example: hindsight mcp --transport http --port 8701
    """
    from pipeline.mcp.run import run_mcp

    if transport not in ("stdio", "http"):
        fail(f"--transport: expected stdio or http, got {transport!r}")
    settings = load_settings()
    port = port if port is not None else (settings.mcp_port or 8701)
    run_mcp(settings, transport="stdio" if transport == "stdio" else "http", host=host, port=port)


def flower() -> None:
    """Flower, the Celery monitor, with basic auth."""
    from pipeline.runtime.roles import run_flower

    run_flower(load_settings())


def register(app: typer.Typer) -> None:
    app.command(epilog=example("hindsight up"))(up)
    app.command(
        epilog=example("HINDSIGHT_DATABASE_URL=postgresql+psycopg://postgres@db/hindsight hindsight migrate")
    )(migrate)
    app.command(epilog=example("HINDSIGHT_REDIS_URL=redis://redis:6379/0 hindsight scheduler"))(scheduler)
    app.command(epilog=example("hindsight worker --queues review"))(worker)
    app.command(epilog=example("hindsight beat"))(beat)
    app.command(epilog=example("HINDSIGHT_QDRANT_URL=http://qdrant:6333 hindsight api --no-indexer"))(api)
    app.command("indexer", epilog=example("HINDSIGHT_QDRANT_URL=http://qdrant:6333 hindsight indexer"))(
        indexer_cmd
    )
    app.command("mcp", epilog=example("hindsight mcp --transport http --port 8701"))(mcp_cmd)
    app.command(epilog=example("HINDSIGHT_FLOWER_PASSWORD=s3cret hindsight flower"))(flower)
