"""`hindsight bench scaling|soak|freshness|month|faults|busy-scope`: the whole stack under load, over time and through
faults (workers, scheduler and indexer running together).

Each command imports its bench module when it runs, never at import time: importing pipeline.cli must not
import the bench package (nor what it pulls in).
"""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.bench_options import LocomoData, WriteBenchmarks, checked_backend, out
from pipeline.cli.support import example, fail, load_settings

# This topic's commands; pipeline.cli.bench adds them to `hindsight bench`.
commands = typer.Typer()


@commands.command("scaling", epilog=example("hindsight bench scaling --turns 3000 --rounds 4"))
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
        load_settings(),
        turns=turns,
        rounds=rounds,
        data=data or DEFAULT_DATA,
        database_url=database_url,
        redis_url=redis_url,
        backend=checked_backend(embedding_backend),
        write=write,
        console=out,
    )


@commands.command("soak", epilog=example("hindsight bench soak --turns 10000 --no-write"))
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
        load_settings(),
        turns=turns,
        workers=workers,
        rate=rate,
        window=window,
        bad_every=bad_every,
        sample_s=sample_s,
        data=data or DEFAULT_DATA,
        database_url=database_url,
        redis_url=redis_url,
        backend=checked_backend(embedding_backend),
        write=write,
        console=out,
    )
    if not result.ok:
        raise typer.Exit(1)


@commands.command(
    "busy-scope", epilog=example("hindsight bench busy-scope --statements 300 --others 8 --no-write")
)
def bench_busy_scope(
    statements: Annotated[
        int, typer.Option(min=1, help="same-subject statements pushed into the busy scope")
    ] = 2000,
    others: Annotated[int, typer.Option(min=1, help="the other scope's turns, one short session each")] = 20,
    every: Annotated[
        float, typer.Option(min=0.1, help="seconds between two of the other scope's turns")
    ] = 2.0,
    workers: Annotated[int, typer.Option(min=1, help="review workers")] = 1,
    timeout: Annotated[float, typer.Option(min=1, help="seconds a turn may wait for its review")] = 300.0,
    database_url: Annotated[
        str | None, typer.Option(help="disposable database instead of a private embedded PostgreSQL")
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="disposable Redis db instead of a private embedded Redis")
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """One scope's flood of same-subject statements beside another scope's turns: the other scope's review
    latency with and without it, and the supersession links against the statements (issue 44)."""
    from bench import busy_scope

    busy_scope.run_busy_scope_bench(
        load_settings(),
        statements=statements,
        others=others,
        every_s=every,
        workers=workers,
        timeout_s=timeout,
        database_url=database_url,
        redis_url=redis_url,
        write=write,
        console=out,
    )


@commands.command("freshness", epilog=example("hindsight bench freshness --seconds 20 --rounds 1 --no-write"))
def bench_freshness(
    rate: Annotated[float, typer.Option(min=1, help="turns/s written during the freshness phase")] = 100.0,
    scopes: Annotated[int, typer.Option(min=1, help="scopes the written turns go round")] = 50,
    seconds: Annotated[float, typer.Option(min=1, help="length of the freshness phase")] = 60.0,
    sample_every: Annotated[
        int, typer.Option(min=1, help="recall every this many-th turn written until it is found")
    ] = 40,
    poll_ms: Annotated[
        float, typer.Option(min=10, help="ms between two recalls of a sampled turn not found yet")
    ] = 100.0,
    dense_poll_ms: Annotated[
        float, typer.Option(min=10, help="ms between two recalls of a found turn, until its dense cosine")
    ] = 500.0,
    timeout: Annotated[
        float, typer.Option(min=1, help="seconds after which a sampled turn counts as never found")
    ] = 30.0,
    max_rps: Annotated[
        float,
        typer.Option(min=1, help="most recalls a second in all, so the pollers leave the stack its CPU"),
    ] = 30.0,
    workers: Annotated[int, typer.Option(min=1, help="review workers")] = 1,
    review_scopes: Annotated[
        int, typer.Option(min=1, help="throughput rounds: fresh scopes the turns are pushed into")
    ] = 50,
    review_turns: Annotated[
        int, typer.Option(min=30, help="throughput rounds: turns per scope (a multiple of 30: whole batches)")
    ] = 60,
    rounds: Annotated[int, typer.Option(min=1, help="throughput rounds of (on, off), order alternating")] = 2,
    ingest_n: Annotated[
        int, typer.Option(min=100, help="write_memory ÷ raw XADD: calls per measurement")
    ] = 5000,
    database_url: Annotated[
        str | None, typer.Option(help="disposable database instead of a private embedded PostgreSQL")
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="disposable Redis db instead of a private embedded Redis")
    ] = None,
    embedding_backend: Annotated[
        str | None, typer.Option(help="torch, onnx or onnx-int8 (default: the configured one)")
    ] = None,
    locomo: LocomoData = None,
    write: WriteBenchmarks = True,
) -> None:
    """Read your writes: write → recall latency under a steady load, write_memory ÷ XADD, review on vs off,
    and the write-side injection screen's cost on every evaluation set."""
    from bench import freshness

    if review_turns % 30:
        fail(f"--review-turns must be a multiple of 30 (whole review batches), got {review_turns}")
    freshness.run_freshness_bench(
        load_settings(),
        rate=rate,
        scopes=scopes,
        seconds=seconds,
        sample_every=sample_every,
        poll_s=poll_ms / 1000,
        dense_poll_s=dense_poll_ms / 1000,
        timeout_s=timeout,
        max_rps=max_rps,
        workers=workers,
        review_scopes=review_scopes,
        review_per_scope=review_turns,
        rounds=rounds,
        ingest_n=ingest_n,
        database_url=database_url,
        redis_url=redis_url,
        backend=checked_backend(embedding_backend),
        locomo=locomo,
        write=write,
        console=out,
    )


@commands.command("month", epilog=example("hindsight bench month --days 3 --turns-per-day 300 --no-write"))
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
        load_settings(),
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


@commands.command("faults", epilog=example("hindsight bench faults -k outages --no-write"))
def bench_faults(
    select: Annotated[
        str | None, typer.Option("-k", help="only the scenarios matching this pytest expression")
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """Outage recovery times, the SIGKILL storm and the 50,000-turn backlog (the tests/faults scenarios)."""
    from bench import faults

    faults.run_faults_bench(write=write, console=out, select=select)
