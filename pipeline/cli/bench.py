"""`hindsight bench ...`: the Typer sub-app, its commands gathered from one module per topic, and `all`.

A bench's command lives in the module of its topic, as one function on that module's `commands` (and its
bench in bench/suite.py's REGISTRY, so `all` runs it too):

- bench_speed: how fast one part is beside its floor (ingest, decay, review, recall, embed)
- bench_load: the whole stack under load, over time and through faults (scaling, soak, freshness, month, faults)
- bench_quality: whether what is screened, kept and recalled is right (poisoning, locomo, quality,
  consolidation, tools)

What they share (the console, the LoCoMo and --write options, the embedding backend check) is in bench_options.
Each command imports its bench module when it runs, never at import time: importing pipeline.cli must not
import the bench package (nor what it pulls in). A new topic module needs its own line in the import-linter
contracts' ignore_imports (pyproject.toml) and in TOPICS below.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli import bench_load, bench_quality, bench_speed
from pipeline.cli.bench_options import LocomoData, out
from pipeline.cli.support import example, fail, load_settings
from pipeline.core.logging import configure_logging

bench_app = typer.Typer(
    no_args_is_help=True,
    help="Benchmarks; each writes its figures to BENCHMARKS.md.",
    epilog=example("hindsight bench ingest --n 2000"),
)

# `hindsight bench --help` lists the commands topic by topic, in this order, then `all`.
TOPICS = (bench_speed, bench_load, bench_quality)
bench_app.registered_commands.extend(c for topic in TOPICS for c in topic.commands.registered_commands)


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
