"""`hindsight bench ingest|decay|review|recall|embed`: how fast one part of the pipeline is, beside its floor
(a raw XADD, a plain UPDATE, the raw embedder, a raw vector search).

Each command imports its bench module when it runs, never at import time: importing pipeline.cli must not
import the bench package (nor what it pulls in).
"""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.bench_options import LocomoData, WriteBenchmarks, out
from pipeline.cli.support import example, fail, load_settings

# This topic's commands; pipeline.cli.bench adds them to `hindsight bench`.
commands = typer.Typer()


@commands.command("ingest", epilog=example("hindsight bench ingest --n 2000 --rounds 3"))
def bench_ingest(
    n: Annotated[int, typer.Option(help="turns per measurement")] = 5000,
    rounds: Annotated[int, typer.Option(help="interleaved rounds of each measurement")] = 3,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
) -> None:
    """write_memory latency against a raw XADD of the same payload, and pipelined throughput."""
    from bench.ingest import run_ingest_bench

    run_ingest_bench(load_settings(), n=n, rounds=rounds, write=write, console=out)


@commands.command("decay", epilog=example("hindsight bench decay --rows 100000 --no-write"))
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


@commands.command("review", epilog=example("hindsight bench review --part full --episodes 2000 --no-write"))
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


@commands.command("recall", epilog=example("hindsight bench recall --n 20000 --no-write"))
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


@commands.command("embed", epilog=example("hindsight bench embed --n 300 --rounds 2 --no-write"))
def bench_embed(
    n: Annotated[int, typer.Option(min=64, help="LoCoMo turns per throughput measurement")] = 1000,
    rounds: Annotated[int, typer.Option(min=1, help="interleaved rounds; the best of each counts")] = 4,
    data: LocomoData = None,
    write: WriteBenchmarks = True,
    model: Annotated[
        list[str] | None,
        typer.Option(
            help="compare these embedding models instead (repeat it: --model all-MiniLM-L6-v2 "
            "--model multilingual-e5-small): texts/s, first-vector time and peak RSS of each, ONNX fp32 and int8"
        ),
    ] = None,
) -> None:
    """Sentences/s of torch, ONNX fp32 and ONNX int8 at 1 and 2 threads; their agreement with torch."""
    from bench import embed as bench
    from bench.locomo_data import DEFAULT_DATA

    if model:
        bench.run_models_bench(
            load_settings(), model, n=n, rounds=rounds, data=data or DEFAULT_DATA, console=out
        )
        return
    bench.run_embed_bench(
        load_settings(), n=n, rounds=rounds, data=data or DEFAULT_DATA, write=write, console=out
    )


@commands.command(
    "frameworks", epilog=example("hindsight bench frameworks --items 300 --queries 100 --no-write")
)
def bench_frameworks(
    items: Annotated[int, typer.Option(min=10, help="LangGraph store items in one scope")] = 500,
    queries: Annotated[int, typer.Option(min=20, help="questions, each timed both ways")] = 300,
    database_url: Annotated[
        str | None, typer.Option(help="a disposable PostgreSQL database (default: an embedded one)")
    ] = None,
    redis_url: Annotated[
        str | None, typer.Option(help="a disposable Redis db (default: an embedded one)")
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """LangGraph store.search p50 vs client.recall p50 on one stack (target: at most 1.2x)."""
    from bench import frameworks as bench

    bench.run_frameworks_bench(
        load_settings(),
        items=items,
        queries=queries,
        database_url=database_url,
        redis_url=redis_url,
        write=write,
        console=out,
    )


@commands.command(
    "model-cost",
    epilog=example("hindsight bench model-cost --turns 300 --rounds 2 --no-write"),
)
def bench_model_cost(
    model: Annotated[
        list[str] | None,
        typer.Option(
            help="model:backend to compare, the first is the base (repeatable); default MiniLM:onnx, e5:onnx-int8"
        ),
    ] = None,
    turns: Annotated[int, typer.Option(min=30, help="LoCoMo turns reviewed per model and round")] = 600,
    rounds: Annotated[int, typer.Option(min=1, help="rounds, in alternating model order")] = 2,
    data: LocomoData = None,
    write: WriteBenchmarks = True,
) -> None:
    """Reviewed turns/s of each embedding model end to end, side by side in one run, and the worker's memory."""
    from bench import model_cost
    from bench.locomo_data import DEFAULT_DATA

    models = [model_cost.parse_model(m) for m in model] if model else list(model_cost.MODELS)
    model_cost.run_model_cost_bench(
        load_settings(),
        models=models,
        turns=turns,
        rounds=rounds,
        data=data or DEFAULT_DATA,
        write=write,
        console=out,
    )
