"""What every `hindsight` command shares: consoles, one-line failures, API calls, JSON output, examples."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import httpx
import typer

from pipeline.cli.terminal import SafeConsole, safe
from pipeline.core.config import Settings, get_settings
from pipeline.core.errors import Forbidden, InvalidTurn, TurnIdConflict
from pipeline.core.logging import configure_logging

# Every command prints through these: stored text is shown, never obeyed as markup or terminal controls.
out = SafeConsole()
# soft_wrap: a failure is one line however narrow the terminal (scripts grep it).
err = SafeConsole(stderr=True, soft_wrap=True)


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
    one_line = " ".join(str(message).split())  # an API error may quote stored text: safe() below
    err.print(f"[red]error:[/red] {safe(one_line)}", highlight=False, markup=True)
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


# Refusals of what was asked (not of who asks, nor of the API's state), as the error tree names them.
_REFUSALS: dict[int, type[Exception]] = {403: Forbidden, 409: TurnIdConflict, 422: InvalidTurn}


def call(client: httpx.Client, method: str, path: str, *, refusals: bool = False, **kwargs: Any) -> Any:
    """One API call; a failure ends the command with a one-line reason (exit 2: API unreachable).

    `refusals`: a 403, 409 or 422 raises Forbidden, TurnIdConflict or InvalidTurn instead, for a caller
    that goes on with the rest (`ingest`: a line the key may not write)."""
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
        refusal = _REFUSALS.get(response.status_code) if refusals else None
        if refusal is not None:
            raise refusal(f"{response.status_code} {detail}")
        fail(f"{method} {path}: {response.status_code} {detail}")
    return response.json()
