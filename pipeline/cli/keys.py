"""`hindsight keys create | list | revoke`: operator commands on the API keys, straight to PostgreSQL
(like `migrate`: managing keys must not need a key)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from pipeline.cli.support import emit_json, example, fail, out
from pipeline.core.config import get_settings
from pipeline.core.errors import HindsightError
from pipeline.ingest.validation import utcnow

if TYPE_CHECKING:
    from pipeline.adapters.postgres.api_keys_sql import KeyStore

keys_app = typer.Typer(
    no_args_is_help=True,
    help="API keys: each speaks for one agent (its private space; shared and system read-only unless granted).",
    epilog=example(
        "hindsight keys create --agent support-bot", "hindsight keys list", "hindsight keys revoke 1a2b3c4d"
    ),
)


def _store() -> KeyStore:
    from pipeline.adapters.postgres.api_keys_sql import KeyStore
    from pipeline.adapters.postgres.engine import make_engine

    return KeyStore(make_engine(get_settings().db_url))


@keys_app.command("create", epilog=example("hindsight keys create --agent support-bot --write-shared"))
def create(
    agent: Annotated[str, typer.Option("--agent", help="the agent this key speaks for")],
    write_shared: Annotated[
        bool, typer.Option("--write-shared", help="may also write the shared space")
    ] = False,
    admin: Annotated[
        bool, typer.Option("--admin", help="an operator's key: every space, quarantine, dead letters, stats")
    ] = False,
    note: Annotated[str | None, typer.Option(help="a note kept with the key (who has it, what for)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON document on stdout")] = False,
) -> None:
    """Create a key and print it ONCE (only its hash is stored: a lost key is revoked and replaced)."""
    try:
        prefix, token = _store().create(
            agent, can_write_shared=write_shared, is_admin=admin, note=note, now=utcnow()
        )
    except HindsightError as exc:
        fail(str(exc))
    if as_json:
        emit_json(
            {"prefix": prefix, "key": token, "agent_id": agent, "write_shared": write_shared, "admin": admin}
        )
        return
    out.print(f"key {prefix} for agent {agent!r} created; it is shown only now:")
    print(token)


@keys_app.command("list", epilog=example("hindsight keys list --json"))
def list_keys(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON document on stdout")] = False,
) -> None:
    """Every key: prefix, agent, permissions, created, revoked, last used (never the secret)."""
    rows = _store().list()
    if as_json:
        emit_json({"keys": rows})
        return
    table = Table("prefix", "agent", "perms", "created", "revoked", "last used", "note")
    for r in rows:
        perms = ",".join(
            p for p, on in (("admin", r["is_admin"]), ("write-shared", r["can_write_shared"])) if on
        )
        table.add_row(
            r["prefix"],
            r["agent_id"],
            perms or "-",
            r["created_at"],
            r["revoked_at"] or "",
            r["last_used_at"] or "",
            r["note"] or "",
        )
    out.print_wide(table)  # dates whole, even past 80 columns


@keys_app.command("revoke", epilog=example("hindsight keys revoke 1a2b3c4d"))
def revoke(prefix: Annotated[str, typer.Argument(help="the key's prefix, as `keys list` shows it")]) -> None:
    """Revoke a key; running APIs refuse it within HINDSIGHT_AUTH__KEY_CACHE_S seconds (default 30)."""
    try:
        changed = _store().revoke(prefix.strip(), now=utcnow())
    except HindsightError as exc:
        fail(str(exc))
    seconds = get_settings().auth.key_cache_s
    out.print(
        f"key {prefix} revoked (APIs refuse it within {seconds:g} s)"
        if changed
        else f"key {prefix} was already revoked"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
