"""`hindsight bench model-cost`: what an embedding model costs the review pipeline, models side by side.

Each model reviews the same LoCoMo turns end to end (stream, scheduler, a real Celery worker, rules-only
review, as `bench review`'s e2e part does), in alternating order over several rounds, so that the load of
this shared 2-core machine hits every model alike. Reported per model: reviewed turns/s (the median of its
rounds), the worker's busy seconds per turn, the embedding stage's share of review, and the worker's peak
RSS; the ratio column is each model's turns/s over the first model's (issue 45's budget: >= 0.7x today's
default, all-MiniLM-L6-v2 on ONNX).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from bench.report import write_section
from bench.review import (
    BENCH_DATABASE_URL,
    BENCH_REDIS_URL,
    E2EResult,
    load_locomo,
    open_bench,
    print_table,
    run_e2e,
)
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging

# (model, backend): today's default first, the candidates after it.
MODELS = (("all-MiniLM-L6-v2", "onnx"), ("multilingual-e5-small", "onnx-int8"))


def parse_model(value: str) -> tuple[str, str]:
    """ "model:backend" (backend defaults to onnx)."""
    model, _, backend = value.partition(":")
    return model, backend or "onnx"


def lines_for(models: Sequence[tuple[str, str]], runs: dict[tuple[str, str], list[E2EResult]]) -> list[str]:
    base = statistics.median(r.turns_per_s for r in runs[models[0]])
    out = [
        "| model | backend | reviewed turns/s (median) | ratio to the first | worker busy ms / turn "
        "| embedding share of review | worker peak RSS (MB) | rounds |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in models:
        rs = runs[m]
        rate = statistics.median(r.turns_per_s for r in rs)
        busy = statistics.median(1000 * r.task_s / r.turns for r in rs)
        embed = sum(r.stages_ms.get("embed", 0.0) for r in rs) / max(sum(r.review_ms for r in rs), 1e-9)
        rss = max(r.worker_peak_rss_mb for r in rs)
        out.append(
            f"| {m[0]} | {m[1]} | {rate:.1f} | {rate / base:.2f} | {busy:.0f} | {embed:.2f} | {rss:.0f} | {len(rs)} |"
        )
    return out


def run_model_cost_bench(
    settings: Settings,
    *,
    models: Sequence[tuple[str, str]] = MODELS,
    turns: int = 600,
    rounds: int = 2,
    data: Path,
    database_url: str = BENCH_DATABASE_URL,
    redis_url: str = BENCH_REDIS_URL,
    write: bool,
    console: Console,
) -> dict[str, float]:
    configure_logging("WARNING", settings.log_json)
    corpus = load_locomo(data)
    b = open_bench(settings, database_url, redis_url, console)
    runs: dict[tuple[str, str], list[E2EResult]] = {m: [] for m in models}
    try:
        for i in range(rounds):
            # Alternate the order each round: a model always first would always meet a cold page cache.
            for model, backend in models if i % 2 == 0 else list(reversed(models)):
                console.print(f"round {i + 1}/{rounds}: {model} ({backend})", highlight=False)
                env = {"HINDSIGHT_EMBEDDING__MODEL": model, "HINDSIGHT_EMBEDDING__BACKEND": backend}
                runs[(model, backend)].append(run_e2e(b, corpus, turns, env))
    finally:
        b.engine.dispose()
        b.redis.close()
    lines = lines_for(models, runs)
    print_table(console, lines)
    base = statistics.median(r.turns_per_s for r in runs[models[0]])
    figures = {}
    for model, backend in models:
        rate = statistics.median(r.turns_per_s for r in runs[(model, backend)])
        figures[f"model_cost_{model}_{backend}_turns_per_s"] = rate
        figures[f"model_cost_{model}_{backend}_ratio"] = rate / base
    if write:
        write_section(
            "model-cost",
            "\n".join(
                [
                    "## What the embedding model costs review: `hindsight bench model-cost`",
                    "",
                    f"{turns} LoCoMo turns reviewed end to end per model and round (stream, scheduler, one Celery "
                    f"worker at one thread, rules-only review), {rounds} rounds in alternating order, side by side "
                    "in one run. Ratio: reviewed turns/s over the first model's (issue 45 budget: ≥ 0.7).",
                    "",
                    *lines,
                ]
            ),
        )
    return figures
