"""`hindsight updates list | undo`: which statement superseded which (issue 39), and undoing a wrong link
(through the HTTP API)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pipeline.cli.support import call, emit_json, example, http_client, load_settings, out

updates_app = typer.Typer(
    no_args_is_help=True,
    help="Knowledge updates: which newer statement superseded which older one; undo a wrong one.",
    epilog=example("hindsight updates list --agent demo --user ana"),
)


@updates_app.command("list", epilog=example("hindsight updates list --agent demo --user ana --json"))
def updates_list(
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    episode: Annotated[int | None, typer.Option("--episode", help="only links of this episode id")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The scope's supersessions, newest first: old and new statement, when, what found it, and why."""
    params: dict[str, Any] = {"agent_id": agent, "user_id": user}
    if episode is not None:
        params["episode_id"] = episode
    with http_client(load_settings()) as client:
        rows = call(client, "GET", "/v1/supersessions", params=params)["supersessions"]
    if as_json:
        emit_json({"supersessions": rows})
        return
    if not rows:
        out.print("no supersessions")
    print_links(rows)


def print_links(rows: list[dict[str, Any]]) -> None:
    """Each link as two lines: what superseded what, then the two texts."""
    for r in rows:
        state = f"undone {r['undone_at']} by {r['undone_by']}" if r["undone_at"] else "live"
        reason = r["reason"]
        why = f"{reason.get('rule', '?')}: {reason.get('old', '')} -> {reason.get('new', '')}"
        out.print(
            f"#{r['id']}  {r['new']['id']} supersedes {r['old']['id']} since {r['valid_from']}  "
            f"[{r['detector']}; {why}; {state}]",
            markup=False,
        )
        out.print(f"    old: {r['old']['text'][:160]!r}", markup=False)
        out.print(f"    new: {r['new']['text'][:160]!r}", markup=False)


@updates_app.command(
    "undo",
    epilog=example('hindsight updates undo 7 --agent demo --user ana --reason "two different projects"'),
)
def updates_undo(
    link_id: Annotated[int, typer.Argument(help="the supersession's id, as `updates list` shows it (#7)")],
    agent: Annotated[str, typer.Option("--agent")],
    user: Annotated[str, typer.Option("--user")],
    reason: Annotated[str, typer.Option("--reason", help="why the link is wrong; kept in the audit log")],
    actor: Annotated[str, typer.Option("--actor", help="who undoes it; kept in the audit log")] = "cli",
) -> None:
    """Undo a wrong supersession: the older statement holds again; review never links the pair again."""
    body = {"agent_id": agent, "user_id": user, "reason": reason, "actor": actor}
    with http_client(load_settings()) as client:
        result = call(client, "POST", f"/v1/supersessions/{link_id}/undo", json=body)
    out.print_json(data=result)


def register(app: typer.Typer) -> None:
    app.add_typer(updates_app, name="updates")
