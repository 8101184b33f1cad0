"""`hindsight bench busy-scope`: one scope's flood of same-subject statements must not stall the others (issue 44).

A daily log ("My weight this morning is 81.4 kg", one statement a day, the value varying) is pushed into
one scope at once, while another scope's turns keep arriving, one short session at a time. The other
scope's review latency (push -> its episode reviewed) is measured twice in one run: on a quiet stack and
beside the busy scope; and the busy scope's supersession links are counted against its statements (a
statement supersedes only the current value: a chain, linear in the statements, not a clique).

The stack is the one `hindsight up` runs (bench/stack.py): a real scheduler and review worker(s) on the
given (disposable) PostgreSQL and Redis, or private embedded servers.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from rich.console import Console
from sqlalchemy import text

from bench.report import write_section
from bench.stack import BenchStack, push_chunks, scratch_root
from pipeline.core.config import PolicySettings, Settings
from pipeline.core.logging import configure_logging
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest.validation import encode_event

BUSY = ("busy-agent", "weight-log")
OTHER = ("busy-agent", "neighbour")
TASK_SECONDS = re.compile(r"hindsight\.review_batch\[[^\]]+\] succeeded in ([0-9.]+)s")
DAY0 = datetime(2025, 1, 1, 7, 0, tzinfo=UTC)
# Linear means a small constant per statement; the clique of issue 44 gave ~44 per statement at 1,500.
LINKS_PER_STATEMENT_BOUND = 2.0
# The other scope's review latency beside the busy scope, p95: the busy scope's two batches in flight at most
# (policy.max_batch = 100 episodes each, ~5.5 s each on a loaded 2-core machine), not its whole backlog
# (`bench all` headline; 500-episode batches gave 40-50 s at the full size).
TARGET_OTHER_P95_S = 15.0


def weight_log(n: int) -> list[Turn]:
    """n daily statements of one subject, the value varying (80.0-89.9 kg)."""
    return [
        Turn(
            f"w{i}",
            *BUSY,
            "log",
            "user",
            f"My weight this morning is {80 + (i * 37 % 100) / 10:.1f} kg",
            DAY0 + timedelta(days=i),
            "user",
        )
        for i in range(n)
    ]


def other_turn(i: int, now: datetime) -> tuple[Turn, SessionEnd]:
    session = f"chat-{i}"
    turn = Turn(
        f"n{i}",
        *OTHER,
        session,
        "user",
        f"Remind me to call the plumber about the kitchen tap, note {i}",
        now,
        "user",
    )
    return turn, SessionEnd(*OTHER, session, now)


@dataclass
class Round:
    busy: bool
    latencies_s: list[float] = field(default_factory=list)
    missed: int = 0
    statements: int = 0
    reviewed: int = 0
    links: int = 0
    max_links_per_episode: int = 0
    busy_elapsed_s: float | None = None
    failed_batches: int = 0
    busy_batches: int = 0
    longest_batch_s: float = 0.0

    def p(self, q: float) -> float:
        xs = sorted(self.latencies_s)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def _reviewed(stack: BenchStack, agent: str, user: str, turn_ids: list[str]) -> set[str]:
    with stack.engine.connect() as conn:
        return set(
            conn.scalars(
                text(
                    "SELECT turn_id FROM episodes WHERE agent_id = :a AND user_id = :u"
                    " AND reviewed_at IS NOT NULL AND turn_id = ANY(:t)"
                ),
                {"a": agent, "u": user, "t": turn_ids},
            )
        )


def _busy_counts(stack: BenchStack) -> tuple[int, int, int, int]:
    """(statements reviewed, links, most links ending at one new episode, failed batches)."""
    with stack.engine.connect() as conn:
        row = conn.execute(
            text(
                """
                SELECT (SELECT count(*) FROM episodes WHERE agent_id = :a AND user_id = :u
                          AND reviewed_at IS NOT NULL) AS reviewed,
                       (SELECT count(*) FROM supersessions WHERE agent_id = :a AND user_id = :u) AS links,
                       (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM supersessions
                          WHERE agent_id = :a AND user_id = :u GROUP BY new_episode_id) x) AS per_new,
                       (SELECT count(*) FROM batches WHERE status = 'failed') AS failed
                """
            ),
            {"a": BUSY[0], "u": BUSY[1]},
        ).one()
    return int(row.reviewed), int(row.links), int(row.per_new), int(row.failed)


def _busy_batches(stack: BenchStack) -> tuple[int, float]:
    """(the busy scope's finished batches, the longest review task's seconds, from the workers' logs).

    A batch's finished_at is stamped before its write transaction, so the task's own time (Celery's
    "succeeded in") is what another scope's batch queued behind it waits for.
    """
    with stack.engine.connect() as conn:
        n = conn.scalar(
            text("SELECT count(*) FROM batches WHERE agent_id = :a AND user_id = :u AND status = 'done'"),
            {"a": BUSY[0], "u": BUSY[1]},
        )
    took = [float(s) for name in stack.worker_names() for s in TASK_SECONDS.findall(stack.log(name))]
    return int(n or 0), max(took, default=0.0)


def run_round(
    stack: BenchStack,
    settings: Settings,
    *,
    busy: int,
    others: int,
    every_s: float,
    workers: int,
    timeout_s: float,
) -> Round:
    stack.reset()
    stack.start_roles(workers, indexer=False)
    stream = stack.stream(settings)
    r = Round(busy=busy > 0, statements=busy)
    t0 = time.monotonic()
    if busy:
        push_chunks(stream, [encode_event(t) for t in weight_log(busy)])
    pushed: dict[str, float] = {}
    waiting: list[str] = []
    i = 0
    deadline = time.monotonic() + others * every_s + timeout_s
    while (i < others or waiting) and time.monotonic() < deadline:
        now = time.monotonic()
        if i < others and now - t0 >= i * every_s:
            turn, end = other_turn(i, datetime.now(UTC))
            stream.add_many([encode_event(turn), encode_event(end)])
            pushed[turn.turn_id] = now
            waiting.append(turn.turn_id)
            i += 1
        if waiting:
            seen = time.monotonic()
            for turn_id in _reviewed(stack, *OTHER, waiting):
                r.latencies_s.append(seen - pushed[turn_id])
                waiting.remove(turn_id)
        stack.check_alive()
        time.sleep(0.1)
    r.missed = len(waiting)
    if busy:

        def settled() -> bool:
            reviewed, _, _, failed = _busy_counts(stack)
            return reviewed >= busy or failed > 0

        stack.wait_for(settled, timeout=max(timeout_s, busy * 0.5), what="the busy scope reviewed")
        r.busy_elapsed_s = time.monotonic() - t0
    r.reviewed, r.links, r.max_links_per_episode, r.failed_batches = _busy_counts(stack)
    r.busy_batches, r.longest_batch_s = _busy_batches(stack)
    stack.stop_roles()
    return r


def result_lines(
    quiet: Round, loaded: Round, *, workers: int, embedded: bool, policy: PolicySettings | None = None
) -> list[str]:
    policy = policy or PolicySettings()
    cap = policy.max_in_flight_per_scope or "no cap"
    ratio = loaded.links / loaded.statements if loaded.statements else 0.0
    linear = "yes" if ratio <= LINKS_PER_STATEMENT_BOUND else "NO"
    servers = "private embedded PostgreSQL and Redis" if embedded else "the given PostgreSQL and Redis"
    return [
        "## Busy scope: one scope's flood does not stall the others (issue 44)",
        "",
        f"`hindsight bench busy-scope`: {loaded.statements:,} same-subject statements (a daily weight log) pushed "
        f"at once into one scope while another scope's turns keep arriving (one short session each, "
        f"{len(quiet.latencies_s) + quiet.missed} per round); real scheduler and {workers} review worker(s) on "
        f"{servers}; a batch claims at most {policy.max_batch} episodes (`policy.max_batch`), a scope has at "
        f"most {cap} batches' worth of episodes in flight (`policy.max_in_flight_per_scope`). Latency: push -> the other "
        "scope's turn reviewed.",
        "",
        "| | other scope alone | beside the busy scope |",
        "|---|---:|---:|",
        f"| other scope's review latency p50 | {quiet.p(0.5):.2f} s | {loaded.p(0.5):.2f} s |",
        f"| other scope's review latency p95 | {quiet.p(0.95):.2f} s | {loaded.p(0.95):.2f} s |",
        f"| other scope's turns not reviewed in time | {quiet.missed} | {loaded.missed} |",
        f"| busy scope: statements reviewed | - | {loaded.reviewed:,} / {loaded.statements:,} |",
        f"| busy scope: reviewed in | - | {loaded.busy_elapsed_s or 0:.1f} s |",
        f"| busy scope: batches, longest review task | - | {loaded.busy_batches}, {loaded.longest_batch_s:.1f} s |",
        f"| supersession links | - | {loaded.links:,} ({ratio:.2f} per statement; linear: {linear}) |",
        f"| most links to one new statement | - | {loaded.max_links_per_episode} |",
        f"| batches given up | {quiet.failed_batches} | {loaded.failed_batches} |",
    ]


def run_busy_scope_bench(
    settings: Settings,
    *,
    statements: int = 2000,
    others: int = 20,
    every_s: float = 2.0,
    workers: int = 1,
    timeout_s: float = 300.0,
    database_url: str | None = None,
    redis_url: str | None = None,
    write: bool,
    console: Console,
) -> tuple[Round, Round]:
    configure_logging("WARNING", settings.log_json)
    # The stack's roles see none of this process's HINDSIGHT_ variables: the caps under test go to them here,
    # so `HINDSIGHT_POLICY__MAX_BATCH=500 hindsight bench busy-scope` measures another setting side by side.
    policy = settings.policy
    env = {
        "HINDSIGHT_RECALL__UNREVIEWED": "true",
        "HINDSIGHT_POLICY__MAX_BATCH": str(policy.max_batch),
        "HINDSIGHT_POLICY__MAX_IN_FLIGHT_PER_SCOPE": str(policy.max_in_flight_per_scope),
    }
    stack = BenchStack(scratch_root("hindsight-busy-scope-"), database_url, redis_url, env)
    try:
        console.print("starting the servers ...")
        stack.start_servers(settings)
        on_stack = settings.model_copy(update={"redis_url": stack.broker_url, "api_key": None})
        console.rule("[bold]bench busy-scope: the other scope alone")
        quiet = run_round(
            stack, on_stack, busy=0, others=others, every_s=every_s, workers=workers, timeout_s=timeout_s
        )
        console.rule(f"[bold]bench busy-scope: beside {statements:,} statements in one scope")
        loaded = run_round(
            stack,
            on_stack,
            busy=statements,
            others=others,
            every_s=every_s,
            workers=workers,
            timeout_s=timeout_s,
        )
    except BaseException:
        stack.close()
        console.print(f"[red]failed; logs kept under {stack.root}/logs[/red]")
        raise
    embedded = stack.embedded
    stack.close(remove=True)
    lines = result_lines(quiet, loaded, workers=workers, embedded=embedded, policy=policy)
    console.print("\n".join(lines), highlight=False)
    if write:
        write_section("busy-scope", "\n".join(lines))
        console.print("wrote BENCHMARKS.md (bench:busy-scope)")
    return quiet, loaded


def figures(quiet: Round, loaded: Round) -> dict[str, float]:
    """Flat figures for `bench all`."""
    return {
        "alone_p50_s": quiet.p(0.5),
        "alone_p95_s": quiet.p(0.95),
        "beside_p50_s": loaded.p(0.5),
        "beside_p95_s": loaded.p(0.95),
        "missed": float(quiet.missed + loaded.missed),
        "statements": float(loaded.statements),
        "reviewed": float(loaded.reviewed),
        "busy_elapsed_s": float(loaded.busy_elapsed_s or 0.0),
        "busy_batches": float(loaded.busy_batches),
        "longest_batch_s": loaded.longest_batch_s,
        "links": float(loaded.links),
        "links_per_statement": loaded.links / loaded.statements if loaded.statements else 0.0,
        "failed_batches": float(quiet.failed_batches + loaded.failed_batches),
    }
