"""What every `hindsight` command shares: consoles, one-line failures, API calls, JSON output, examples."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import httpx
import typer
from rich.console import Console

from pipeline.core.config import Settings, get_settings
from pipeline.core.logging import configure_logging

out = Console()
# soft_wrap: a failure is one line however narrow the terminal (scripts grep it).
err = Console(stderr=True, soft_wrap=True)


def load_settings() -> Settings:
    """The settings, with logging configured from them: how every command that runs something starts."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    return settings


def example(*lines: str) -> str:
    """The epilog of a command's --help: the examples, one per line."""
    return "Example:\n\n" + "\n\n".join(f"  $ {line}" for line in lines)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print `error: <one line>` on stderr and exit non-zero."""
    one_line = " ".join(str(message).split())
    err.print(f"[red]error:[/red] {one_line}", highlight=False, markup=True)
    raise typer.Exit(code)


def emit_json(body: Any) -> None:
    """Machine-readable output: one JSON document on stdout, nothing else."""
    sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")


# `hindsight --api-key KEY <command>`; else HINDSIGHT_API_KEY (Settings.api_key).
api_key_option: str | None = None


def http_client(settings: Settings) -> httpx.Client:
    key = api_key_option or (settings.api_key.get_secret_value() if settings.api_key else None)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=settings.api_url, timeout=60.0, headers=headers)


def call(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """One API call; a failure ends the command with a one-line reason (exit 2: API unreachable)."""
    try:
        response = client.request(method, path, **kwargs)
    except httpx.TransportError as exc:
        fail(
            f"cannot reach the API at {client.base_url} ({type(exc).__name__}) - "
            "is `hindsight up` (or `hindsight api`) running? Set HINDSIGHT_API_URL to point elsewhere.",
            2,
        )
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail")
        except ValueError:
            detail = response.text[:500]
        fail(f"{method} {path}: {response.status_code} {detail}")
    return response.json()
