"""The `hindsight` command line. Roles run in-process; client commands talk to the HTTP API."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pipeline.cli.inspect import register as register_inspect_commands
from pipeline.cli.keys import register as register_key_commands
from pipeline.cli.support import call, emit_json, err, example, fail, http_client, out
from pipeline.core.config import EMBEDDING_BACKENDS, Settings, get_settings
from pipeline.core.errors import HindsightError, RetryableError
from pipeline.core.logging import configure_logging

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Hindsight: agent memory that improves in hindsight.",
    epilog=example("hindsight up", 'hindsight recall "where does she live" --agent demo --user ana'),
)
bench_app = typer.Typer(
    no_args_is_help=True,
    help="Benchmarks; each writes its figures to BENCHMARKS.md.",
    epilog=example("hindsight bench ingest --n 2000"),
)
app.add_typer(bench_app, name="bench")
quarantine_app = typer.Typer(
    no_args_is_help=True,
    help="Turns quarantined as instructions to the agent: list, release, reject.",
    epilog=example("hindsight quarantine list --json"),
)
app.add_typer(quarantine_app, name="quarantine")
register_inspect_commands(app)
register_key_commands(app)


def _settings() -> Settings:
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_json)
    return settings


# Kept under their old names for the commands below.
_http = http_client
_call = call


# -- roles ----------------------------------------------------------------------------------------


@app.command(epilog=example("hindsight up"))
def up() -> None:
    """Run the whole pipeline here; with no URLs configured, on embedded Redis, PostgreSQL and Qdrant."""
    from pipeline.runtime.up import run_up

    try:
        run_up(_settings(), out)
    except HindsightError as exc:
        fail(str(exc))


@app.command(
    epilog=example("HINDSIGHT_DATABASE_URL=postgresql+psycopg://postgres@db/hindsight hindsight migrate")
)
def migrate() -> None:
    """Create or upgrade the PostgreSQL schema."""
    from pipeline.adapters.postgres.migrate import upgrade

    settings = _settings()
    upgrade(settings.db_url)
    out.print("schema is up to date")


@app.command(epilog=example("HINDSIGHT_REDIS_URL=redis://redis:6379/0 hindsight scheduler"))
def scheduler() -> None:
    """Consume the turn stream, store episodes and dispatch review batches."""
    from pipeline.runtime.roles import run_scheduler

    run_scheduler(_settings())


@app.command(epilog=example("hindsight worker --queues review"))
def worker(
    queues: Annotated[str, typer.Option(help="Celery queues to consume")] = "review,maintenance",
    loglevel: str = "INFO",
) -> None:
    """A review worker (one review at a time; start more to scale out)."""
    from pipeline.runtime.roles import run_worker

    run_worker(_settings(), queues=queues, loglevel=loglevel)


@app.command(epilog=example("hindsight beat"))
def beat(loglevel: str = "INFO") -> None:
    """The periodic jobs (reconcile stalled batches)."""
    from pipeline.runtime.roles import run_beat

    run_beat(_settings(), loglevel=loglevel)


@app.command(epilog=example("HINDSIGHT_QDRANT_URL=http://qdrant:6333 hindsight api --no-indexer"))
def api(
    indexer: Annotated[
        bool | None,
        typer.Option("--indexer/--no-indexer", help="also run the outbox indexer (default: when embedded)"),
    ] = None,
) -> None:
    """The HTTP API (recall, turns, stats)."""
    from pipeline.runtime.roles import run_api

    settings = _settings()
    run_api(settings, run_indexer=(settings.qdrant_url is None) if indexer is None else indexer)


@app.command("indexer", epilog=example("HINDSIGHT_QDRANT_URL=http://qdrant:6333 hindsight indexer"))
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

    settings = _settings()
    if settings.qdrant_url is None and not embedded:
        fail(
            "the embedded Qdrant can be opened by one process only: in embedded mode the indexer runs inside "
            "`hindsight api`; set HINDSIGHT_QDRANT_URL to run it on its own (or pass --embedded when no API "
            "process opens the folder)"
        )
    run_indexer(settings)


@app.command("mcp", epilog=example("hindsight mcp --transport http --port 8701"))
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
    settings = _settings()
    port = port if port is not None else (settings.mcp_port or 8701)
    run_mcp(settings, transport="stdio" if transport == "stdio" else "http", host=host, port=port)


@app.command(epilog=example("HINDSIGHT_FLOWER_PASSWORD=s3cret hindsight flower"))
def flower() -> None:
    """Flower, the Celery monitor, with basic auth."""
    from pipeline.runtime.roles import run_flower

    run_flower(_settings())


# -- client commands --------------------------------------------------------------------------


JsonFlag = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout")]


@app.command(epilog=example("hindsight ingest examples/turns.jsonl --wait"))
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
    from pipeline.ingest.jsonl_file import ingest_file

    settings = _settings()
    with _http(settings) as client:
        result = ingest_file(
            file, post=lambda items: _call(client, "POST", "/v1/turns", json=items), chunk=chunk, console=err
        )
        for line_no, reason in result.rejected:
            err.print(f"[yellow]{file}:{line_no}:[/yellow] {reason}", highlight=False)
        if not as_json:
            out.print(f"pushed {result.pushed} turns ({len(result.rejected)} lines rejected)")
        if wait and result.turn_ids:
            _wait_reviewed(client, result.turn_ids, timeout, quiet=as_json)
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


def _wait_reviewed(client: httpx.Client, turn_ids: list[str], timeout: float, *, quiet: bool = False) -> None:
    deadline = time.monotonic() + timeout
    total = len(turn_ids)
    asked = False
    with _progress() as bar:
        task = bar.add_task("reviewed and indexed", total=total)
        while True:
            progress = _call(client, "POST", "/v1/progress", json={"turn_ids": turn_ids})["turns"]
            bar.update(task, completed=progress["indexed"])
            if progress["indexed"] >= total:
                break
            if progress["received"] >= total and not asked:
                # Everything is stored: review it now rather than wait for the batch or idle trigger.
                _call(client, "POST", "/v1/review", json={})
                asked = True
            if time.monotonic() > deadline:
                fail(f"timed out after {timeout:.0f}s: {progress}")
            time.sleep(0.5)
    if not quiet:
        out.print(f"all {total} turns reviewed and indexed")


@app.command(epilog=example('hindsight recall "where does she live" --agent demo --user ana -k 5 --json'))
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
    settings = _settings()
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
    with _http(settings) as client:
        body = _call(client, "GET", "/v1/recall", params=params)
    if as_json:
        emit_json(body)
        return
    table = Table("id", "score", "kind", "text", "turns", "session", "valid_from")
    for r in body["results"]:
        table.add_row(
            r["id"] + (" (cold)" if r.get("cold") else ""),
            f"{r['score']:.3f}",
            r["kind"],
            r["text"],
            ", ".join(r["source_turn_ids"]),
            r["session_id"] or "",
            r["valid_from"] or "",
        )
    out.print(table)


@app.command(
    epilog=example("hindsight facts --agent demo --user ana --entity user --attribute city --history")
)
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
    settings = _settings()
    params: dict[str, Any] = {"agent_id": agent, "user_id": user, "history": history}
    for key, value in (("entity", entity), ("attribute", attribute), ("as_of", as_of)):
        if value is not None:
            params[key] = value
    with _http(settings) as client:
        body = _call(client, "GET", "/v1/facts", params=params)
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


@app.command(epilog=example("hindsight stats --json"))
def stats(as_json: JsonFlag = False) -> None:
    """Counts: episodes by status, batches, reviews, outbox lag, stream depth and dead letters."""
    settings = _settings()
    with _http(settings) as client:
        body = _call(client, "GET", "/v1/stats")
    if as_json:
        emit_json(body)
        return
    out.print_json(data=body)


@app.command(epilog=example("hindsight review --agent demo --user ana --full --wait"))
def review(
    agent: Annotated[str | None, typer.Option("--agent", help="agent_id (with --user)")] = None,
    user: Annotated[str | None, typer.Option("--user", help="user_id (with --agent)")] = None,
    full: Annotated[bool, typer.Option(help="full review (with clustering) instead of a light one")] = False,
    wait: Annotated[
        bool, typer.Option(help="return once the reviews ran and their results are indexed")
    ] = False,
    timeout: Annotated[float, typer.Option(help="seconds --wait waits at most")] = 600.0,
    as_json: JsonFlag = False,
) -> None:
    """Review whatever is pending now (all scopes, or one), without waiting for a trigger."""
    if (agent is None) != (user is None):
        fail("--agent and --user go together")
    settings = _settings()
    with _http(settings) as client:
        body = _call(client, "POST", "/v1/review", json={"agent_id": agent, "user_id": user, "full": full})
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
            p = _call(client, "POST", "/v1/progress", json=body)
            bar.update(task, completed=p["batches"]["done"])
            if through is None and p["batches"]["done"] >= len(batch_ids):
                through = p["outbox_head"]
            if through is not None and p.get("outbox_pending_through", p["outbox_pending"]) == 0:
                return
            if time.monotonic() > deadline:
                fail(f"timed out after {timeout:.0f}s: {p}")
            time.sleep(0.5)


@app.command(epilog=example("hindsight decay --now 2026-12-31T00:00:00+00:00"))
def decay(
    now: Annotated[
        str | None, typer.Option("--now", help="pretend it is this time (ISO-8601), for tests")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run the decay pass now: recompute weights, move faded memories to cold storage."""
    from pipeline.adapters.postgres.decay_sql import run_configured_decay
    from pipeline.ingest.validation import parse_ts, utcnow

    settings = _settings()
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


@app.command(
    epilog=example('hindsight forget episode:12 --agent demo --user ana --reason "user request" --hard')
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
    settings = _settings()
    body = {"agent_id": agent, "user_id": user, "hard": hard, "reason": reason, "actor": actor}
    with _http(settings) as client:
        result = _call(client, "POST", f"/v1/memories/{memory_id}/forget", json=body)
    if as_json:
        emit_json(result)
    else:
        out.print_json(data=result)


@app.command(
    "update",
    epilog=example(
        'hindsight update episode:12 --agent demo --user ana --reason "allergy" --core --weight 2'
    ),
)
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
    settings = _settings()
    body: dict[str, Any] = {"agent_id": agent, "user_id": user, "reason": reason, "actor": actor}
    for key, value in (("weight", weight), ("tags", tag), ("core", core), ("status", status)):
        if value is not None:
            body[key] = value
    with _http(settings) as client:
        result = _call(client, "PATCH", f"/v1/memories/{memory_id}", json=body)
    if as_json:
        emit_json(result)
    else:
        out.print_json(data=result)


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
    with _http(_settings()) as client:
        rows = _call(client, "GET", "/v1/quarantine", params=params)["quarantined"]
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
    with _http(_settings()) as client:
        result = _call(client, "POST", f"/v1/quarantine/{memory_id}/{action}", json=body)
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


@app.command(epilog=example("hindsight reindex --wait"))
def reindex(
    wait: Annotated[bool, typer.Option(help="return once the indexer has written every point")] = False,
    timeout: Annotated[float, typer.Option(help="seconds --wait waits at most")] = 3600.0,
    as_json: JsonFlag = False,
) -> None:
    """Rebuild the vector index from PostgreSQL (the running API's indexer does the writing)."""
    settings = _settings()
    with _http(settings) as client:
        body = _call(client, "POST", "/v1/reindex")
        if wait and body["queued"]:
            deadline = time.monotonic() + timeout
            with _progress() as bar:
                task = bar.add_task("points indexed", total=body["queued"])
                ask = {"outbox_through": body["outbox_through"]}
                while (
                    pending := _call(client, "POST", "/v1/progress", json=ask)["outbox_pending_through"]
                ) > 0:
                    bar.update(task, completed=max(body["queued"] - pending, 0))
                    if time.monotonic() > deadline:
                        fail(f"timed out after {timeout:.0f}s with {pending} points still queued")
                    time.sleep(0.5)
    if as_json:
        emit_json(body)
        return
    out.print(f"queued {body['queued']} points; removed {body['orphans_deleted']} orphan points")


# Options every bench that reads LoCoMo or writes BENCHMARKS.md shares.
LocomoData = Annotated[Path | None, typer.Option(help="LoCoMo locomo10.json (read in place)")]
WriteBenchmarks = Annotated[bool, typer.Option("--write/--no-write", help="update BENCHMARKS.md")]


@bench_app.command("ingest", epilog=example("hindsight bench ingest --n 2000 --rounds 3"))
def bench_ingest(
    n: Annotated[int, typer.Option(help="turns per measurement")] = 5000,
    rounds: Annotated[int, typer.Option(help="interleaved rounds of each measurement")] = 3,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
) -> None:
    """write_memory latency against a raw XADD of the same payload, and pipelined throughput."""
    from bench.ingest import run_ingest_bench

    run_ingest_bench(_settings(), n=n, rounds=rounds, write=write, console=out)


@bench_app.command("decay", epilog=example("hindsight bench decay --rows 100000 --no-write"))
def bench_decay(
    rows: Annotated[int, typer.Option(min=10_000, help="memory rows in all (~95% episodes)")] = 1_000_000,
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_DECAY_DATABASE_URL",
            help="disposable database, TRUNCATEd and refilled (default: hindsight_bench_decay on 127.0.0.1)",
        ),
    ] = None,
    chunk: Annotated[
        list[int] | None, typer.Option(min=1000, help="run_decay chunk sizes to compare; repeatable")
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
) -> None:
    """The decay pass over a million memory rows, next to a plain UPDATE of the same rows."""
    from bench import decay as bench

    bench.run_decay_bench(
        _settings(),
        rows=rows,
        database_url=database_url or bench.BENCH_DATABASE_URL,
        chunks=chunk or list(bench.DEFAULT_CHUNKS),
        write=write,
        console=out,
    )


BENCH_PARTS = ("full", "batching", "e2e")


@bench_app.command("review", epilog=example("hindsight bench review --part full --episodes 2000 --no-write"))
def bench_review(
    episodes: Annotated[
        int, typer.Option(min=100, help="kept, embedded episodes of the scope a full review clusters")
    ] = 10_000,
    turns: Annotated[int, typer.Option(min=30, help="turns pushed through the real pipeline")] = 3000,
    data: LocomoData = None,
    database_url: Annotated[
        str | None,
        typer.Option(envvar="HINDSIGHT_BENCH_DATABASE_URL", help="disposable database, TRUNCATEd per part"),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(envvar="HINDSIGHT_BENCH_REDIS_URL", help="disposable Redis db, FLUSHDBed per part"),
    ] = None,
    part: Annotated[
        list[str] | None, typer.Option(help=f"run only these parts ({', '.join(BENCH_PARTS)}); repeatable")
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md (only when every part ran)")] = True,
) -> None:
    """Full review of a big scope, one batch vs single reviews, and end-to-end turns/s vs the raw embedder."""
    from bench import review as bench

    parts = part or list(BENCH_PARTS)
    unknown = sorted(set(parts) - set(BENCH_PARTS))
    if unknown:
        fail(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(BENCH_PARTS)}")
    from bench.locomo_data import DEFAULT_DATA

    bench.run_review_bench(
        _settings(),
        episodes=episodes,
        turns=turns,
        data=data or DEFAULT_DATA,
        database_url=database_url or bench.BENCH_DATABASE_URL,
        redis_url=redis_url or bench.BENCH_REDIS_URL,
        parts=parts,
        write=write,
        console=out,
    )


def _backend(value: str | None) -> str | None:
    if value is not None and value not in EMBEDDING_BACKENDS:
        fail(f"unknown embedding backend {value!r}; choose from {', '.join(EMBEDDING_BACKENDS)}")
    return value


@bench_app.command("scaling", epilog=example("hindsight bench scaling --turns 3000 --rounds 4"))
def bench_scaling(
    turns: Annotated[int, typer.Option(min=30, help="LoCoMo turns pushed through the stack per run")] = 3000,
    rounds: Annotated[
        int,
        typer.Option(
            min=1,
            help="rounds of (1 worker, 2 workers), order alternating; a 2-core machine shared with other work "
            "moved the ratio by 0.1 between runs of 2 rounds",
        ),
    ] = 4,
    data: LocomoData = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            help="disposable database instead of a private embedded PostgreSQL (its CPU is then not measured)"
        ),
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="disposable Redis db instead of a private embedded Redis")
    ] = None,
    embedding_backend: Annotated[
        str | None,
        typer.Option(
            help="torch, onnx or onnx-int8 (default: torch, one thread per worker, as the target is set)"
        ),
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md and docs/bench/scaling.png")] = True,
) -> None:
    """1 against 2 review workers through the real stack, per-turn CPU by role, and the scaling model."""
    from bench import scaling
    from bench.locomo_data import DEFAULT_DATA

    scaling.run_scaling_bench(
        _settings(),
        turns=turns,
        rounds=rounds,
        data=data or DEFAULT_DATA,
        database_url=database_url,
        redis_url=redis_url,
        backend=_backend(embedding_backend),
        write=write,
        console=out,
    )


@bench_app.command("soak", epilog=example("hindsight bench soak --turns 10000 --no-write"))
def bench_soak(
    turns: Annotated[int, typer.Option(min=100, help="turns fed through the stack")] = 200_000,
    workers: Annotated[int, typer.Option(min=1, help="review workers")] = 2,
    rate: Annotated[
        float, typer.Option(min=0, help="turns/s to feed; 0 = as fast as the stack drains")
    ] = 0.0,
    window: Annotated[int, typer.Option(min=100, help="most turns fed but not yet reviewed")] = 3000,
    bad_every: Annotated[
        int, typer.Option(min=0, help="inject one malformed entry per this many turns (0 = none)")
    ] = 1000,
    sample_s: Annotated[float, typer.Option(min=0.5, help="seconds between memory samples")] = 5.0,
    data: LocomoData = None,
    database_url: Annotated[
        str | None, typer.Option(help="disposable database instead of a private embedded PostgreSQL")
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="disposable Redis db instead of a private embedded Redis")
    ] = None,
    embedding_backend: Annotated[
        str | None, typer.Option(help="torch, onnx or onnx-int8 (default: the configured one)")
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md and docs/bench/soak.png")] = True,
) -> None:
    """Feed many turns through scheduler, workers and indexer; check nothing is lost and memory stays bounded."""
    from bench import soak
    from bench.locomo_data import DEFAULT_DATA

    result = soak.run_soak_bench(
        _settings(),
        turns=turns,
        workers=workers,
        rate=rate,
        window=window,
        bad_every=bad_every,
        sample_s=sample_s,
        data=data or DEFAULT_DATA,
        database_url=database_url,
        redis_url=redis_url,
        backend=_backend(embedding_backend),
        write=write,
        console=out,
    )
    if not result.ok:
        raise typer.Exit(1)


@bench_app.command("poisoning", epilog=example("hindsight bench poisoning --no-write"))
def bench_poisoning(
    data: Annotated[
        Path | None, typer.Option("--data", help="locomo10.json (benign traffic; default: the shared copy)")
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """Injection attempts quarantined vs LoCoMo turns flagged by the poisoning detector."""
    from bench import poisoning
    from bench.locomo_data import DEFAULT_DATA

    results = poisoning.run_poisoning_bench(locomo=data or DEFAULT_DATA, write=write, console=out)
    if results["attacks"][2] < poisoning.ATTACK_TARGET or results["locomo"][2] > poisoning.LOCOMO_TARGET:
        fail("poisoning targets missed (see above)")


@bench_app.command("locomo", epilog=example("hindsight bench locomo --reuse --no-write"))
def bench_locomo(
    data: LocomoData = None,
    conversations: Annotated[
        list[str] | None, typer.Option("--conversations", help="only these sample ids (repeatable)")
    ] = None,
    reuse: Annotated[
        bool, typer.Option(help="skip ingest+review when the bench database holds the same data fingerprint")
    ] = False,
    variant: Annotated[
        list[str] | None,
        typer.Option(help="also score these ranking variants (see bench/locomo_eval.py)"),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_LOCOMO_DATABASE_URL", help="disposable database (TRUNCATEd on ingest)"
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_LOCOMO_REDIS_URL", help="disposable Redis db (FLUSHDBed on ingest)"
        ),
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md (only for all conversations)")] = True,
) -> None:
    """Evidence recall@5/@10 of the real pipeline on LoCoMo, beside BM25 and dense-only."""
    from bench import locomo as bench

    bench.run_locomo_bench(
        _settings(),
        data=data or bench.DEFAULT_DATA,
        database_url=database_url or bench.BENCH_DATABASE_URL,
        redis_url=redis_url or bench.BENCH_REDIS_URL,
        conversations=conversations,
        reuse=reuse,
        variants=variant or [],
        write=write,
        console=out,
    )


@bench_app.command("recall", epilog=example("hindsight bench recall --n 20000 --no-write"))
def bench_recall(
    n: Annotated[int, typer.Option(min=1000, help="memories in the one scope")] = 100_000,
    queries: Annotated[int, typer.Option(min=20, help="LoCoMo questions asked (each timed both ways)")] = 300,
    data: LocomoData = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_LOCOMO_DATABASE_URL", help="bench database (its own scope only)"
        ),
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
) -> None:
    """Recall p95 at 100k memories in one scope vs query embedding + raw vector search p95."""
    from bench import locomo
    from bench import recall_latency as bench

    bench.run_recall_bench(
        _settings(),
        n=n,
        queries=queries,
        data=data or locomo.DEFAULT_DATA,
        database_url=database_url or bench.BENCH_DATABASE_URL,
        write=write,
        console=out,
    )


@bench_app.command("month", epilog=example("hindsight bench month --days 3 --turns-per-day 300 --no-write"))
def bench_month(
    days: Annotated[int, typer.Option(min=1, help="simulated days")] = 30,
    turns_per_day: Annotated[int, typer.Option(min=10, help="turns the agent serves a day")] = 1000,
    data: LocomoData = None,
    review_database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_MONTH_REVIEW_DATABASE_URL",
            help="disposable database of the reviewed side (TRUNCATEd; default hindsight_bench_month_review)",
        ),
    ] = None,
    raw_database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_MONTH_RAW_DATABASE_URL",
            help="disposable database of the raw side (TRUNCATEd; default hindsight_bench_month_raw)",
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(envvar="HINDSIGHT_BENCH_MONTH_REDIS_URL", help="disposable Redis db (FLUSHDBed)"),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the traffic generator")] = 7,
    write: Annotated[
        bool, typer.Option("--write/--no-write", help="update BENCHMARKS.md and docs/bench/month.png")
    ] = True,
) -> None:
    """A simulated month of one agent's traffic with review and decay, against the same traffic stored raw."""
    from bench import month as bench
    from bench.locomo_data import DEFAULT_DATA

    bench.run_month_bench(
        _settings(),
        days=days,
        turns_per_day=turns_per_day,
        data=data or DEFAULT_DATA,
        review_database_url=review_database_url or bench.REVIEW_DATABASE_URL,
        raw_database_url=raw_database_url or bench.RAW_DATABASE_URL,
        redis_url=redis_url or bench.REVIEW_REDIS_URL,
        seed=seed,
        write=write,
        console=out,
    )


@bench_app.command("embed", epilog=example("hindsight bench embed --n 300 --rounds 2 --no-write"))
def bench_embed(
    n: Annotated[int, typer.Option(min=64, help="LoCoMo turns per throughput measurement")] = 1000,
    rounds: Annotated[int, typer.Option(min=1, help="interleaved rounds; the best of each counts")] = 4,
    data: LocomoData = None,
    write: WriteBenchmarks = True,
) -> None:
    """Sentences/s of torch, ONNX fp32 and ONNX int8 at 1 and 2 threads; their agreement with torch."""
    from bench import embed as bench
    from bench.locomo_data import DEFAULT_DATA

    bench.run_embed_bench(
        _settings(), n=n, rounds=rounds, data=data or DEFAULT_DATA, write=write, console=out
    )


@bench_app.command("faults", epilog=example("hindsight bench faults -k outages --no-write"))
def bench_faults(
    select: Annotated[
        str | None, typer.Option("-k", help="only the scenarios matching this pytest expression")
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """Outage recovery times, the SIGKILL storm and the 50,000-turn backlog (the tests/faults scenarios)."""
    from bench import faults

    faults.run_faults_bench(write=write, console=out, select=select)


@bench_app.command(
    "all",
    epilog=example(
        "hindsight bench all --quick --no-write", "hindsight bench all --only ingest --only decay"
    ),
)
def bench_all(
    quick: Annotated[bool, typer.Option(help="smoke sizes: the whole suite in a few minutes")] = False,
    list_: Annotated[
        bool, typer.Option("--list", help="show the benches, their sizes and what they write to; run nothing")
    ] = False,
    only: Annotated[list[str] | None, typer.Option(help="run only these benches (repeatable)")] = None,
    skip: Annotated[list[str] | None, typer.Option(help="leave these benches out (repeatable)")] = None,
    write: Annotated[
        bool | None,
        typer.Option(
            "--write/--no-write",
            help="update BENCHMARKS.md and docs/bench/*.png (default: yes at full sizes, no with --quick)",
        ),
    ] = None,
    data: LocomoData = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_ALL_DATABASE_URL",
            help="one disposable database for every bench, in place of each bench's own (TRUNCATEd)",
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_ALL_REDIS_URL",
            help="one disposable Redis db for every bench, in place of each bench's own (FLUSHDBed)",
        ),
    ] = None,
) -> None:
    """Every benchmark in turn (cheap first), a summary table, and BENCHMARKS.md with charts and the machine.

    A bench that fails is reported and the rest still run; the exit code is then 1 and the last line on stderr
    names the benches that failed.
    """
    from bench import suite

    settings = _settings()
    configure_logging("WARNING", settings.log_json)  # the output is the benches' tables and the summary
    ctx = suite.Context(
        settings=settings,
        console=out,
        write=(not quick) if write is None else write,
        data=data or suite.DEFAULT_DATA,
        database_url=database_url,
        redis_url=redis_url,
    )
    if list_:
        out.print(suite.describe(suite.REGISTRY, ctx))
        return
    result = suite.run_suite(ctx, quick=quick, only=only or [], skip=skip or [])
    if result.failed:
        fail(f"failed: {', '.join(result.failed)}")


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
