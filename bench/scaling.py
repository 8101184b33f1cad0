"""`hindsight bench scaling`: 1 against 2 review workers through the real stack, per-turn CPU cost of every
role, Redis and Qdrant micro-benchmarks, and the scaling model (docs/scaling.md) computed from them.

The same N LoCoMo turns (10 scopes, one per conversation) go through a scheduler, 1 or 2 `hindsight worker`
processes (solo pool, one torch thread each) and an indexer, over private embedded PostgreSQL and Redis
(bench/stack.py), in alternating order over the rounds. Each process's CPU seconds are read from
/proc between the first push and the last point indexed, so each role's cost per turn comes from the same
run as the throughput. On a shared 2-core machine the wall-clock ratio moves with other load; turns per
worker-CPU-second does not, and is reported next to it.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.console import Console
from sqlalchemy import text

from bench import charts
from bench.report import write_section
from bench.review import (
    E2E_SCOPES,
    E2E_TRIGGER,
    _turn,
    load_locomo,
    print_table,
    round_robin,
    verdict,
    worker_reviews,
)
from bench.stack import BenchStack, Usage, push_chunks, scratch_root
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging
from pipeline.core.models import Turn
from pipeline.ingest.validation import encode_event

TARGET = 1.8  # wall-clock turns/s of 2 workers over 1
# The target is set for workers of one torch thread each, so that is what runs unless asked otherwise. The
# configured default (onnx) spends about half the worker CPU per turn, so the same shared roles weigh about
# twice as much against it on one machine: `--embedding-backend onnx` measures that.
DEFAULT_BACKEND = "torch"
ROLES = ("worker", "scheduler", "indexer", "postgres", "redis")
WARM_TRIES = 6
MODEL_WORKERS = (1, 2, 4, 8, 16, 32, 64, 128)
PG_CORES = 4  # the model's PostgreSQL machine; its per-core figure scales it to any other
DOCS_CHART = Path("docs/bench/scaling.png")

# The roles run as `hindsight up` would, with the review bench's end-to-end policy: batches of exactly the
# trigger (as under a steady stream), a scope's short tail reviewed after 1 s, a quick index poll; the
# scheduler ticks at its default rate.
STACK_ENV = {
    "HINDSIGHT_POLICY__BATCH_SIZE": str(E2E_TRIGGER),
    "HINDSIGHT_POLICY__MAX_BATCH": str(E2E_TRIGGER),
    "HINDSIGHT_POLICY__IDLE_S": "1",
    "HINDSIGHT_INDEXER_POLL_S": "0.5",
}


# -- one run ----------------------------------------------------------------------------------------


@dataclass
class Run:
    workers: int
    round: int
    turns: int
    reviewed: int = 0  # of the pushed turns (warm-up excluded), counted in PostgreSQL at the end
    elapsed_s: float = 0.0  # first push -> every turn reviewed
    indexed_s: float = 0.0  # first push -> the outbox empty
    cpu_s: dict[str, float] = field(default_factory=dict)  # role group -> CPU seconds over the run
    per_worker_reviews: list[int] = field(default_factory=list)
    stages_ms: dict[str, float] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average at start and end

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.elapsed_s if self.elapsed_s else 0.0

    @property
    def worker_cpu_s(self) -> float:
        return self.cpu_s.get("worker", 0.0)

    @property
    def turns_per_worker_cpu_s(self) -> float:
        return self.turns / self.worker_cpu_s if self.worker_cpu_s else 0.0

    @property
    def worker_busy(self) -> float:
        """Worker CPU over worker wall time: below 1 the workers waited (for CPU, or for work)."""
        return self.worker_cpu_s / (self.workers * self.elapsed_s) if self.elapsed_s else 0.0


def group_usage(before: dict[str, Usage], after: dict[str, Usage]) -> dict[str, float]:
    """CPU seconds per role group (worker-1 + worker-2 -> worker) between two readings."""
    out: dict[str, float] = {}
    for name, u in after.items():
        group = name.split("-")[0]
        out[group] = out.get(group, 0.0) + u.cpu_s - before.get(name, Usage(0.0, 0.0)).cpu_s
    return out


def _warm_turns(workers: int, attempt: int, notes: Sequence[str]) -> list[Turn]:
    """One full batch per worker, in scopes of their own (not counted); sent until every worker reviewed one."""
    from bench.review import Utterance

    return [
        _turn(
            Utterance("warm", "session_1", "user", notes[(w * E2E_TRIGGER + i) % len(notes)]),
            f"warm-{attempt}-{w}-{i}",
            i,
            user=f"warm-up-{attempt}-{w}",
        )
        for w in range(workers)
        for i in range(E2E_TRIGGER)
    ]


def warm_up(stack: BenchStack, settings: Settings, workers: int, notes: Sequence[str]) -> int:
    """Each worker's first review imports scikit-learn and runs the model cold: start-up, not throughput.
    Returns how many warm-up turns were stored."""
    stream = stack.stream(settings)
    sent = 0
    for attempt in range(WARM_TRIES):
        turns = _warm_turns(workers, attempt, notes)
        push_chunks(stream, [encode_event(t) for t in turns])
        sent += len(turns)
        stack.wait_for(lambda n=sent: stack.progress()["reviewed"] >= n, timeout=300, what="the warm-up")
        if all("review.done" in stack.log(w) for w in stack.worker_names()):
            break
    stack.wait_for(lambda: stack.progress()["outbox"] == 0, timeout=120, what="the warm-up to be indexed")
    return sent


def run_once(
    stack: BenchStack, settings: Settings, turns: Sequence[Turn], notes: Sequence[str], workers: int, rnd: int
) -> Run:
    stack.reset()
    run = Run(workers, rnd, len(turns))
    stack.start_roles(workers)
    try:
        warm = warm_up(stack, settings, workers, notes)
        logs_before = {w: len(stack.log(w)) for w in stack.worker_names()}
        load0 = os.getloadavg()[0]
        before = stack.usage()
        total = warm + len(turns)
        run.elapsed_s = stack.push_and_review(settings, turns, total)
        run.indexed_s = run.elapsed_s + stack.wait_indexed(max(600.0, len(turns) / 2))
        after = stack.usage()
        run.load = (load0, os.getloadavg()[0])
        run.cpu_s = group_usage(before, after)
        for w in stack.worker_names():
            reviews = worker_reviews(stack.log(w)[logs_before[w] :])
            run.per_worker_reviews.append(len(reviews))
            for event, _ in reviews:
                for k, v in event.items():
                    if k.endswith("_ms") and isinstance(v, int | float):
                        run.stages_ms[k[:-3]] = run.stages_ms.get(k[:-3], 0.0) + float(v)
        progress = stack.progress()
        if progress["episodes"] != total or progress["reviewed"] != total:
            raise RuntimeError(f"expected {total} episodes, all reviewed; got {progress}")
        with stack.engine.connect() as conn:
            run.reviewed = int(
                conn.execute(
                    text(
                        "SELECT count(*) FROM episodes WHERE reviewed_at IS NOT NULL AND turn_id LIKE 'scale-%'"
                    )
                ).scalar_one()
            )
    finally:
        stack.stop_roles()
    return run


# -- micro-benchmarks ---------------------------------------------------------------------------------


@dataclass
class Micro:
    xadd_per_s: float = 0.0  # pipelined XADD, batches of 500
    xreadgroup_per_s: float = 0.0  # XREADGROUP count 500 + XACK
    upsert_per_s: float = 0.0  # points, in the indexer's batches; segments flushed every 5 s, as it does
    search_per_s: float = 0.0  # top-10 within one scope's filter
    points: int = 0


def redis_micro(stack: BenchStack, entries: Sequence[dict[str, str]], n: int) -> tuple[float, float]:
    from pipeline.adapters.redis_stream import TurnStream

    key = f"hindsight:bench:scale:{uuid.uuid4().hex[:8]}"
    stream = TurnStream(stack.redis, key, key + ":dead")
    payloads = [{**entries[i % len(entries)], "turn_id": f"micro-{i}"} for i in range(n)]
    try:
        stack.redis.xgroup_create(key, "micro", id="0", mkstream=True)
        t0 = time.perf_counter()
        push_chunks(stream, payloads)
        xadd = n / (time.perf_counter() - t0)
        read = 0
        t0 = time.perf_counter()
        while read < n:
            got = stream.read("micro", "c1", count=500, block_ms=10)
            stream.ack("micro", [i for i, _ in got])
            read += len(got)
        xread = n / (time.perf_counter() - t0)
    finally:
        stack.redis.delete(key, key + ":dead")
    return xadd, xread


def qdrant_micro(points: int, batch: int, searches: int, scopes: int = 50) -> tuple[float, float]:
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex
    from pipeline.core.ports import IndexPoint

    rng = np.random.default_rng(9)
    vectors = rng.standard_normal((points, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory(prefix="hindsight-qdrant-micro-") as tmp:
        index = EdgeVectorIndex(Path(tmp) / "q", 384)
        try:
            t0 = time.perf_counter()
            for start in range(0, points, batch):
                index.upsert(
                    [
                        IndexPoint(
                            str(uuid.UUID(int=i + 1)),
                            vectors[i],
                            {
                                "kind": "episode",
                                "ref_id": i,
                                "agent_id": "bench",
                                "user_id": f"u{i % scopes}",
                            },
                        )
                        for i in range(start, min(start + batch, points))
                    ]
                )
            upsert = points / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            for q in range(searches):
                index.search(vectors[q % points], agent_id="bench", user_id=f"u{q % scopes}", limit=10)
            search = searches / (time.perf_counter() - t0)
        finally:
            index.close()
    return upsert, search


# -- the model ----------------------------------------------------------------------------------------


@dataclass
class Model:
    per_turn_ms: dict[str, float]  # CPU ms per turn, by role
    per_worker_core: float  # turns/s one worker core sustains
    ceilings: dict[str, float]  # turns/s at which each shared component saturates
    cpu_hours_per_million: float
    rows: list[tuple[int, float, str]]  # (worker cores, turns/s, what limits it)

    @property
    def first(self) -> tuple[str, float]:
        name = min(self.ceilings, key=lambda k: self.ceilings[k])
        return name, self.ceilings[name]


def scaling_model(per_turn_s: dict[str, float], micro: Micro, *, pg_cores: int = PG_CORES) -> Model:
    """Throughput with W worker cores: W × one core's rate until the first shared component saturates.

    The scheduler, the indexer and Redis are one process (one core) each as deployed; PostgreSQL gets
    `pg_cores`. The Redis and Qdrant micro-benchmarks cap what those could do even with no other work:
    every turn is one XADD and one XREADGROUP delivery, and at most one index point.
    """
    per_core = 1 / per_turn_s["worker"] if per_turn_s.get("worker") else 0.0
    ceilings: dict[str, float] = {}
    for role, cores in (("scheduler", 1), ("indexer", 1), ("redis", 1), ("postgres", pg_cores)):
        if per_turn_s.get(role):
            label = f"{role} ({cores} cores)" if cores > 1 else role
            ceilings[label] = cores / per_turn_s[role]
    if micro.xadd_per_s and micro.xreadgroup_per_s:
        # One Redis core doing only stream work: an XADD and a delivery (read + ack) per turn.
        ceilings["redis streams alone"] = 1 / (1 / micro.xadd_per_s + 1 / micro.xreadgroup_per_s)
    if micro.upsert_per_s:
        ceilings["qdrant upsert (local)"] = micro.upsert_per_s
    rows = []
    for w in MODEL_WORKERS:
        demand = w * per_core
        limit = min(ceilings.items(), key=lambda kv: kv[1]) if ceilings else ("", float("inf"))
        rows.append((w, min(demand, limit[1]), "workers" if demand <= limit[1] else limit[0]))
    total = sum(per_turn_s.values())
    return Model(
        {k: v * 1000 for k, v in per_turn_s.items()},
        per_core,
        ceilings,
        total * 1e6 / 3600,
        rows,
    )


# -- the command --------------------------------------------------------------------------------------


@dataclass
class ScalingResult:
    runs: list[Run]
    micro: Micro
    model: Model
    turns: int
    scopes: int
    embedded: bool
    backend: str

    def side(self, workers: int) -> list[Run]:
        return [r for r in self.runs if r.workers == workers]

    def tps(self, workers: int) -> float:
        runs = self.side(workers)
        return sum(r.turns for r in runs) / sum(r.elapsed_s for r in runs)

    def tpcpu(self, workers: int) -> float:
        runs = self.side(workers)
        return sum(r.turns for r in runs) / sum(r.worker_cpu_s for r in runs)

    @property
    def wall_ratio(self) -> float:
        return self.tps(2) / self.tps(1)

    @property
    def cpu_ratio(self) -> float:
        return self.tpcpu(2) / self.tpcpu(1)


def per_turn_costs(runs: Sequence[Run]) -> dict[str, float]:
    """CPU seconds per turn by role, over every run (the per-turn cost does not depend on the worker count)."""
    turns = sum(r.turns for r in runs)
    out: dict[str, float] = {}
    for role in ROLES:
        total = sum(r.cpu_s.get(role, 0.0) for r in runs)
        if total:
            out[role] = total / turns
    return out


def stage_shares(runs: Sequence[Run]) -> str:
    stages: dict[str, float] = {}
    for run in runs:
        for k, v in run.stages_ms.items():
            stages[k] = stages.get(k, 0.0) + v
    total = sum(stages.values())
    if not total:
        return "no reviews logged"
    return ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1]))


def result_lines(r: ScalingResult) -> list[str]:
    per_turn = r.model.per_turn_ms
    others = sum(v for k, v in per_turn.items() if k != "worker") / per_turn.get("worker", float("inf"))
    lines = [
        "## Scaling: `hindsight bench scaling`",
        "",
        f"{r.turns:,} LoCoMo turns ({r.scopes} scopes, one per conversation) pushed at once through a real "
        "scheduler, 1 or 2 `hindsight worker` processes (solo pool, `HINDSIGHT_EMBEDDING__TORCH_THREADS=1`, "
        f"embedding backend {r.backend}) and an indexer, over "
        + ("private embedded PostgreSQL and Redis" if r.embedded else "the given PostgreSQL and Redis")
        + f"; batches of {E2E_TRIGGER}; each side warmed up first; order alternating over "
        f"{len(r.runs) // 2} rounds. CPU seconds per process from /proc, first push → last point indexed.",
        "",
        "| run | workers | reviewed in | turns/s | worker CPU s | turns / worker-CPU-s | worker busy | "
        "reviews per worker | load (start → end) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for i, run in enumerate(r.runs):
        lines.append(
            f"| {i + 1} | {run.workers} | {run.elapsed_s:.1f} s | {run.turns_per_s:.1f} | {run.worker_cpu_s:.1f} | "
            f"{run.turns_per_worker_cpu_s:.1f} | {run.worker_busy:.0%} | "
            f"{' / '.join(str(n) for n in run.per_worker_reviews)} | {run.load[0]:.1f} → {run.load[1]:.1f} |"
        )
    lines += [
        "",
        "| measure | 1 worker | 2 workers | 2 ÷ 1 |",
        "|---|---:|---:|---:|",
        f"| turns/s, wall clock (target ≥ {TARGET}) | {r.tps(1):.1f} | {r.tps(2):.1f} | "
        f"**{r.wall_ratio:.2f}** {verdict(r.wall_ratio >= TARGET)} |",
        f"| turns per worker-CPU-second (load-independent; 1.00 = no loss per worker) | {r.tpcpu(1):.1f} | "
        f"{r.tpcpu(2):.1f} | **{r.cpu_ratio:.2f}** |",
        f"| 2 workers with a core each, projected (2 × the line above) | | | **{2 * r.cpu_ratio:.2f}** "
        f"{verdict(2 * r.cpu_ratio >= TARGET)} |",
        "",
        f"The machine has {os.cpu_count()} cores shared with other work, and the scheduler, indexer, PostgreSQL "
        "and Redis of the run need CPU too: the wall-clock ratio says how much of a second core two workers got "
        f"(on 2 cores at best 2 ÷ (1 + their CPU ÷ the workers'): **{2 / (1 + others):.2f}** here, where they "
        f"cost {others:.1%} of the workers' CPU per turn); turns per worker-CPU-second says whether a second "
        "worker costs anything per turn (contention in PostgreSQL, the queue, the claim).",
        "",
        "### Per-turn CPU cost by role (all runs)",
        "",
        "| role | CPU ms / turn | share | one core saturates at (turns/s) |",
        "|---|---:|---:|---:|",
    ]
    m = r.model
    total = sum(m.per_turn_ms.values())
    for role, ms in m.per_turn_ms.items():
        lines.append(f"| {role} | {ms:.2f} | {ms / total:.0%} | {1000 / ms:,.0f} |")
    lines += [
        f"| **all** | **{total:.2f}** | | |",
        "",
        "Where a worker's review time goes (its `review.done` stages, summed over the runs; wall time, so a "
        "stage waiting for a core counts): " + stage_shares(r.runs) + ".",
        "",
        "### Micro-benchmarks (local mode, same machine, same run)",
        "",
        "| measure | per second |",
        "|---|---:|",
        f"| Redis XADD, pipelined batches of 500 | {r.micro.xadd_per_s:,.0f} |",
        f"| Redis XREADGROUP (count 500) + XACK | {r.micro.xreadgroup_per_s:,.0f} |",
        f"| Qdrant Edge (in-process) upsert, batches of 256, segments flushed every 5 s, {r.micro.points:,} points | "
        f"{r.micro.upsert_per_s:,.0f} |",
        f"| Qdrant Edge search, top 10 in one scope's filter | {r.micro.search_per_s:,.0f} |",
        "",
        "### The model (docs/scaling.md)",
        "",
        f"One worker core reviews **{m.per_worker_core:.1f} turns/s**; all roles together cost "
        f"**{m.cpu_hours_per_million:.1f} CPU-hours per million turns**. Ceilings (turns/s) of the shared parts "
        f"as deployed (scheduler, indexer and Redis one core each, PostgreSQL {PG_CORES} cores):",
        "",
        "| component | saturates at (turns/s) | workers to get there |",
        "|---|---:|---:|",
    ]
    for name, ceiling in sorted(m.ceilings.items(), key=lambda kv: kv[1]):
        lines.append(f"| {name} | {ceiling:,.0f} | {ceiling / m.per_worker_core:,.0f} |")
    first, at = m.first
    lines += [
        "",
        "| worker cores | turns/s | limited by |",
        "|---:|---:|---|",
    ]
    lines += [f"| {w} | {tps:,.0f} | {lim} |" for w, tps, lim in m.rows]
    lines += [
        "",
        f"First to saturate: **{first}** at **{at:,.0f} turns/s** (~{at / m.per_worker_core:,.0f} worker cores); "
        "past it, shard (docs/scaling.md).",
    ]
    return lines


def chart(r: ScalingResult, path: Path) -> None:
    plt = charts.pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    labels = ["1 worker", "2 workers"]
    a.bar([0, 1], [r.tps(1), r.tps(2)], width=0.35, label="turns/s (wall)")
    a.bar([0.35, 1.35], [r.tpcpu(1), r.tpcpu(2)], width=0.35, label="turns per worker-CPU-s")
    a.set_xticks([0.17, 1.17], labels)
    a.set_title(f"measured: wall ratio {r.wall_ratio:.2f}, per-CPU ratio {r.cpu_ratio:.2f}")
    a.legend()
    ws = [w for w, _, _ in r.model.rows]
    b.plot(ws, [w * r.model.per_worker_core for w in ws], "--", color="grey", label="workers alone")
    b.plot(ws, [t for _, t, _ in r.model.rows], "o-", label="model")
    for name, ceiling in sorted(r.model.ceilings.items(), key=lambda kv: kv[1])[:3]:
        b.axhline(ceiling, linestyle=":", linewidth=1)
        b.annotate(name, (ws[0], ceiling), fontsize=7, va="bottom")
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    b.set_xlabel("worker cores")
    b.set_ylabel("turns/s")
    b.set_title("model: throughput as workers are added")
    b.legend(fontsize=8)
    charts.save(fig, path)


def run_scaling_bench(
    settings: Settings,
    *,
    turns: int = 3000,
    rounds: int = 4,
    data: Path,
    database_url: str | None = None,
    redis_url: str | None = None,
    backend: str | None = None,
    micro_points: int = 5000,
    micro_entries: int = 20_000,
    write: bool,
    console: Console,
    chart_path: Path = DOCS_CHART,
) -> ScalingResult:
    configure_logging("WARNING", settings.log_json)
    corpus = load_locomo(data)
    picked = round_robin(corpus.by_conversation()[:E2E_SCOPES], turns)
    bench_turns = [_turn(u, f"scale-{i}", 100_000 + i) for i, u in enumerate(picked)]
    notes = [u.content for u in corpus.notes] or [u.content for u in corpus.turns]
    backend = backend or DEFAULT_BACKEND
    env = {**STACK_ENV, "HINDSIGHT_EMBEDDING__BACKEND": backend}
    stack = BenchStack(scratch_root("hindsight-scaling-"), database_url, redis_url, env)
    runs: list[Run] = []
    try:
        console.print("starting the servers ...")
        stack.start_servers(settings)
        for rnd in range(rounds):
            for workers in (1, 2) if rnd % 2 == 0 else (2, 1):
                console.rule(f"[bold]bench scaling: round {rnd + 1}, {workers} worker(s)")
                run = run_once(stack, settings, bench_turns, notes, workers, rnd)
                console.print(
                    f"{run.turns:,} turns in {run.elapsed_s:.1f} s = {run.turns_per_s:.1f} turns/s; "
                    f"worker CPU {run.worker_cpu_s:.1f} s; load {run.load[0]:.1f} → {run.load[1]:.1f}",
                    highlight=False,
                )
                runs.append(run)
        console.rule("[bold]bench scaling: micro-benchmarks")
        micro = Micro(points=micro_points)
        micro.xadd_per_s, micro.xreadgroup_per_s = redis_micro(
            stack, [encode_event(t) for t in bench_turns[:500]], micro_entries
        )
        micro.upsert_per_s, micro.search_per_s = qdrant_micro(micro_points, settings.indexer_batch, 500)
    except BaseException:
        stack.close()
        console.print(f"[red]failed; logs kept under {stack.root}/logs[/red]")
        raise
    stack.close(remove=True)
    result = ScalingResult(
        runs,
        micro,
        scaling_model(per_turn_costs(runs), micro),
        len(bench_turns),
        len({t.user_id for t in bench_turns}),
        stack.embedded,
        backend,
    )
    lines = result_lines(result)
    print_table(console, lines)
    if write:
        chart(result, chart_path)
        write_section("scaling", "\n".join([*lines, "", "![scaling](docs/bench/scaling.png)"]))
        console.print(f"wrote BENCHMARKS.md (bench:scaling) and {chart_path}")
    return result


def figures(r: ScalingResult) -> dict[str, float]:
    """Flat figures for `bench all`."""
    out = {
        "tps_1": r.tps(1),
        "tps_2": r.tps(2),
        "wall_ratio": r.wall_ratio,
        "cpu_ratio": r.cpu_ratio,
        "per_worker_core": r.model.per_worker_core,
        "cpu_hours_per_million": r.model.cpu_hours_per_million,
        "first_ceiling": r.model.first[1],
    }
    out.update({f"{k}_ms_per_turn": v for k, v in r.model.per_turn_ms.items()})
    return out


def dumps(r: ScalingResult) -> str:
    return json.dumps(figures(r), indent=2)
