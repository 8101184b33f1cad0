"""`hindsight quarantine list | release | reject`: turns the poisoning detector held back as instructions to
the agent (through the HTTP API)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pipeline.cli.support import call, emit_json, example, http_client, load_settings, out

quarantine_app = typer.Typer(
    no_args_is_help=True,
    help="Turns quarantined as instructions to the agent: list, release, reject.",
    epilog=example("hindsight quarantine list --json"),
)


@quarantine_app.command("list", epilog=example("hindsight quarantine list --agent demo --user ana --json"))
def quarantine_list(
    agent: Annotated[str | None, typer.Option("--agent")] = None,
    user: Annotated[str | None, typer.Option("--user")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 100,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Quarantined turns, oldest first, with the detector's reason and score."""
    params: dict[str, Any] = {"limit": limit}
    if agent:
        params["agent_id"] = agent
    if user:
        params["user_id"] = user
    with http_client(load_settings()) as client:
        rows = call(client, "GET", "/v1/quarantine", params=params)["quarantined"]
    if as_json:
        emit_json({"quarantined": rows})
        return
    if not rows:
        out.print("nothing quarantined")
    for r in rows:
        v = r.get("verdict", {})
        out.print(
            f"{r['id']}  {r['agent_id']}/{r['user_id']}  source={r['source']}  score={v.get('score')}  "
            f"{v.get('reason', '')}",
            markup=False,
        )
        out.print(f"    {r['content'][:200]!r}", markup=False)


def _quarantine_decide(action: str, memory_id: str, agent: str, user: str, reason: str, actor: str) -> None:
    body = {"agent_id": agent, "user_id": user, "reason": reason, "actor": actor}
    with http_client(load_settings()) as client:
        result = call(client, "POST", f"/v1/quarantine/{memory_id}/{action}", json=body)
    out.print_json(data=result)


@quarantine_app.command(
    "release",
    epilog=example('hindsight quarantine release episode:12 --agent demo --user ana --reason "my own words"'),
)
def quarantine_release(
    memory_id: Annotated[str, typer.Argument(help="episode:<n>, as `quarantine list` shows it")],
    agent: Annotated[str, typer.Option("--agent")],
    user: Annotated[str, typer.Option("--user")],
    reason: Annotated[str, typer.Option("--reason", help="why it is safe; kept in the audit log")],
    actor: Annotated[str, typer.Option("--actor", help="who vouches for it; kept in the audit log")] = "cli",
) -> None:
    """Release a quarantined turn: it is reviewed again (without the detector) and may then be recalled."""
    _quarantine_decide("release", memory_id, agent, user, reason, actor)


@quarantine_app.command(
    "reject",
    epilog=example('hindsight quarantine reject episode:12 --agent demo --user ana --reason "injection"'),
)
def quarantine_reject(
    memory_id: Annotated[str, typer.Argument(help="episode:<n>, as `quarantine list` shows it")],
    agent: Annotated[str, typer.Option("--agent")],
    user: Annotated[str, typer.Option("--user")],
    reason: Annotated[str, typer.Option("--reason", help="kept in the audit log")],
    actor: Annotated[str, typer.Option("--actor", help="kept in the audit log")] = "cli",
) -> None:
    """Confirm a quarantine: the turn stays in PostgreSQL as evidence and is never recalled."""
    _quarantine_decide("reject", memory_id, agent, user, reason, actor)


def register(app: typer.Typer) -> None:
    app.add_typer(quarantine_app, name="quarantine")
