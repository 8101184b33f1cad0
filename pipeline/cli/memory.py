"""What a user does with memories, through the HTTP API: push turns (`ingest`), ask (`recall`, `facts`,
`stats`), have them reviewed now (`review`), let or make them fade (`decay`, `forget`, `update`) and rebuild
the vector index (`reindex`). `decay` alone goes straight to PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pipeline.cli.support import call, emit_json, err, example, fail, http_client, load_settings, out
from pipeline.cli.terminal import safe
from pipeline.cli.updates import print_links
from pipeline.core.errors import Forbidden

JsonFlag = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout")]


def ingest(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="JSONL, one turn per line")
    ],
    wait: Annotated[bool, typer.Option(help="return once every pushed turn is reviewed and indexed")] = False,
    timeout: Annotated[float, typer.Option(help="seconds --wait waits at most")] = 600.0,
    chunk: Annotated[int, typer.Option(min=1, max=1000, help="turns per request")] = 500,
    as_json: JsonFlag = False,
) -> None:
    """Push the turns of a JSONL file; bad lines are reported with their line number and skipped."""
    from pipeline.cli.ingest_progress import ingest_file

    settings = load_settings()
    with http_client(settings) as client:
        result = ingest_file(
            file,
            # A refused request raises, so that ingest_file finds and reports the refused lines by number.
            post=lambda items: call(client, "POST", "/v1/turns", json=items, refusals=True),
            chunk=chunk,
            # A request ends before the API's body limit (the API's own setting, read here): long turns
            # would otherwise make a 500-turn chunk a 413.
            max_bytes=settings.max_request_bytes,
            console=err,
        )
        for line_no, reason in result.rejected:
            err.print(
                f"[yellow]{safe(file)}:{line_no}:[/yellow] {safe(reason)}", highlight=False, markup=True
            )
        if not as_json:
            out.print(f"pushed {result.pushed} turns ({len(result.rejected)} lines rejected)")
        if wait and result.turns:
            _wait_reviewed(client, result.turns, timeout, quiet=as_json)
    if as_json:
        emit_json(
            {
                "pushed": result.pushed,
                "rejected": [{"line": n, "reason": r} for n, r in result.rejected],
                "waited": wait,
            }
        )
    if result.rejected:
        raise typer.Exit(1)


def _progress() -> Progress:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=err, transient=True)


REASK_S = 5.0  # seconds without a turn reviewed before --wait asks for a review again


def _wait_reviewed(
    client: httpx.Client, turns: list[tuple[str, str, str]], timeout: float, *, quiet: bool = False
) -> None:
    deadline = time.monotonic() + timeout
    total = len(set(turns))
    ask = {"turns": [{"agent_id": a, "user_id": u, "turn_id": t} for a, u, t in turns]}
    asked = False
    reviewed_then, moved_at = -1, time.monotonic()
    with _progress() as bar:
        task = bar.add_task("reviewed and indexed", total=total)
        while True:
            progress = call(client, "POST", "/v1/progress", json=ask)["turns"]
            bar.update(task, completed=progress["indexed"])
            if progress["indexed"] >= total:
                break
            now = time.monotonic()
            if progress["reviewed"] != reviewed_then:
                reviewed_then, moved_at = progress["reviewed"], now
            stalled = now - moved_at >= REASK_S
            if progress["received"] >= total and progress["reviewed"] < total and (not asked or stalled):
                # Everything is stored: review it now rather than wait for the batch or idle trigger. Asked
                # again when no more got reviewed for REASK_S: a request leaves a turn another transaction
                # holds past its own wait (the server's LOCKED_WAIT_S) to the idle trigger, minutes later,
                # and an older server skipped such turns at once (seen on a loaded machine: 4 of 6 claimed).
                _review_now(client, list(dict.fromkeys((a, u) for a, u, _ in turns)))
                asked, moved_at = True, now
            if time.monotonic() > deadline:
                fail(f"timed out after {timeout:.0f}s: {progress}")
            time.sleep(0.5)
    if not quiet:
        out.print(f"all {total} turns reviewed and indexed")


def _review_now(client: httpx.Client, scopes: list[tuple[str, str]]) -> None:
    """Review what is pending in these scopes now: every scope at once with an operator's key, else scope by
    scope (an agent's key may have its own scopes reviewed, not every scope)."""
    try:
        call(client, "POST", "/v1/review", json={}, refusals=True)
        return
    except Forbidden:
        pass
    for agent_id, user_id in scopes:
        call(client, "POST", "/v1/review", json={"agent_id": agent_id, "user_id": user_id})


def recall(
    query: Annotated[str, typer.Argument(help="what the agent wants to remember")],
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="how many hits")] = 10,
    as_of: Annotated[str | None, typer.Option("--as-of", help="ISO-8601 time with offset")] = None,
    history: Annotated[bool, typer.Option("--history", help="include what newer facts superseded")] = False,
    include_cold: Annotated[
        bool, typer.Option("--include-cold", help="search cold storage too (re-heats)")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Ranked memories of one scope for a query."""
    settings = load_settings()
    params: dict[str, Any] = {
        "q": query,
        "agent_id": agent,
        "user_id": user,
        "k": k,
        "history": history,
        "include_cold": include_cold,
    }
    if as_of:
        params["as_of"] = as_of
    with http_client(settings) as client:
        body = call(client, "GET", "/v1/recall", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("id", "score", "kind", "text", "turns", "session", "valid_from")
    for r in body["results"]:
        table.add_row(
            r["id"]
            + (" (cold)" if r.get("cold") else "")
            + ("" if r.get("reviewed", True) else " (unreviewed)"),
            f"{r['score']:.3f}",
            r["kind"],
            r["text"],
            ", ".join(r["source_turn_ids"]),
            r["session_id"] or "",
            r["valid_from"] or "",
        )
    out.print(table)


def facts(
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    entity: Annotated[str | None, typer.Option("--entity")] = None,
    attribute: Annotated[str | None, typer.Option("--attribute")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="ISO-8601 time with offset")] = None,
    history: Annotated[bool, typer.Option("--history", help="every version, retracted ones too")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Fact chains: what is true now, what was true at a time, and how it changed."""
    settings = load_settings()
    params: dict[str, Any] = {"agent_id": agent, "user_id": user, "history": history}
    for key, value in (("entity", entity), ("attribute", attribute), ("as_of", as_of)):
        if value is not None:
            params[key] = value
    with http_client(settings) as client:
        body = call(client, "GET", "/v1/facts", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("entity", "attribute", "value", "valid_from", "valid_to", "source", "turns", "retracted")
    for f in body["facts"]:
        table.add_row(
            f["entity"],
            f["attribute"],
            f["value"],
            f["valid_from"],
            f["valid_to"] or "",
            f["source"],
            ", ".join(f["turn_ids"]),
            f["retracted_at"] or "",
        )
    out.print(table)
    if body.get("updates"):
        out.print("Statements superseded by newer ones (any attribute):")
        print_links(body["updates"])


def stats(as_json: JsonFlag = False) -> None:
    """Counts: episodes by status, batches, reviews, outbox lag, stream depth and dead letters."""
    settings = load_settings()
    with http_client(settings) as client:
        body = call(client, "GET", "/v1/stats")
    if as_json:
        emit_json(body)
        return
    out.print_json(data=body)


def review(
    agent: Annotated[str | None, typer.Option("--agent", help="agent_id (with --user)")] = None,
    user: Annotated[str | None, typer.Option("--user", help="user_id (with --agent)")] = None,
    full: Annotated[bool, typer.Option(help="full review (with clustering) instead of a light one")] = False,
    wait: Annotated[
        bool, typer.Option(help="return once the reviews ran and their results are indexed")
    ] = False,
    timeout: Annotated[float, typer.Option(help="seconds --wait waits at most")] = 600.0,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="also send again the batches given up after their attempts")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Review whatever is pending now (all scopes, or one), without waiting for a trigger."""
    if (agent is None) != (user is None):
        fail("--agent and --user go together")
    settings = load_settings()
    with http_client(settings) as client:
        request = {"agent_id": agent, "user_id": user, "full": full, "retry_failed": retry_failed}
        body = call(client, "POST", "/v1/review", json=request)
        batch_ids = body["batch_ids"]
        if not as_json:
            out.print(f"dispatched {len(batch_ids)} review batch(es)")
        if wait and batch_ids:
            _wait_batches(client, batch_ids, timeout)
            if not as_json:
                out.print("reviewed and indexed")
    if as_json:
        emit_json({"batch_ids": batch_ids, "waited": wait})


def _wait_batches(client: httpx.Client, batch_ids: list[int], timeout: float) -> None:
    """Until the batches are done and the index updates queued up to then are written (not until the
    outbox is empty: under steady traffic it never is)."""
    deadline = time.monotonic() + timeout
    through: int | None = None
    with _progress() as bar:
        task = bar.add_task("batches reviewed", total=len(batch_ids))
        while True:
            body: dict[str, Any] = {"batch_ids": batch_ids}
            if through is not None:
                body["outbox_through"] = through
            p = call(client, "POST", "/v1/progress", json=body)
            bar.update(task, completed=p["batches"]["done"])
            if through is None and p["batches"]["done"] >= len(batch_ids):
                through = p["outbox_head"]
            if through is not None and p.get("outbox_pending_through", p["outbox_pending"]) == 0:
                return
            if time.monotonic() > deadline:
                fail(f"timed out after {timeout:.0f}s: {p}")
            time.sleep(0.5)


def decay(
    now: Annotated[
        str | None, typer.Option("--now", help="pretend it is this time (ISO-8601), for tests")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run the decay pass now: recompute weights, move faded memories to cold storage."""
    from pipeline.adapters.postgres.decay_sql import run_configured_decay
    from pipeline.ingest.validation import parse_ts, utcnow

    settings = load_settings()
    when = parse_ts(now, field_name="--now") if now else utcnow()
    with err.status("decay pass..."):
        report = run_configured_decay(settings.db_url, when, settings.decay)
    if as_json:
        emit_json(
            {
                "now": when.isoformat(),
                "updated": report.updated,
                "went_cold": report.went_cold,
                "queued": report.queued,
            }
        )
        return
    out.print(
        f"decay at {when.isoformat()}: {report.updated} weights updated, {report.went_cold} moved to cold storage, "
        f"{report.queued} index updates queued"
    )


def forget(
    memory_id: Annotated[str, typer.Argument(help="episode:<n> or semantic:<n>, as recall shows it")],
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    reason: Annotated[str, typer.Option("--reason", help="why; kept in the audit log")],
    hard: Annotated[
        bool, typer.Option("--hard", help="purge everywhere (right to erasure), not reversible")
    ] = False,
    actor: Annotated[str, typer.Option("--actor", help="who asks; kept in the audit log")] = "cli",
    as_json: JsonFlag = False,
) -> None:
    """Forget a memory: soft (out of recall, reversible) or --hard (purged from every store)."""
    settings = load_settings()
    body = {"agent_id": agent, "user_id": user, "hard": hard, "reason": reason, "actor": actor}
    with http_client(settings) as client:
        result = call(client, "POST", f"/v1/memories/{memory_id}/forget", json=body)
    if as_json:
        emit_json(result)
    else:
        out.print_json(data=result)


def update_cmd(
    memory_id: Annotated[str, typer.Argument(help="episode:<n> or semantic:<n>")],
    agent: Annotated[str, typer.Option("--agent", help="agent_id")],
    user: Annotated[str, typer.Option("--user", help="user_id")],
    reason: Annotated[str, typer.Option("--reason", help="why; kept in the audit log")],
    weight: Annotated[float | None, typer.Option("--weight", min=0, max=10)] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="repeat for several; replaces the tags")
    ] = None,
    core: Annotated[bool | None, typer.Option("--core/--no-core")] = None,
    status: Annotated[str | None, typer.Option("--status", help="kept | cold | forgotten")] = None,
    actor: Annotated[str, typer.Option("--actor", help="who asks; kept in the audit log")] = "cli",
    as_json: JsonFlag = False,
) -> None:
    """Change a memory's weight, tags, core flag or status (e.g. --status kept undoes a soft forget)."""
    settings = load_settings()
    body: dict[str, Any] = {"agent_id": agent, "user_id": user, "reason": reason, "actor": actor}
    for key, value in (("weight", weight), ("tags", tag), ("core", core), ("status", status)):
        if value is not None:
            body[key] = value
    with http_client(settings) as client:
        result = call(client, "PATCH", f"/v1/memories/{memory_id}", json=body)
    if as_json:
        emit_json(result)
    else:
        out.print_json(data=result)


def reindex(
    wait: Annotated[bool, typer.Option(help="return once the indexer has written every point")] = False,
    timeout: Annotated[float, typer.Option(help="seconds --wait waits at most")] = 3600.0,
    model: Annotated[
        str | None,
        typer.Option(
            help="the embedding model the store should use (default: HINDSIGHT_EMBEDDING__MODEL here); "
            "another than the store's re-embeds every memory, then switches"
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Rebuild the vector index from PostgreSQL (the running API's indexer does the writing). With another
    embedding model than the store's, re-embed every memory into a new collection while recall keeps serving
    the old one, then switch; a stopped run continues where it left off when asked again."""
    settings = load_settings()
    target = model or settings.embedding.model
    with http_client(settings) as client:
        body = call(client, "POST", "/v1/reindex", json={"model": target})
        if "queued" not in body:  # a model change
            if wait:
                body = _wait_model_change(client, timeout, quiet=as_json)
            if as_json:
                emit_json(body)
                return
            _print_model_change(body)
            return
        if wait and body["queued"]:
            deadline = time.monotonic() + timeout
            with _progress() as bar:
                task = bar.add_task("points indexed", total=body["queued"])
                ask = {"outbox_through": body["outbox_through"]}
                while (
                    pending := call(client, "POST", "/v1/progress", json=ask)["outbox_pending_through"]
                ) > 0:
                    bar.update(task, completed=max(body["queued"] - pending, 0))
                    if time.monotonic() > deadline:
                        fail(f"timed out after {timeout:.0f}s with {pending} points still queued")
                    time.sleep(0.5)
    if as_json:
        emit_json(body)
        return
    out.print(f"queued {body['queued']} points; removed {body['orphans_deleted']} orphan points")


def _wait_model_change(client: httpx.Client, timeout: float, *, quiet: bool) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    with _progress() as bar:
        task = bar.add_task("memories re-embedded", total=None)
        while True:
            status = call(client, "GET", "/v1/reindex")
            change = status.get("change")
            if change is not None:
                phase = change["phase"]
                label = "memories re-embedded" if phase.startswith("embed") else "new index built"
                bar.update(task, description=label, completed=change["done"], total=change["total"])
            if status["error"]:
                fail(
                    f"the model change stopped: {status['error']} (run `hindsight reindex` again to continue)"
                )
            if status["state"] != "running":
                return status
            if time.monotonic() > deadline:
                fail(
                    f"timed out after {timeout:.0f}s; the change goes on (`hindsight reindex --wait` follows it)"
                )
            time.sleep(0.5)


def _print_model_change(status: dict[str, Any]) -> None:
    change = status.get("change")
    if change is None:
        out.print(
            f"the store uses {safe(status['model'])} (collection {safe(status['collection'])}); "
            "restart every role with this model configured"
        )
        return
    state = "re-embedding" if status["state"] == "running" else "stopped after"
    out.print(
        f"{state} {change['done']} of {change['total']} memories with {safe(change['model'])} "
        f"(recall serves {safe(status['model'])} until the switch); `hindsight reindex --wait` follows it"
    )


def register(app: typer.Typer) -> None:
    # In this order in `hindsight --help`.
    app.command(epilog=example("hindsight ingest examples/turns.jsonl --wait"))(ingest)
    app.command(
        epilog=example('hindsight recall "where does the user live" --agent demo --user ana -k 5 --json')
    )(recall)
    app.command(
        epilog=example("hindsight facts --agent demo --user ana --entity user --attribute city --history")
    )(facts)
    app.command(epilog=example("hindsight stats --json"))(stats)
    app.command(epilog=example("hindsight review --agent demo --user ana --full --wait"))(review)
    app.command(epilog=example("hindsight decay --now 2026-12-31T00:00:00+00:00"))(decay)
    app.command(
        epilog=example('hindsight forget episode:12 --agent demo --user ana --reason "user request" --hard')
    )(forget)
    app.command(
        "update",
        epilog=example(
            'hindsight update episode:12 --agent demo --user ana --reason "allergy" --core --weight 2'
        ),
    )(update_cmd)
    app.command(epilog=example("hindsight reindex --wait"))(reindex)
