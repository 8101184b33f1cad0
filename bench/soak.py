"""`hindsight bench soak`: many turns through the embedded stack; nothing lost, memory bounded.

The stack is the one `hindsight up` runs: private embedded PostgreSQL and Redis (by default: a soak's 200,000
rows and stream entries stay off the machine's shared servers, and the servers' own memory is measured as
processes), a scheduler, `workers` review workers and an indexer writing the in-process Qdrant Edge shard.
LoCoMo conversations are replayed as new users (conversation × cycle = one scope), fed as fast as the
stack drains with at most `window` turns waiting (or at a steady `rate`), with one malformed entry per
`bad_every` turns that must land in the dead letters with a reason. Every role's memory (PSS) and the
backlog are sampled over time; at the end the store, the index and the streams are checked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from sqlalchemy import text

from bench import charts, trend
from bench.report import write_section
from bench.review import (
    E2E_TRIGGER,
    Utterance,
    _turn,
    load_locomo,
    print_table,
    round_robin,
    verdict,
)
from bench.stack import BenchStack, push_chunks, scratch_root
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging
from pipeline.ingest.validation import encode_event

DOCS_CHART = Path("docs/bench/soak.png")
CHUNK = 500
POLL_S = 1.0  # each poll counts 200k rows at the end of a full soak: CPU taken from the workers
REPORT_S = 30.0  # a progress line this often: a full soak runs for the best part of an hour
# PostgreSQL's memory is bounded by its own settings (shared buffers); the indexer holds the in-process
# Qdrant shard, whose memory grows with the points stored (data, not a leak): both shown, not judged.
JUDGED = ("scheduler", "worker", "redis")
# A batch per scope at the trigger size, short tails reviewed after 2 s: the policy of a steady stream.
STACK_ENV = {
    "HINDSIGHT_POLICY__BATCH_SIZE": str(E2E_TRIGGER),
    "HINDSIGHT_POLICY__MAX_BATCH": str(E2E_TRIGGER * 4),
    "HINDSIGHT_POLICY__IDLE_S": "2",
    "HINDSIGHT_SCHEDULER_TICK_S": "0.5",
    "HINDSIGHT_INDEXER_POLL_S": "1",
}
# Malformed entries the scheduler must dead-letter (never crash on, never store), in turn.
BAD_KINDS: tuple[tuple[str, dict[str, str]], ...] = (
    ("unknown role", {"role": "robot"}),
    ("empty content", {"content": ""}),
    ("unparseable ts", {"ts": "yesterday"}),
    ("metadata not JSON", {"metadata": "{not json"}),
)


class Feed:
    """Turn i of the soak: LoCoMo's turns round-robin over its conversations, replayed as cycle `i // n`
    under new user ids, so every scope sees a real conversation and none sees the same text twice."""

    def __init__(self, turns: Sequence[Utterance], conversations: Sequence[Sequence[Utterance]]) -> None:
        self.order = round_robin(conversations, len(turns))

    def entry(self, i: int) -> dict[str, str]:
        cycle, pos = divmod(i, len(self.order))
        u = self.order[pos]
        return encode_event(_turn(u, f"soak-{i}", i, user=f"{u.conversation}-r{cycle}"))

    def scopes(self, n: int) -> tuple[int, int]:
        """(cycles through the corpus, distinct scopes) that the first n turns make."""
        cycles, rest = divmod(n, len(self.order))
        last = {u.conversation for u in self.order[:rest]}
        per_cycle = len({u.conversation for u in self.order})
        return cycles + (1 if rest else 0), cycles * per_cycle + len(last)

    def bad(self, k: int) -> tuple[str, dict[str, str]]:
        name, change = BAD_KINDS[k % len(BAD_KINDS)]
        return name, {**self.entry(k), "turn_id": f"bad-{k}", **change}


@dataclass
class Sample:
    t_s: float
    pushed: int
    reviewed: int
    stream_backlog: int  # stream entries not yet read or not yet acked by the scheduler
    pending_episodes: int  # stored, not yet reviewed
    outbox: int  # waiting for the indexer
    mem_mb: dict[str, float]


@dataclass
class Check:
    name: str
    expected: str
    actual: str
    ok: bool


@dataclass
class SoakResult:
    turns: int
    workers: int
    rate: float
    window: int
    injected: int
    embedded: bool
    backend: str
    cycles: int = 0
    scopes: int = 0
    points: int = 0  # in the index at the end
    elapsed_s: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    trends: dict[str, trend.Trend] = field(default_factory=dict)
    dead_reasons: dict[str, int] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.elapsed_s if self.elapsed_s else 0.0

    @property
    def lost_ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def bounded_ok(self) -> bool:
        return all(t.bounded for role, t in self.trends.items() if role.split("-")[0] in JUDGED)

    @property
    def ok(self) -> bool:
        return self.lost_ok and self.bounded_ok


# -- running ------------------------------------------------------------------------------------------


def feed_and_sample(
    stack: BenchStack,
    settings: Settings,
    feed: Feed,
    result: SoakResult,
    *,
    sample_s: float,
    bad_every: int,
    console: Console,
) -> None:
    stream = stack.stream(settings)
    pushed = injected = 0
    t0 = time.monotonic()
    next_sample = 0.0
    next_report = REPORT_S
    timeout = max(1800.0, result.turns / 5)  # 5 turns/s would be far below any healthy stack
    while True:
        now = time.monotonic() - t0
        prog = stack.progress()
        if pushed < result.turns:
            room = result.window - (pushed - prog["reviewed"])
            if result.rate:
                room = min(room, int(result.rate * now) - pushed)
            n = min(room, result.turns - pushed, 2 * CHUNK)
            if n > 0:
                entries = [feed.entry(i) for i in range(pushed, pushed + n)]
                for i in range(pushed, pushed + n):
                    if bad_every and (i + 1) % bad_every == 0:
                        entries.append(feed.bad(injected)[1])
                        injected += 1
                push_chunks(stream, entries, CHUNK)
                pushed += n
        if now >= next_sample:
            result.samples.append(_sample(stack, settings, now, pushed, prog))
            next_sample += sample_s
        if now >= next_report:
            console.print(
                f"{now / 60:5.1f} min: fed {pushed:,}, reviewed {prog['reviewed']:,} "
                f"({prog['reviewed'] / max(now, 1e-9):.1f} turns/s), outbox {prog['outbox']:,}, "
                f"load {os.getloadavg()[0]:.1f}",
                highlight=False,
            )
            next_report += REPORT_S
        result.injected = injected
        if pushed >= result.turns and prog["reviewed"] >= result.turns and prog["outbox"] == 0:
            stats = stream.stats(settings.scheduler_group)
            if stats["lag"] == 0 and stats["pending"] == 0 and stats["dead_letters"] >= injected:
                break
        stack.check_alive()
        if now > timeout:
            raise RuntimeError(f"the soak did not drain within {timeout:.0f}s: {prog}")
        time.sleep(POLL_S)
    result.elapsed_s = time.monotonic() - t0
    result.samples.append(_sample(stack, settings, result.elapsed_s, pushed, stack.progress()))


def _sample(stack: BenchStack, settings: Settings, t: float, pushed: int, prog: dict[str, int]) -> Sample:
    stats = stack.stream(settings).stats(settings.scheduler_group)
    return Sample(
        t,
        pushed,
        prog["reviewed"],
        stats["lag"] + stats["pending"],
        prog["episodes"] - prog["reviewed"],
        prog["outbox"],
        {name: u.mem_mb for name, u in stack.usage().items()},
    )


# -- checks -------------------------------------------------------------------------------------------


def loss_checks(
    stack: BenchStack, settings: Settings, turns: int, injected: int
) -> tuple[list[Check], dict[str, int]]:
    """Every turn an episode exactly once and reviewed; every batch done and reviewed once; every kept episode
    (and open semantic memory) in the index and nothing else; the streams drained; bad input dead-lettered
    with a reason. Run with the roles stopped (the in-process index is opened here)."""

    def scalar(sql: str, **params: Any) -> int:
        with stack.engine.connect() as conn:
            return int(conn.execute(text(sql), params).scalar() or 0)

    checks: list[Check] = []

    def check(name: str, expected: object, actual: object, ok: bool | None = None) -> None:
        checks.append(Check(name, str(expected), str(actual), expected == actual if ok is None else ok))

    stored = scalar("SELECT count(*) FROM episodes WHERE turn_id LIKE 'soak-%'")
    distinct = scalar("SELECT count(DISTINCT turn_id) FROM episodes WHERE turn_id LIKE 'soak-%'")
    check("soak turns stored as episodes", f"{turns:,}", f"{stored:,}")
    check("distinct turn ids among them", f"{turns:,}", f"{distinct:,}")
    check(
        "other episodes (bad input stored)",
        0,
        scalar("SELECT count(*) FROM episodes WHERE turn_id NOT LIKE 'soak-%'"),
    )
    check("episodes never reviewed", 0, scalar("SELECT count(*) FROM episodes WHERE reviewed_at IS NULL"))
    check("batches not done", 0, scalar("SELECT count(*) FROM batches WHERE status <> 'done'"))
    batches = scalar("SELECT count(*) FROM batches")
    check(
        "reviews (one per batch)",
        f"{batches:,}",
        f"{scalar('SELECT count(DISTINCT batch_id) FROM reviews'):,}",
    )
    check("batches reviewed twice", 0, scalar("SELECT count(*) - count(DISTINCT batch_id) FROM reviews"))
    check("index outbox left", 0, scalar("SELECT count(*) FROM index_outbox"))

    from pipeline.adapters.qdrant_edge import EdgeVectorIndex

    expected = stack.repo.indexable_point_ids()
    index = EdgeVectorIndex(stack.index_path, settings.embedding.dimension)
    try:
        actual = index.ids()
    finally:
        index.close()
    check(
        "kept points missing from the index",
        f"0 of {len(expected):,}",
        f"{len(expected - actual)} of {len(expected):,}",
    )
    check("orphan points in the index", 0, len(actual - expected))

    stream = stack.stream(settings)
    stats = stream.stats(settings.scheduler_group)
    check("stream entries unread or unacked", 0, stats["lag"] + stats["pending"])
    reasons: dict[str, int] = {}
    without_reason = 0
    entries: Any = stack.redis.xrange(settings.stream_dead)
    for _, fields in entries:
        raw = fields.get(b"reason") or b""
        reason = (raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)).strip()
        if not reason:
            without_reason += 1
        # "role: must be one of ..." -> "role": the field the reason names
        key = reason.split(":")[0] or "(none)"
        reasons[key] = reasons.get(key, 0) + 1
    check("dead letters (injected bad input)", injected, stats["dead_letters"])
    check("dead letters without a reason", 0, without_reason)
    return checks, reasons


def memory_trends(samples: Sequence[Sample]) -> dict[str, trend.Trend]:
    roles = sorted({name for s in samples for name in s.mem_mb})
    out: dict[str, trend.Trend] = {}
    for role in roles:
        points = [(float(s.reviewed), s.mem_mb[role]) for s in samples if s.mem_mb.get(role)]
        if points:
            out[role] = trend.assess(points)
    return out


# -- reporting ------------------------------------------------------------------------------------------


def indexer_note(r: SoakResult) -> str:
    """The indexer's growth per index point: what the shard's data costs in memory."""
    t = r.trends.get("indexer")
    if t is None or not r.points or not r.turns:
        return ""
    per_point_kb = t.slope_mb_per_100k / trend.PER * r.turns / r.points * 1024
    return f" ({per_point_kb:.1f} KB per point from its slope, {r.points:,} points at the end)"


def full_command(result: SoakResult) -> str:
    return (
        f"hindsight bench soak --turns 200000 --workers {result.workers} --embedding-backend {result.backend}"
    )


def result_lines(r: SoakResult) -> list[str]:
    feed = (
        f"at {r.rate:g} turns/s" if r.rate else f"as fast as it drains (at most {r.window:,} turns waiting)"
    )
    lines = [
        "## Soak: `hindsight bench soak`",
        "",
        f"{r.turns:,} LoCoMo turns (the corpus replayed {r.cycles}× with new user ids: {r.scopes} scopes) "
        f"fed {feed}, plus {r.injected} malformed entries, through "
        + ("private embedded PostgreSQL and Redis" if r.embedded else "the given PostgreSQL and Redis")
        + f", a scheduler, {r.workers} review workers (solo pool, one {r.backend} thread each) and an indexer "
        f"(in-process Qdrant Edge). Drained in {r.elapsed_s / 60:.1f} min = **{r.turns_per_s:.1f} turns/s**; "
        f"machine load {r.load[0]:.1f} → {r.load[1]:.1f} ({os.cpu_count()} cores, shared).",
        "",
        "| nothing lost | expected | actual | |",
        "|---|---:|---:|---|",
    ]
    lines += [f"| {c.name} | {c.expected} | {c.actual} | {verdict(c.ok)} |" for c in r.checks]
    if r.dead_reasons:
        lines += [
            "",
            "Dead-letter reasons: "
            + "; ".join(f"{k} × {v}" for k, v in sorted(r.dead_reasons.items()))
            + ".",
        ]
    lines += [
        "",
        f"Memory (PSS, MB) against turns reviewed; warm-up = the first {trend.WARM_FRACTION:.0%} of the run; "
        f"bounded = growth and fitted trend both within max({trend.ALLOWANCE_MB:.0f} MB, "
        f"{trend.ALLOWANCE_FRACTION:.0%}). Shown, not judged: PostgreSQL (shared buffers fill up to their "
        "size) and the indexer, which holds the in-process Qdrant shard" + indexer_note(r) + ".",
        "",
        "| role | after warm-up | end | peak | slope (MB / 100k turns) | growth | bounded |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for role, t in r.trends.items():
        judged = role.split("-")[0] in JUDGED
        lines.append(
            f"| {role} | {t.warm_mb:,.0f} | {t.end_mb:,.0f} | {t.peak_mb:,.0f} | {t.slope_mb_per_100k:+,.1f} | "
            f"{t.growth_mb:+,.0f} | {verdict(t.bounded) if judged else ('yes' if t.bounded else 'no') + ' (not judged)'} |"
        )
    peak_backlog = max((s.stream_backlog + s.pending_episodes for s in r.samples), default=0)
    lines += [
        "",
        f"Peak backlog (stream + pending episodes): {peak_backlog:,}; samples: {len(r.samples)}. "
        f"Verdict: nothing lost {verdict(r.lost_ok)}, memory bounded {verdict(r.bounded_ok)}.",
        "",
        f"Full run: `{full_command(r)}` (about {200_000 / max(r.turns_per_s, 1) / 60:.0f} min at this rate).",
    ]
    return lines


def chart(r: SoakResult, path: Path) -> None:
    plt = charts.pyplot()
    fig, (a, b) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    minutes = [s.t_s / 60 for s in r.samples]
    for role in r.trends:
        a.plot(minutes, [s.mem_mb.get(role, float("nan")) for s in r.samples], label=role)
    a.set_ylabel("memory (PSS, MB)")
    a.set_title(f"soak: {r.turns:,} turns, {r.workers} workers")
    a.legend(fontsize=8, ncol=3)
    b.plot(minutes, [s.stream_backlog for s in r.samples], label="stream (unread + unacked)")
    b.plot(minutes, [s.pending_episodes for s in r.samples], label="episodes awaiting review")
    b.plot(minutes, [s.outbox for s in r.samples], label="index outbox")
    b.set_xlabel("minutes")
    b.set_ylabel("backlog")
    b.legend(fontsize=8)
    charts.save(fig, path)


# -- the command --------------------------------------------------------------------------------------


def run_soak_bench(
    settings: Settings,
    *,
    turns: int = 200_000,
    workers: int = 2,
    rate: float = 0.0,
    window: int = 3000,
    bad_every: int = 1000,
    sample_s: float = 5.0,
    data: Path,
    database_url: str | None = None,
    redis_url: str | None = None,
    backend: str | None = None,
    write: bool,
    console: Console,
    chart_path: Path = DOCS_CHART,
) -> SoakResult:
    configure_logging("WARNING", settings.log_json)
    corpus = load_locomo(data)
    feed = Feed(corpus.turns, corpus.by_conversation())
    backend = backend or settings.embedding.backend
    env = {**STACK_ENV, "HINDSIGHT_EMBEDDING__BACKEND": backend}
    stack = BenchStack(scratch_root("hindsight-soak-"), database_url, redis_url, env)
    result = SoakResult(turns, workers, rate, window, 0, False, backend)
    result.cycles, result.scopes = feed.scopes(turns)
    try:
        console.print("starting the servers and roles ...")
        stack.start_servers(settings)
        result.embedded = stack.embedded
        stack.reset()
        stack.start_roles(workers)
        console.rule(f"[bold]bench soak: {turns:,} turns, {workers} workers")
        load0 = os.getloadavg()[0]
        feed_and_sample(
            stack, settings, feed, result, sample_s=sample_s, bad_every=bad_every, console=console
        )
        result.load = (load0, os.getloadavg()[0])
        stack.stop_roles()
        result.checks, result.dead_reasons = loss_checks(stack, settings, turns, result.injected)
        result.points = len(stack.repo.indexable_point_ids())
    except BaseException:
        stack.close()
        console.print(f"[red]failed; logs kept under {stack.root}/logs[/red]")
        raise
    stack.close(remove=True)
    result.trends = memory_trends(result.samples)
    lines = result_lines(result)
    print_table(console, lines)
    if write:
        chart(result, chart_path)
        write_section("soak", "\n".join([*lines, "", "![soak](docs/bench/soak.png)"]))
        console.print(f"wrote BENCHMARKS.md (bench:soak) and {chart_path}")
    return result
