"""`hindsight bench all`: every benchmark in one run, a summary table, a machine note and the charts.

The registry below is the whole list: adding a benchmark is one `Benchmark(...)` entry (a runner that calls its
`run_*` in-process and returns its figures as a flat dict, its quick and full sizes, the database and Redis db
it wipes, and its headline figures against their targets). Every bench runs in this process: each `run_*`
already isolates what needs isolating (the review and LoCoMo benches start their own Celery worker process,
the embed bench a fresh process per backend for start-up cost), so a subprocess per bench would add only a
second model load per bench. A bench that raises is reported and the rest still run.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import subprocess
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import report
from bench.locomo_data import DEFAULT_DATA
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
Figures = dict[str, float]
# The bench modules' own defaults, named here so that importing the registry imports none of them.
LOCOMO_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_locomo"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/12"  # the review bench's
MONTH_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_month_review"  # and ..._month_raw
MONTH_REDIS_URL = "redis://127.0.0.1:6379/5"


@dataclass(frozen=True)
class Context:
    """What every runner gets: the settings, where to print, whether to write BENCHMARKS.md, the LoCoMo file,
    and a database / Redis db that replaces every bench's own when given (one disposable pair for all)."""

    settings: Settings
    console: Console
    write: bool
    data: Path = DEFAULT_DATA
    database_url: str | None = None
    redis_url: str | None = None


@dataclass(frozen=True)
class Headline:
    label: str
    value: str
    target: str
    met: bool | None  # None: no target


Runner = Callable[..., Figures]


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: Runner  # run(ctx, **size) -> figures
    quick: Mapping[str, Any]  # sizes for a smoke run: the whole suite in a few minutes
    full: Mapping[str, Any]  # the sizes
    headlines: Callable[[Figures], list[Headline]]
    database: str | None = None  # the database it truncates by default (None: none)
    redis: str | None = None  # the Redis db it writes or flushes by default
    chart: bool = False  # charts.draw(name, figures) exists
    locomo: bool = True  # reads the LoCoMo file (Context.data)
    command: str | None = None  # the `hindsight bench` command it runs when not its name ("updates")


@dataclass
class Outcome:
    name: str
    seconds: float
    figures: Figures = field(default_factory=dict)
    error: str | None = None
    headlines: list[Headline] = field(default_factory=list)
    chart: Path | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _target(value: float, met: bool, fmt: str, target: str, label: str) -> Headline:
    return Headline(label, format(value, fmt), target, met)


# -- the runners: each calls its bench in-process and returns its figures ----------------------------------


def _month(ctx: Context, *, days: int, turns_per_day: int) -> Figures:
    from bench.month import RAW_DATABASE_URL, run_month_bench

    figures = run_month_bench(
        ctx.settings,
        days=days,
        turns_per_day=turns_per_day,
        data=ctx.data,
        review_database_url=ctx.database_url or MONTH_DB,
        raw_database_url=ctx.database_url or RAW_DATABASE_URL,
        redis_url=ctx.redis_url or MONTH_REDIS_URL,
        write=ctx.write,
        console=ctx.console,
    )
    flat = {k: float(v) for k, v in figures.items() if isinstance(v, int | float)}
    if figures.get("per_day"):
        last = figures["per_day"][-1]
        flat["recall_p95_ms_review"] = float(last["recall_p95_ms_review"])
        flat["recall_p95_ms_raw"] = float(last["recall_p95_ms_raw"])
    return flat


def _month_headlines(f: Figures) -> list[Headline]:
    from bench.month import ACTIVE_TARGET, RATIO_TARGET

    active, ratio = f["active_review"], f["recall_ratio"]
    return [
        _target(
            active,
            active <= ACTIVE_TARGET,
            ",.0f",
            f"≤ {ACTIVE_TARGET:,}",
            f"active memories after {f['days']:.0f} days",
        ),
        _target(ratio, ratio >= RATIO_TARGET, ".3f", f"≥ {RATIO_TARGET}", "LoCoMo recall@10, review ÷ raw"),
    ]


def _scaling(ctx: Context, *, turns: int, rounds: int) -> Figures:
    from bench import scaling

    result = scaling.run_scaling_bench(
        ctx.settings,
        turns=turns,
        rounds=rounds,
        data=ctx.data,
        database_url=ctx.database_url,
        redis_url=ctx.redis_url,
        write=ctx.write,
        console=ctx.console,
    )
    return scaling.figures(result)


def _scaling_headlines(f: Figures) -> list[Headline]:
    wall, cpu = f["wall_ratio"], f["cpu_ratio"]
    return [
        _target(wall, wall >= 1.8, ".2f", "≥ 1.8", "2 workers ÷ 1, turns/s (wall)"),
        Headline("2 ÷ 1, turns per worker-CPU-second", f"{cpu:.2f}", "", None),
    ]


def _soak(ctx: Context, *, turns: int) -> Figures:
    from bench import soak

    result = soak.run_soak_bench(
        ctx.settings,
        turns=turns,
        data=ctx.data,
        database_url=ctx.database_url,
        redis_url=ctx.redis_url,
        write=ctx.write,
        console=ctx.console,
    )
    return {
        "turns": float(result.turns),
        "turns_per_s": result.turns_per_s,
        "lost_ok": float(result.lost_ok),
        "bounded_ok": float(result.bounded_ok),
    }


def _soak_headlines(f: Figures) -> list[Headline]:
    turns = f"{f['turns']:,.0f} turns"
    return [
        Headline(f"nothing lost, {turns}", "yes" if f["lost_ok"] else "no", "yes", bool(f["lost_ok"])),
        Headline("memory bounded", "yes" if f["bounded_ok"] else "no", "yes", bool(f["bounded_ok"])),
    ]


def _ingest(ctx: Context, *, n: int, rounds: int) -> Figures:
    from bench.ingest import run_ingest_bench

    # The review bench's Redis db, not the configured pipeline's (by default the embedded one of `hindsight up`,
    # which need not be running): the bench writes one stream of its own there and deletes it.
    settings = ctx.settings.model_copy(update={"redis_url": ctx.redis_url or BENCH_REDIS_URL})
    return run_ingest_bench(settings, n=n, rounds=rounds, write=ctx.write, console=ctx.console)


def _ingest_headlines(f: Figures) -> list[Headline]:
    r = f["ratio_p50"]
    return [_target(r, r <= 2.0, ".2f", "≤ 2.0", "write_memory ÷ raw XADD, p50")]


def _poisoning(ctx: Context) -> Figures:
    from bench.poisoning import run_poisoning_bench

    results = run_poisoning_bench(locomo=ctx.data, write=ctx.write, console=ctx.console)
    return {
        f"{key}_rate": float(value[2])
        for key, value in results.items()
        if isinstance(value, tuple) and len(value) == 3
    }


def _poisoning_headlines(f: Figures) -> list[Headline]:
    from bench.poisoning import ATTACK_TARGET, LOCOMO_TARGET

    a, b = f["heldout_rate"], f["locomo_rate"]
    return [
        _target(a, a >= ATTACK_TARGET, ".1%", f"≥ {ATTACK_TARGET:.0%}", "held-out attacks quarantined"),
        _target(b, b <= LOCOMO_TARGET, ".2%", f"≤ {LOCOMO_TARGET:.1%}", "LoCoMo turns flagged"),
    ]


def _embed(ctx: Context, *, n: int, rounds: int, conversations: int | None = None) -> Figures:
    from bench.embed import run_embed_bench

    result = run_embed_bench(
        ctx.settings,
        n=n,
        rounds=rounds,
        data=ctx.data,
        write=ctx.write,
        console=ctx.console,
        conversations=conversations,
    )
    return result.figures


def _embed_headlines(f: Figures) -> list[Headline]:
    from bench.embed import TARGET_AGREEMENT, TARGET_RECALL_DELTA, TARGET_SPEEDUP

    out = []
    for backend in ("onnx-int8", "onnx"):
        ratios = [v for k, v in f.items() if k.startswith(f"{backend}_t") and k.endswith("_cpu_ratio")]
        if not ratios:
            continue
        speed, agree = min(ratios), f[f"{backend}_agreement"]
        out.append(
            _target(
                speed,
                speed >= TARGET_SPEEDUP,
                ".2f",
                f"≥ {TARGET_SPEEDUP:g}",
                f"{backend} ÷ torch, per CPU s",
            )
        )
        out.append(
            _target(
                agree,
                agree >= TARGET_AGREEMENT,
                ".4f",
                f"≥ {TARGET_AGREEMENT}",
                f"{backend} top-10 agreement",
            )
        )
        if f"{backend}_recall10" in f and "torch_recall10" in f:
            delta = f[f"{backend}_recall10"] - f["torch_recall10"]
            out.append(
                _target(
                    delta,
                    abs(delta) <= TARGET_RECALL_DELTA,
                    "+.4f",
                    f"within ±{TARGET_RECALL_DELTA}",
                    f"{backend} LoCoMo recall@10 − torch",
                )
            )
    return out


def _decay(ctx: Context, *, rows: int, chunks: Sequence[int]) -> Figures:
    from bench import decay

    rounds = decay.run_decay_bench(
        ctx.settings,
        rows=rows,
        database_url=ctx.database_url or decay.BENCH_DATABASE_URL,
        chunks=list(chunks),
        write=ctx.write,
        console=ctx.console,
    )
    return decay.figures(rounds, rows)


def _decay_headlines(f: Figures) -> list[Headline]:
    chunk = min(int(k.rsplit("_", 1)[1]) for k in f if k.startswith("full_s_"))
    seconds, target = f[f"full_s_{chunk}"], f["target_s"]
    ratio = f[f"ratio_{chunk}"]
    return [
        _target(
            seconds, seconds <= target, ".1f", f"≤ {target:.1f} s", f"full pass, {f['rows']:,.0f} rows (s)"
        ),
        Headline("full pass ÷ plain UPDATE of the same rows", f"{ratio:.2f}", "", None),
    ]


def _review(ctx: Context, *, episodes: int, turns: int, batch_rounds: int = 2) -> Figures:
    from bench import review

    return review.run_review_bench(
        ctx.settings,
        episodes=episodes,
        turns=turns,
        data=ctx.data,
        database_url=ctx.database_url or review.BENCH_DATABASE_URL,
        redis_url=ctx.redis_url or review.BENCH_REDIS_URL,
        parts=["full", "batching", "e2e"],
        write=ctx.write,
        console=ctx.console,
        batch_rounds=batch_rounds,
    )


def _review_headlines(f: Figures) -> list[Headline]:
    from bench.review import BATCH_TARGET, E2E_TARGET, FULL_TARGET_MS

    full, batch, e2e = f["full_total_ms"], f["batch_ratio_stored"], f["e2e_ratio"]
    return [
        _target(full, full <= FULL_TARGET_MS, ",.0f", f"≤ {FULL_TARGET_MS:,.0f} ms", "full review path (ms)"),
        _target(batch, batch <= BATCH_TARGET, ".3f", f"≤ {BATCH_TARGET}", "1 × 100 ÷ 100 × 1, pre-stored"),
        _target(e2e, e2e >= E2E_TARGET, ".3f", f"≥ {E2E_TARGET}", "end to end ÷ raw embedder"),
    ]


def _locomo(ctx: Context, *, reuse: bool, conversations: Sequence[str] | None = None) -> Figures:
    from bench import locomo

    result = locomo.run_locomo_bench(
        ctx.settings,
        data=ctx.data,
        database_url=ctx.database_url or locomo.BENCH_DATABASE_URL,
        redis_url=ctx.redis_url or locomo.BENCH_REDIS_URL,
        conversations=list(conversations) if conversations else None,
        reuse=reuse,
        variants=[],
        write=ctx.write,
        console=ctx.console,
    )
    return result.figures


def _quality(ctx: Context, *, reuse: bool, sets: Sequence[str] | None = None) -> Figures:
    from bench import quality

    chosen = [s for s in quality.builtin_sets(ctx.data) if sets is None or s.name in sets]
    # At full size with the ablation table: the section it writes replaces the one `bench quality` wrote.
    variants = quality.ABLATIONS if sets is None else ()
    results = quality.run_quality_bench(
        ctx.settings, sets=chosen, reuse=reuse, variants=variants, write=ctx.write, console=ctx.console
    )
    return {k: v for r in results for k, v in r.figures.items()}


def _quality_headlines(f: Figures) -> list[Headline]:
    out: list[Headline] = []
    for name in sorted({k.removesuffix("_kept") for k in f if k.endswith("_kept")}):
        r10, best = f[f"{name}_r10"], f[f"{name}_best_floor_r10"]
        out.append(
            _target(
                r10, r10 >= best + 0.10, ".3f", f"≥ {best + 0.10:.3f}", f"{name} R@10 (best floor + 0.10)"
            )
        )
        kept = f[f"{name}_kept"]
        out.append(_target(kept, kept >= 0.98, ".3f", "≥ 0.98", f"{name} evidence kept by review"))
    return out


def _model_cost(ctx: Context, *, turns: int, rounds: int) -> Figures:
    from bench import model_cost

    return model_cost.run_model_cost_bench(
        ctx.settings,
        turns=turns,
        rounds=rounds,
        data=ctx.data,
        database_url=ctx.database_url or model_cost.BENCH_DATABASE_URL,
        redis_url=ctx.redis_url or model_cost.BENCH_REDIS_URL,
        write=ctx.write,
        console=ctx.console,
    )


def _model_cost_headlines(f: Figures) -> list[Headline]:
    ratios = {k: v for k, v in f.items() if k.endswith("_ratio") and "all-MiniLM" not in k}
    return [
        _target(
            v,
            v >= 0.7,
            ".2f",
            "≥ 0.70",
            k.removeprefix("model_cost_").removesuffix("_ratio") + " reviewed turns/s ratio",
        )
        for k, v in sorted(ratios.items())
    ]


def _longmemeval(ctx: Context, *, per_type: int, reuse: bool) -> Figures:
    from bench import longmemeval

    return longmemeval.run_longmemeval_bench(
        ctx.settings,
        per_type=per_type,
        reuse=reuse,
        write=ctx.write,
        console=ctx.console,
        redis_url=ctx.redis_url or longmemeval.REDIS_URL,
    )


def _longmemeval_headlines(f: Figures) -> list[Headline]:
    r10, best = f["longmemeval_r10"], f["longmemeval_best_floor_r10"]
    session = f["longmemeval_session_any5"]
    return [
        _target(
            r10, r10 >= max(0.95, best + 0.05), ".3f", f"≥ max(0.95, {best + 0.05:.3f})", "LongMemEval R@10"
        ),
        _target(session, session >= 0.97, ".3f", "≥ 0.97", "LongMemEval session any@5"),
    ]


def _consolidation(ctx: Context, *, topics: int | None = None) -> Figures:
    from bench import consolidation, consolidation_restated

    return consolidation.run_consolidation_bench(
        ctx.settings,
        database_url=ctx.database_url or consolidation.BENCH_DATABASE_URL,
        redis_url=ctx.redis_url or consolidation.BENCH_REDIS_URL,
        topics=topics,
        write=ctx.write,
        console=ctx.console,
        also=consolidation_restated.also,
    )


def _tools(ctx: Context) -> Figures:
    from bench import tools

    return tools.run_tools_bench(
        ctx.settings,
        database_url=ctx.database_url or tools.BENCH_DATABASE_URL,
        redis_url=tools.BENCH_REDIS_URL,
        write=ctx.write,
        console=ctx.console,
    )


def _tools_headlines(f: Figures) -> list[Headline]:
    from bench.tools import TARGETS

    return [
        _target(
            f["direction"], f["direction"] >= TARGETS["direction"], ".0%", "≥ 95%", "tools: better named"
        ),
        _target(
            f["max_rate_error_points"],
            f["max_rate_error_points"] <= TARGETS["max_rate_error_points"],
            ".1f",
            "≤ 5 points",
            "tools: max success-rate error",
        ),
        _target(
            f["degradation_hours"],
            f["degradation_hours"] <= TARGETS["degradation_hours"],
            ".1f",
            "≤ 24 h",
            "tools: hours until a degradation shows",
        ),
    ]


def _frameworks(ctx: Context, *, items: int, queries: int) -> Figures:
    from bench import frameworks

    r = frameworks.run_frameworks_bench(
        ctx.settings,
        items=items,
        queries=queries,
        database_url=ctx.database_url,  # `bench all --database-url/--redis-url`, as every other bench
        redis_url=ctx.redis_url,
        write=ctx.write,
        console=ctx.console,
    )
    return {
        "ratio_p50": r.ratio,
        "recall_p50_ms": r.p(r.recall_ms, 50),
        "search_p50_ms": r.p(r.search_ms, 50),
    }


def _frameworks_headlines(f: Figures) -> list[Headline]:
    return [
        _target(
            f["ratio_p50"],
            f["ratio_p50"] <= 1.2,
            ".2f",
            "≤ 1.2",
            "frameworks: store.search / client.recall p50",
        )
    ]


def _updates_set(set_name: str) -> Runner:
    """The runner of one labelled update set (`bench updates --set`), each with its own database."""

    def run(ctx: Context) -> Figures:
        from bench import updates

        return updates.run(ctx.settings, reuse=False, write=ctx.write, console=ctx.console, set_name=set_name)

    return run


def _value_order_headlines(set_label: str) -> Callable[[Figures], list[Headline]]:
    """Issue 46's targets on a labelled set's test half: the wanted statement first, top-1, no false links."""
    from bench.updates import TARGETS as REVIEW_TARGETS
    from bench.updates_lme import TARGETS

    def headlines(f: Figures) -> list[Headline]:
        return [
            _target(
                f["product_test_current_first"],
                f["product_test_current_first"] >= TARGETS["first"]
                and f["product_test_current_first"]
                >= f.get("naive_test_current_first", 1.0) + TARGETS["over_naive"],
                ".3f",
                f"≥ {TARGETS['first']} and ≥ naive + {TARGETS['over_naive']}",
                f"{set_label}: wanted-first (test half)",
            ),
            _target(
                f["product_test_top1"],
                f["product_test_top1"] >= TARGETS["top1"],
                ".3f",
                f"≥ {TARGETS['top1']}",
                f"{set_label}: wanted top-1 (test half)",
            ),
            _target(
                f["test_false_rate"],
                f["test_false_rate"] <= REVIEW_TARGETS["false_rate"],
                ".1%",
                "≤ 1%",
                f"{set_label}: false supersessions",
            ),
        ]

    return headlines


def _updates_headlines(f: Figures) -> list[Headline]:
    from bench.updates import TARGETS

    return [
        _target(
            f["product_test_current_first"],
            f["product_test_current_first"] >= TARGETS["current_first"],
            ".3f",
            "≥ 0.95",
            "updates: current-first (test half)",
        ),
        _target(
            f["product_test_top1"],
            f["product_test_top1"] >= TARGETS["top1"],
            ".3f",
            "≥ 0.85",
            "updates: current value top-1 (test half)",
        ),
        _target(
            f["test_false_rate"],
            f["test_false_rate"] <= TARGETS["false_rate"],
            ".1%",
            "≤ 1%",
            "updates: false supersessions (test half)",
        ),
    ]


def _consolidation_headlines(f: Figures) -> list[Headline]:
    from bench.consolidation import TARGET_COMPLETENESS, TARGET_KEYWORD_TEXTS, TARGET_MIXED, TARGET_PURITY

    purity, complete, mixed, keywords = f["purity"], f["completeness"], f["mixed"], f["keyword_texts"]
    return [
        _target(
            purity, purity >= TARGET_PURITY, ".3f", f"≥ {TARGET_PURITY}", "semantic memories: pairwise purity"
        ),
        _target(
            complete,
            complete >= TARGET_COMPLETENESS,
            ".3f",
            f"≥ {TARGET_COMPLETENESS}",
            "semantic memories: completeness",
        ),
        _target(mixed, mixed <= TARGET_MIXED, ".0f", f"{TARGET_MIXED}", "memories mixing two attributes"),
        _target(
            keywords, keywords <= TARGET_KEYWORD_TEXTS, ".0f", f"{TARGET_KEYWORD_TEXTS}", "keyword-list texts"
        ),
        *_restated_headlines(f),
    ]


def _restated_headlines(f: Figures) -> list[Headline]:
    """Issue 40's set of restated preferences (bench/consolidation_restated.py), when it ran."""
    if "restated_test_purity" not in f:
        return []
    out = []
    for half, name in (("tuned", "tuned"), ("test", "held out")):
        purity = f[f"restated_{half}_purity"]
        out.append(_target(purity, purity >= 0.95, ".3f", "≥ 0.95", f"restated preferences: purity ({name})"))
    mixed, wrong = f["restated_mixed"], f["restated_stated_wrong"]
    out.append(_target(mixed, mixed <= 0, ".0f", "0", "restated preferences: memories mixing subjects"))
    out.append(
        _target(wrong, wrong <= 0, ".0f", "0", "restated preferences: stated members of another topic")
    )
    return out


def _locomo_headlines(f: Figures) -> list[Headline]:
    r10, r5 = f["all_r10"], f["all_r5"]
    return [
        _target(r10, r10 >= 0.80, ".3f", "≥ 0.80", "recall@10"),
        _target(r5, r5 >= 0.70, ".3f", "≥ 0.70", "recall@5"),
    ]


def _recall(ctx: Context, *, n: int, queries: int) -> Figures:
    from bench import recall_latency

    result = recall_latency.run_recall_bench(
        ctx.settings,
        n=n,
        queries=queries,
        data=ctx.data,
        # The LoCoMo bench's database, where its ingest left the turns' vectors for this bench to reuse.
        database_url=ctx.database_url or recall_latency.BENCH_DATABASE_URL,
        write=ctx.write,
        console=ctx.console,
    )
    return result.figures


def _recall_headlines(f: Figures) -> list[Headline]:
    from bench.recall_latency import TARGET

    r = f["ratio_p95"]
    return [_target(r, r <= TARGET, ".2f", f"≤ {TARGET}", "hybrid recall ÷ vector search, p95")]


def _freshness(
    ctx: Context,
    *,
    rate: float,
    scopes: int,
    seconds: float,
    review_scopes: int,
    review_per_scope: int,
    rounds: int,
) -> Figures:
    from bench import freshness

    result = freshness.run_freshness_bench(
        ctx.settings,
        rate=rate,
        scopes=scopes,
        seconds=seconds,
        review_scopes=review_scopes,
        review_per_scope=review_per_scope,
        rounds=rounds,
        database_url=ctx.database_url,
        redis_url=ctx.redis_url,
        write=ctx.write,
        console=ctx.console,
    )
    return freshness.figures(result)


def _freshness_headlines(f: Figures) -> list[Headline]:
    from bench.freshness import (
        TARGET_ANY_P95_S,
        TARGET_DENSE_P95_S,
        TARGET_INGEST_RATIO,
        TARGET_REVIEW_RATIO,
    )

    any_p95, dense_p95 = f["any_p95_s"], f["dense_p95_s"]
    ingest, review = f["ingest_ratio_p50"], f["review_ratio"]
    return [
        _target(
            any_p95,
            any_p95 <= TARGET_ANY_P95_S,
            ".2f",
            f"≤ {TARGET_ANY_P95_S:g} s",
            "write → recall, p95 (s)",
        ),
        _target(
            dense_p95,
            dense_p95 <= TARGET_DENSE_P95_S,
            ".2f",
            f"≤ {TARGET_DENSE_P95_S:g} s",
            "write → recall with a dense cosine, p95 (s)",
        ),
        _target(
            ingest,
            ingest <= TARGET_INGEST_RATIO,
            ".2f",
            f"≤ {TARGET_INGEST_RATIO}",
            "write_memory ÷ raw XADD, p50",
        ),
        _target(
            review,
            review >= TARGET_REVIEW_RATIO,
            ".2f",
            f"≥ {TARGET_REVIEW_RATIO}",
            "review turns/s, on ÷ off",
        ),
    ]


def _faults(ctx: Context, *, select: str | None = None) -> Figures:
    from bench.faults import run_faults_bench

    return run_faults_bench(write=ctx.write, console=ctx.console, select=select)


def _faults_headlines(f: Figures) -> list[Headline]:
    return [Headline("every fault scenario recovered, nothing lost", f"{f['seconds']:,.0f} s", "pass", True)]


def _busy_scope(ctx: Context, *, statements: int, others: int, every_s: float) -> Figures:
    from bench import busy_scope

    quiet, loaded = busy_scope.run_busy_scope_bench(
        ctx.settings,
        statements=statements,
        others=others,
        every_s=every_s,
        database_url=ctx.database_url,
        redis_url=ctx.redis_url,
        write=ctx.write,
        console=ctx.console,
    )
    return busy_scope.figures(quiet, loaded)


def _busy_scope_headlines(f: Figures) -> list[Headline]:
    from bench.busy_scope import LINKS_PER_STATEMENT_BOUND, TARGET_OTHER_P95_S

    p95, links = f["beside_p95_s"], f["links_per_statement"]
    complete = f["missed"] == 0 and f["failed_batches"] == 0 and f["reviewed"] >= f["statements"]
    return [
        _target(
            p95,
            p95 <= TARGET_OTHER_P95_S and complete,
            ".2f",
            f"≤ {TARGET_OTHER_P95_S:g} s, every turn reviewed",
            "other scope's review latency beside a busy scope, p95 (s)",
        ),
        _target(
            links,
            links <= LINKS_PER_STATEMENT_BOUND,
            ".2f",
            f"≤ {LINKS_PER_STATEMENT_BOUND:g}",
            "supersession links per same-subject statement",
        ),
    ]


# -- the registry: run order is list order, cheap first ------------------------------------------------------


REGISTRY: tuple[Benchmark, ...] = (
    Benchmark(
        "ingest",
        _ingest,
        {"n": 500, "rounds": 1},
        {"n": 5000, "rounds": 3},
        _ingest_headlines,
        redis=BENCH_REDIS_URL,
        chart=True,
        locomo=False,
    ),
    Benchmark("poisoning", _poisoning, {}, {}, _poisoning_headlines),
    Benchmark(
        "embed",
        _embed,
        {"n": 64, "rounds": 1, "conversations": 1},
        {"n": 1000, "rounds": 4},
        _embed_headlines,
        chart=True,
    ),
    Benchmark(
        "decay",
        _decay,
        {"rows": 20_000, "chunks": (10_000,)},
        {"rows": 1_000_000, "chunks": (50_000, 100_000, 200_000)},
        _decay_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_decay",
        chart=True,
        locomo=False,
    ),
    Benchmark(
        "review",
        _review,
        {"episodes": 200, "turns": 150, "batch_rounds": 1},
        {"episodes": 10_000, "turns": 3000},
        _review_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench",
        redis=BENCH_REDIS_URL,
        chart=True,
    ),
    # LoCoMo before recall: recall reuses the vectors its ingest stored in the same database.
    Benchmark(
        "locomo",
        _locomo,
        # Quick: one conversation (419 turns), and the ingest reused when the bench database holds the same
        # fingerprint. Full: ingested afresh, since the fingerprint (data, settings, INGEST_FORMAT) does not
        # cover changes to the review code, and these figures must be of the committed code.
        {"conversations": ("conv-26",), "reuse": True},
        {"reuse": False},
        _locomo_headlines,
        database=LOCOMO_DB,
        redis="redis://127.0.0.1:6379/2",
        chart=True,
    ),
    # One bench database per set (hindsight_bench_quality_<set>), so each set's ingest can be reused.
    Benchmark(
        "quality",
        _quality,
        # Quick: the smallest set only, its ingest reused when its database holds the same fingerprint.
        {"sets": ("friends_chat",), "reuse": True},
        {"reuse": False},
        _quality_headlines,
        redis="redis://127.0.0.1:6379/2",
    ),
    # The embedding model's cost to review, models side by side (issue 45's budget).
    Benchmark(
        "model-cost",
        _model_cost,
        {"turns": 90, "rounds": 1},
        {"turns": 600, "rounds": 2},
        _model_cost_headlines,
        database=LOCOMO_DB.replace("_locomo", ""),
        redis=BENCH_REDIS_URL,
    ),
    # LongMemEval S, one scope per question: quick is one question per type, its ingest reused.
    Benchmark(
        "longmemeval",
        _longmemeval,
        {"per_type": 1, "reuse": True},
        {"per_type": 5, "reuse": False},
        _longmemeval_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_quality_longmemeval",
        redis="redis://127.0.0.1:6379/7",
        locomo=False,
    ),
    # Full reviews of a labelled set in-process (no worker, no LLM): its own database, a minute at full size.
    Benchmark(
        "consolidation",
        _consolidation,
        {"topics": 3},
        {},
        _consolidation_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_consolidation",
        locomo=False,
    ),
    # A simulated month of tool calls through full reviews in-process: its own database, about a minute.
    # LangGraph store.search against client.recall on one embedded stack.
    Benchmark(
        "frameworks",
        _frameworks,
        {"items": 100, "queries": 20},
        {"items": 500, "queries": 300},
        _frameworks_headlines,
        locomo=False,
    ),
    # The labelled update set through the pipeline: its own database, a few minutes.
    Benchmark(
        "updates",
        _updates_set("updates"),
        {},
        {},
        _updates_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_updates",
        locomo=False,
    ),
    # Issue 46's two labelled sets through the pipeline (`bench updates --set long|agents`), each in its own
    # database: values inside long requests, short agent chats.
    *(
        Benchmark(
            f"updates-{set_name}",
            _updates_set(set_name),
            {},
            {},
            _value_order_headlines(label),
            database=f"postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_updates_{set_name}",
            locomo=False,
            command="updates",
        )
        for set_name, label in (("long", "long requests"), ("agents", "agent chats"))
    ),
    Benchmark(
        "tools",
        _tools,
        {},
        {},
        _tools_headlines,
        database="postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_tools",
        locomo=False,
    ),
    Benchmark(
        "recall",
        _recall,
        # 400 ≤ the 419 turns of conv-26: the quick LoCoMo ingest's stored vectors cover them, nothing is embedded.
        {"n": 400, "queries": 20},
        {"n": 100_000, "queries": 300},
        _recall_headlines,
        database=LOCOMO_DB,
        chart=True,
    ),
    # The fault scenarios start private embedded servers of their own: no shared database or Redis db.
    Benchmark(
        "faults",
        _faults,
        {"select": "redis_restarted"},
        {},
        _faults_headlines,
        locomo=False,
    ),
    # Two databases (review side, raw side) and a Redis db; an override database holds both sides, each under
    # its own agent. It draws its own chart (docs/bench/month.png) when it writes.
    Benchmark(
        "month",
        _month,
        {"days": 3, "turns_per_day": 300},
        {"days": 30, "turns_per_day": 1000},
        _month_headlines,
        database=MONTH_DB,
        redis=MONTH_REDIS_URL,
    ),
    # Read your writes: private embedded servers unless the suite is given one database and Redis db.
    Benchmark(
        "freshness",
        _freshness,
        {"rate": 20.0, "scopes": 5, "seconds": 10.0, "review_scopes": 5, "review_per_scope": 30, "rounds": 1},
        {
            "rate": 100.0,
            "scopes": 50,
            "seconds": 60.0,
            "review_scopes": 50,
            "review_per_scope": 60,
            "rounds": 2,
        },
        _freshness_headlines,
        locomo=False,
    ),
    # One scope's flood beside another scope's turns (issue 44): private embedded servers unless the suite is
    # given one database and Redis db.
    Benchmark(
        "busy-scope",
        _busy_scope,
        {"statements": 300, "others": 6, "every_s": 1.0},
        {"statements": 2000, "others": 20, "every_s": 2.0},
        _busy_scope_headlines,
        locomo=False,
    ),
    # Scaling and the soak run on private embedded servers (their CPU and memory are measured as the run's own)
    # unless the suite is given one database and Redis db; each draws its chart when it writes.
    Benchmark(
        "scaling", _scaling, {"turns": 120, "rounds": 1}, {"turns": 3000, "rounds": 4}, _scaling_headlines
    ),
    Benchmark("soak", _soak, {"turns": 600}, {"turns": 200_000}, _soak_headlines),
)


def select(
    registry: Sequence[Benchmark], only: Sequence[str] = (), skip: Sequence[str] = ()
) -> list[Benchmark]:
    """The benches to run, in registry order; an unknown name is an error naming the known ones."""
    known = [b.name for b in registry]
    unknown = sorted((set(only) | set(skip)) - set(known))
    if unknown:
        raise ConfigError(f"no such benchmark(s): {', '.join(unknown)}; choose from {', '.join(known)}")
    chosen = [b for b in registry if (not only or b.name in only) and b.name not in skip]
    if not chosen:
        raise ConfigError("--only and --skip leave no benchmark to run")
    return chosen


def wipes(bench: Benchmark, ctx: Context) -> list[str]:
    """The database and Redis db this bench truncates or writes in this run (an override replaces its own)."""
    out = []
    if bench.database is not None:
        out.append(_short(ctx.database_url or bench.database))
    if bench.redis is not None:
        out.append(ctx.redis_url or bench.redis)
    return out


def _short(url: str) -> str:
    from sqlalchemy.engine import make_url

    u = make_url(url)
    return f"postgresql {u.host}:{u.port or 5432}/{u.database}"


def describe(registry: Sequence[Benchmark], ctx: Context) -> Table:
    table = Table(title="hindsight bench all: the benchmarks, in the order they run")
    for col in ("bench", "quick sizes", "full sizes", "writes to"):
        table.add_column(col)
    for b in registry:
        table.add_row(b.name, _sizes(b.quick), _sizes(b.full), ", ".join(wipes(b, ctx)) or "—")
    return table


def _sizes(sizes: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items()) or "defaults"


def run_one(bench: Benchmark, ctx: Context, *, quick: bool, charts_dir: Path | None = None) -> Outcome:
    """One bench, isolated: whatever it raises becomes the outcome's error and the suite goes on."""
    where = wipes(bench, ctx)
    ctx.console.rule(f"[bold]bench all: {bench.name}" + (f" (on {', '.join(where)})" if where else ""))
    t0 = time.perf_counter()
    try:
        figures = bench.run(ctx, **(bench.quick if quick else bench.full))
    except (Exception, SystemExit) as exc:  # typer.Exit is an Exception; SystemExit from a sys.exit
        ctx.console.print(traceback.format_exc(), highlight=False, markup=False)
        return Outcome(bench.name, time.perf_counter() - t0, error=f"{type(exc).__name__}: {exc}".strip())
    outcome = Outcome(bench.name, time.perf_counter() - t0, figures=figures)
    try:
        outcome.headlines = bench.headlines(figures)
    except Exception as exc:  # a figure missing from the dict: the bench ran, its summary cannot be read
        outcome.error = f"no headline figures ({type(exc).__name__}: {exc})"
    if bench.chart and charts_dir is not None and outcome.ok:
        from bench import charts

        try:
            outcome.chart = charts.write_chart(bench.name, figures, charts_dir)
        except Exception as exc:
            outcome.error = f"chart failed ({type(exc).__name__}: {exc})"
    return outcome


@dataclass
class SuiteResult:
    outcomes: list[Outcome]
    machine: dict[str, str]
    quick: bool
    seconds: float

    @property
    def failed(self) -> list[str]:
        return [o.name for o in self.outcomes if not o.ok]


def run_suite(
    ctx: Context,
    *,
    quick: bool,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    registry: Sequence[Benchmark] | None = None,
    benchmarks_md: Path = report.BENCHMARKS,
) -> SuiteResult:
    registry = REGISTRY if registry is None else registry
    chosen = select(registry, only, skip)
    readers = [b.name for b in chosen if b.locomo]
    if readers and not ctx.data.is_file():
        raise ConfigError(
            f"LoCoMo data not found at {ctx.data} (needed by {', '.join(readers)}): pass --data PATH to "
            "locomo10.json, or --skip those benches"
        )
    charts_dir = benchmarks_md.parent / "docs" / "bench" if ctx.write else None
    load_before, commit = os.getloadavg(), git_commit()  # the code measured, before any output is written
    t0 = time.perf_counter()
    outcomes = [run_one(b, ctx, quick=quick, charts_dir=charts_dir) for b in chosen]
    info = machine_info(load_before, os.getloadavg(), commit)
    result = SuiteResult(outcomes, info, quick, time.perf_counter() - t0)
    ctx.console.rule("[bold]bench all: summary")
    ctx.console.print(summary_table(result))
    ctx.console.print(
        "machine: " + "; ".join(f"{k} {v}" for k, v in info.items()), highlight=False, soft_wrap=True
    )
    if ctx.write:
        for o in outcomes:
            if o.chart is not None:
                report.link_chart(
                    o.name, o.chart.relative_to(benchmarks_md.parent).as_posix(), _alt(o.name), benchmarks_md
                )
        if quick:
            ctx.console.print("[yellow]quick sizes: the summary section left as it was[/yellow]")
        else:
            # Each bench's row is its latest full-size run, so a run of a few benches refreshes their rows and
            # leaves the others as they were, each with the date and commit it was measured at.
            store = benchmarks_md.parent / SUMMARY_STORE
            rows = merge_rows(read_rows(store), result)
            write_rows(store, rows)
            lines = summary_lines(result, rows, [b.name for b in registry])
            report.write_section("summary", "\n".join(lines), benchmarks_md, top=True)
    return result


def _alt(name: str) -> str:
    from bench.charts import CHARTS

    return CHARTS[name].title if name in CHARTS else name


# -- the machine and the summary ------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def git_commit(root: Path = REPO_ROOT) -> str:
    """The checked-out commit, `+dirty` when tracked files other than the benches' own output differ from it
    (figures of uncommitted code)."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *OUTPUTS],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return sha + ("+dirty" if dirty else "")


OUTPUTS = (":(exclude)BENCHMARKS.md", ":(exclude)docs/bench")  # what the suite itself rewrites


def machine_info(
    load_before: Sequence[float], load_after: Sequence[float], commit: str | None = None
) -> dict[str, str]:
    def load(avg: Sequence[float]) -> str:
        return "/".join(f"{x:.1f}" for x in avg)

    return {
        "CPU": _cpu_model(),
        "cores": str(os.cpu_count()),
        "RAM": _ram(),
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "torch": _version("torch"),
        "onnxruntime": _version("onnxruntime"),
        "load (1/5/15 min) before": load(load_before),
        "after": load(load_after),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or git_commit(),
    }


def _rows(result: SuiteResult) -> list[tuple[str, str, str, str, str]]:
    """(bench, duration, headline figure, target, met?) — one row per headline, the bench named on its first."""
    rows = []
    for o in result.outcomes:
        record = _record(o, result.machine)
        for i, (figure, target, met) in enumerate(record["headlines"]):
            rows.append((o.name if i == 0 else "", record["duration"] if i == 0 else "", figure, target, met))
    return rows


SUMMARY_STORE = "docs/bench/summary.json"  # beside the charts: every bench's latest full-size headline rows
Record = dict[str, Any]


def _record(o: Outcome, machine: Mapping[str, str]) -> Record:
    """A bench's summary rows as stored: headline (figure, target, met?) triples, duration, when and what code."""
    if o.error is not None:
        headlines = [(f"error: {o.error}", "", "failed")]
    else:
        headlines = [
            (f"{h.label}: {h.value}", h.target, "—" if h.met is None else ("yes" if h.met else "no"))
            for h in o.headlines or [Headline("(no headline figure)", "", "", None)]
        ]
    return {
        "duration": f"{o.seconds:,.1f} s",
        "headlines": headlines,
        "date": machine["date"],
        "commit": machine["commit"],
        "machine": machine_name(machine),
        "load": f"{machine['load (1/5/15 min) before']} → {machine['after']}",
    }


def machine_name(machine: Mapping[str, str]) -> str:
    """What tells one machine's rows from another's in the summary: the CPU and its cores."""
    return f"{machine['CPU']}, {machine['cores']} cores"


def read_rows(path: Path) -> dict[str, Record]:
    """The stored rows; a missing or unreadable store is an empty one (the next full run rebuilds it)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def merge_rows(stored: Mapping[str, Record], result: SuiteResult) -> dict[str, Record]:
    return {**stored, **{o.name: _record(o, result.machine) for o in result.outcomes}}


def write_rows(path: Path, rows: Mapping[str, Record]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(path)


def summary_table(result: SuiteResult) -> Table:
    size = "quick" if result.quick else "full"
    table = Table(title=f"hindsight bench all ({size} sizes), {result.seconds:,.0f} s")
    for col in ("bench", "duration", "headline figure", "target", "met?"):
        table.add_column(col)
    for row in _rows(result):
        table.add_row(*row)
    return table


def summary_lines(result: SuiteResult, rows: Mapping[str, Record], order: Sequence[str]) -> list[str]:
    """The summary section: the latest full-size figures of every bench in `order` (from `rows`), each with
    the date and commit it was measured at, and the machine of the run that wrote it."""
    m = result.machine
    ran = [o.name for o in result.outcomes]
    # Rows kept from earlier runs may come from another machine; then every row names its own.
    this_machine = machine_name(m)
    mixed = any(rows[n].get("machine", this_machine) != this_machine for n in order if n in rows)
    everything = set(order) <= set(ran)
    scope = "every benchmark" if everything else f"{', '.join(ran)} (the other rows are from earlier runs)"
    lines = [
        "## Summary: `hindsight bench all`",
        "",
        f"Each bench's headline figures from its latest full-size run. This update ran {scope} in "
        f"{result.seconds / 60:,.1f} min at commit `{m['commit']}` on {m['date']}. Timings are ratios or pairs "
        "measured side by side in the same run; absolute figures move with the machine's load.",
        "",
        f"{'This run' if mixed else 'Machine'}: {m['CPU']}, {m['cores']} cores, {m['RAM']} RAM, {m['OS']}, Python {m['Python']}, "
        f"torch {m['torch']}, onnxruntime {m['onnxruntime']}. Load average (1/5/15 min) "
        f"{m['load (1/5/15 min) before']} before, {m['after']} after.",
        "",
        "| bench | measured (commit) | duration | headline figure | target | met? |",
        "|---|---|---:|---|---|---|",
    ]
    for name in order:
        record = rows.get(name)
        if record is None:
            lines.append(
                f"| {name} | not yet run by `bench all` at full size (see its own section) | | | | |"
            )
            continue
        when = f"{record['date']} (`{record['commit']}`)"
        if mixed:
            when += f", {record.get('machine', 'machine not recorded')}"
        for i, (figure, target, met) in enumerate(record["headlines"]):
            cells = (name, when, record["duration"]) if i == 0 else ("", "", "")
            lines.append(
                "| " + " | ".join(c.replace("|", "\\|") for c in (*cells, figure, target, met)) + " |"
            )
    return lines
