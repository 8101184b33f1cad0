"""`hindsight up`: everything on this machine, embedded where no URL is configured."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rich.console import Console
from rich.table import Table

from pipeline.core.config import SECRET_FILES, Settings
from pipeline.core.logging import get_logger
from pipeline.runtime.embedded import EmbeddedServer
from pipeline.runtime.supervisor import Child, Supervisor, child_env, role_argv

log = get_logger(__name__)


def start_embedded(
    settings: Settings, data_dir: Path, servers: list[EmbeddedServer], say: Callable[[str], None]
) -> dict[str, str]:
    """Start the embedded Redis and PostgreSQL that no URL replaces, appending each to `servers` as it
    comes up (so the caller stops what started if a later one fails); returns the URLs the roles get.

    When API keys are required, both servers get a password from <data_dir>/secrets/ (0600): otherwise
    any local process could write turns into any scope through Redis, or read every memory from
    PostgreSQL, around the keys. The roles get the URLs in their environment, never in argv.
    """
    from pipeline.core.authz import auth_required
    from pipeline.runtime.embedded_postgres import start_postgres
    from pipeline.runtime.embedded_redis import start_redis
    from pipeline.runtime.secret_files import data_secret

    locked = auth_required(settings.auth.mode, settings.api_host)
    urls: dict[str, str] = {}
    if settings.redis_url is None:
        say("starting embedded Redis ...")
        password = data_secret(data_dir, SECRET_FILES["redis"]) if locked else None
        servers.append(start_redis(data_dir, settings.embedded_redis_port, password=password))
        urls["HINDSIGHT_REDIS_URL"] = servers[-1].url
    if settings.database_url is None:
        say("starting embedded PostgreSQL ...")
        password = data_secret(data_dir, SECRET_FILES["postgres"]) if locked else None
        servers.append(start_postgres(data_dir, settings.embedded_postgres_port, password=password))
        urls["HINDSIGHT_DATABASE_URL"] = servers[-1].url
    return urls


def run_up(settings: Settings, console: Console) -> None:
    from pipeline.adapters.postgres.migrate import upgrade
    from pipeline.runtime.roles import check_model_at_start, flower_password

    data_dir = settings.data_dir.resolve()
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers: list[EmbeddedServer] = []
    supervisor: Supervisor | None = None
    try:
        urls = start_embedded(settings, data_dir, servers, console.print)
        flower_password(settings)  # made now, so the summary's path exists
        db_url = urls.get("HINDSIGHT_DATABASE_URL", settings.db_url)
        console.print("migrating the schema ...")
        upgrade(db_url)
        # Before any role starts: a model other than the store's is one error here, not one per role log.
        check_model_at_start(settings.model_copy(update={"database_url": db_url}))

        env = child_env(settings, urls)
        embedded_index = settings.qdrant_url is None
        roles: list[tuple[str, list[str]]] = [
            ("scheduler", role_argv("scheduler")),
            ("worker", role_argv("worker")),
            ("beat", role_argv("beat")),
            ("api", role_argv("api", "--indexer" if embedded_index else "--no-indexer")),
            ("flower", role_argv("flower")),
        ]
        if not embedded_index:
            roles.append(("indexer", role_argv("indexer")))
        if settings.mcp_port is not None:
            roles.append(
                (
                    "mcp",
                    role_argv(
                        "mcp",
                        "--transport",
                        "http",
                        "--host",
                        settings.api_host,
                        "--port",
                        str(settings.mcp_port),
                    ),
                )
            )
        children = [Child(role, argv, env, logs / f"{role}.log") for role, argv in roles]
        supervisor = Supervisor(children)
        _print_summary(console, settings, urls, data_dir)

        def on_signal(_signum: int, _frame: Any) -> None:
            assert supervisor is not None
            supervisor.stop_event.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        supervisor.run()
        console.print("stopping ...")
    finally:
        if supervisor is not None:
            supervisor.stop()
        for server in reversed(servers):
            server.stop()
        if servers or supervisor is not None:
            console.print("stopped; data kept in " + str(data_dir))


def _auth_line(settings: Settings) -> str:
    from pipeline.core.authz import auth_required

    if auth_required(settings.auth.mode, settings.api_host):
        return f"required (auth mode {settings.auth.mode}); create one: hindsight keys create --agent NAME"
    return f"not required: bound to {settings.api_host} (auth mode {settings.auth.mode})"


def _print_summary(console: Console, settings: Settings, urls: dict[str, str], data_dir: Any) -> None:
    table = Table("service", "where", show_header=True)
    table.add_row("API", f"{settings.api_url}  (OpenAPI: {settings.api_url}/docs)")
    table.add_row("Inspector", f"{settings.api_url}/ui  (metrics: {settings.api_url}/metrics)")
    if settings.mcp_port is not None:
        table.add_row("MCP", f"http://{settings.api_host}:{settings.mcp_port}/mcp  (streamable HTTP)")
    password = (
        "HINDSIGHT_FLOWER_PASSWORD"
        if settings.flower_password is not None
        else str(data_dir / "secrets" / SECRET_FILES["flower"])
    )
    table.add_row(
        "Flower",
        f"http://{settings.api_host}:{settings.flower_port}  (user {settings.flower_user}, password: {password})",
    )
    table.add_row(
        "Redis",
        without_password(urls.get("HINDSIGHT_REDIS_URL", settings.broker_url))
        + ("  (embedded)" if "HINDSIGHT_REDIS_URL" in urls else ""),
    )
    table.add_row(
        "PostgreSQL",
        without_password(urls.get("HINDSIGHT_DATABASE_URL", settings.db_url))
        + ("  (embedded)" if "HINDSIGHT_DATABASE_URL" in urls else ""),
    )
    table.add_row("Qdrant", settings.qdrant_url or f"in process, {settings.embedded_qdrant_path.resolve()}")
    table.add_row("logs", str(data_dir / "logs"))
    table.add_row("API keys", _auth_line(settings))
    console.print(table)
    console.print(
        "try: [bold]hindsight ingest examples/turns.jsonl --wait[/bold] then "
        "[bold]hindsight recall 'where does Ana live' --agent demo --user ana[/bold]   (Ctrl-C stops)",
        markup=True,  # our own words; the CLI's consoles read no markup unless asked
    )


def without_password(url: str) -> str:
    """The URL as the summary prints it: a password is replaced by *** (it is in <data_dir>/secrets/)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[-1]}"))
