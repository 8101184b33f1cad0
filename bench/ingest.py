"""`hindsight bench ingest`: what write_memory costs over a raw XADD of the same payload.

Both run in the same process against the same Redis, interleaved round by round, so machine noise
hits them alike; the ratio is the figure that matters (target: p50 ratio <= 2.0).
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable

import redis
from rich.console import Console
from rich.table import Table

from bench.report import write_section
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.errors import QueueUnavailable
from pipeline.core.models import Turn
from pipeline.ingest.validation import encode_event, utcnow

CONTENT = "I moved to Lisbon last March and I'd like vegetarian restaurant suggestions near Alfama."


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timed(n: int, call: Callable[[int], object]) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        call(i)
        out.append((time.perf_counter() - t0) * 1e6)
    return out


def run_ingest_bench(
    settings: Settings, *, n: int, rounds: int, write: bool, console: Console
) -> dict[str, float]:
    raw = connect(settings.broker_url)
    try:
        raw.ping()
    except redis.RedisError as exc:
        raise QueueUnavailable(
            f"cannot reach Redis at {settings.broker_url} ({exc}): start `hindsight up` or set HINDSIGHT_REDIS_URL"
        ) from exc
    stream_key = f"hindsight:bench:{uuid.uuid4().hex[:8]}"
    bench_settings = settings.model_copy(update={"stream_turns": stream_key})
    client = MemoryClient(bench_settings)
    raw_stream = TurnStream(raw, stream_key, settings.stream_dead)
    payload = encode_event(
        Turn("t", "bench-agent", "bench-user", "s1", "user", CONTENT, utcnow(), "user", {"topic": "food"})
    )
    run = uuid.uuid4().hex[:6]
    write_us: list[float] = []
    xadd_us: list[float] = []
    try:
        for r in range(rounds):
            tag = f"{run}-{r}"

            def xadd(i: int, tag: str = tag) -> object:
                return raw_stream.add({**payload, "turn_id": f"raw-{tag}-{i}"})

            def write_memory(i: int, tag: str = tag) -> object:
                return client.write_memory(
                    "bench-agent",
                    "bench-user",
                    "s1",
                    "user",
                    CONTENT,
                    metadata={"topic": "food"},
                    turn_id=f"wm-{tag}-{i}",
                )

            xadd_us += _timed(n, xadd)
            write_us += _timed(n, write_memory)
        batch = 500
        entries = [{**payload, "turn_id": f"pipe-{run}-{i}"} for i in range(n)]
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            raw_stream.add_many(entries[start : start + batch])
        pipelined = n / (time.perf_counter() - t0)
    finally:
        raw.delete(stream_key)
        client.close()
        raw.close()

    figures = {
        "write_p50_us": statistics.median(write_us),
        "write_p99_us": _percentile(write_us, 0.99),
        "xadd_p50_us": statistics.median(xadd_us),
        "xadd_p99_us": _percentile(xadd_us, 0.99),
        "pipelined_per_s": pipelined,
    }
    figures["ratio_p50"] = figures["write_p50_us"] / figures["xadd_p50_us"]
    figures["ratio_p99"] = figures["write_p99_us"] / figures["xadd_p99_us"]

    table = Table("measure", "p50 (µs)", "p99 (µs)")
    table.add_row(
        "write_memory (validate + encode + XADD)",
        f"{figures['write_p50_us']:.0f}",
        f"{figures['write_p99_us']:.0f}",
    )
    table.add_row("raw XADD, same payload", f"{figures['xadd_p50_us']:.0f}", f"{figures['xadd_p99_us']:.0f}")
    table.add_row("ratio (target p50 ≤ 2.0)", f"{figures['ratio_p50']:.2f}", f"{figures['ratio_p99']:.2f}")
    console.print(table)
    console.print(f"pipelined XADD (batches of {batch}): {pipelined:,.0f} turns/s")
    if write:
        write_section(
            "ingest",
            "\n".join(
                [
                    "## Ingest: `hindsight bench ingest`",
                    "",
                    f"{n} calls × {rounds} interleaved rounds each, one process, Redis at `{settings.broker_url}`.",
                    "",
                    "| measure | p50 (µs) | p99 (µs) |",
                    "|---|---:|---:|",
                    f"| `write_memory` (validate + encode + XADD) | {figures['write_p50_us']:.0f} | "
                    f"{figures['write_p99_us']:.0f} |",
                    f"| raw `XADD` of the same payload | {figures['xadd_p50_us']:.0f} | {figures['xadd_p99_us']:.0f} |",
                    f"| **ratio** (target p50 ≤ 2.0) | **{figures['ratio_p50']:.2f}** | {figures['ratio_p99']:.2f} |",
                    "",
                    f"Pipelined XADD, batches of {batch}: **{pipelined:,.0f} turns/s**.",
                ]
            ),
        )
    return figures
