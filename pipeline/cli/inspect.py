"""Read-only client commands: memories, one memory, the review log, dead letters (through the HTTP API)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from pipeline.cli.support import call, emit_json, example, http_client, out
from pipeline.core.config import get_settings

JsonFlag = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout")]


def _quality(q: dict[str, Any] | None) -> str:
    if not q or "total" not in q:
        return ""
    dims = " ".join(
        f"{k[:4]} {q[k]:.2f}" for k in ("density", "timeliness", "uniqueness", "actionability") if k in q
    )
    return f"{q['total']:.2f} ({dims})"


def memories(
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    kind: Annotated[str | None, typer.Option("--kind", help="episode | semantic")] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="pending | kept | cold | merged | forgotten")
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="episodes of one session")] = None,
    since: Annotated[str | None, typer.Option("--since", help="ISO-8601 time with offset")] = None,
    until: Annotated[str | None, typer.Option("--until", help="ISO-8601 time with offset")] = None,
    contains: Annotated[str | None, typer.Option("--contains", help="text contains")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500)] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0)] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Memories of one scope, newest first, with their status, weight and quality."""
    params: dict[str, Any] = {"agent_id": agent, "user_id": user, "limit": limit, "offset": offset}
    for key, value in (
        ("kind", kind),
        ("status", status),
        ("session_id", session),
        ("since", since),
        ("until", until),
        ("contains", contains),
    ):
        if value is not None:
            params[key] = value
    with http_client(get_settings()) as client:
        body = call(client, "GET", "/v1/memories", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("id", "status", "weight", "quality", "text", "turns", title=f"{body['total']} memories")
    for m in body["memories"]:
        table.add_row(
            m["id"],
            m["status"],
            f"{m['weight']:.3f}",
            _quality(m["quality"]),
            m["text"],
            ", ".join(m["source_turn_ids"]),
        )
    out.print(table)
    if body["next_offset"] is not None:
        out.print(f"more: --offset {body['next_offset']}")


def memory(
    memory_id: Annotated[str, typer.Argument(help="episode:<n> or semantic:<n>")],
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    as_json: JsonFlag = False,
) -> None:
    """One memory: quality breakdown, provenance and the fact versions it supports."""
    with http_client(get_settings()) as client:
        body = call(client, "GET", f"/v1/memories/{memory_id}", params={"agent_id": agent, "user_id": user})
    if as_json:
        emit_json(body)
    else:
        out.print_json(data=body)


def reviews(
    agent: Annotated[str | None, typer.Option("--agent", help="agent_id (with --user)")] = None,
    user: Annotated[str | None, typer.Option("--user", help="user_id (with --agent)")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500)] = 20,
    before_id: Annotated[int | None, typer.Option("--before-id", help="page on from this id")] = None,
    as_json: JsonFlag = False,
) -> None:
    """The review audit log, newest first."""
    params: dict[str, Any] = {"limit": limit}
    for key, value in (("agent_id", agent), ("user_id", user), ("before_id", before_id)):
        if value is not None:
            params[key] = value
    with http_client(get_settings()) as client:
        body = call(client, "GET", "/v1/reviews", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("id", "scope", "kind", "trigger", "finished", "ms", "counts")
    for r in body["reviews"]:
        counts = " ".join(f"{k}={v}" for k, v in r["counts"].items() if v)
        table.add_row(
            str(r["id"]),
            f"{r['agent_id']}/{r['user_id']}",
            r["kind"],
            r["trigger"],
            r["finished_at"],
            f"{r['duration_ms']:.0f}",
            counts,
        )
    out.print(table)


def dead_letters(
    limit: Annotated[int, typer.Option("--limit", min=1, max=500)] = 20,
    before: Annotated[str | None, typer.Option("--before", help="page on from this stream id")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Stream entries the scheduler rejected, with the reason (read-only)."""
    params: dict[str, Any] = {"limit": limit}
    if before is not None:
        params["before"] = before
    with http_client(get_settings()) as client:
        body = call(client, "GET", "/v1/dead-letters", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("id", "reason", "turn_id", title=f"{body['total']} dead letters")
    for d in body["dead_letters"]:
        table.add_row(d["id"], d["reason"], d["fields"].get("turn_id", ""))
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command(
        epilog=example(
            "hindsight memories --agent demo --user ana --kind episode --status cold",
            "hindsight memories --agent demo --user ana --contains lisbon --json",
        )
    )(memories)
    app.command("memory", epilog=example("hindsight memory episode:12 --agent demo --user ana --json"))(
        memory
    )
    app.command(
        epilog=example("hindsight reviews --limit 20", "hindsight reviews --agent demo --user ana --json")
    )(reviews)
    app.command("dead-letters", epilog=example("hindsight dead-letters --limit 10 --json"))(dead_letters)
