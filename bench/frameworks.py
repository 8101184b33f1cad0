"""`hindsight bench frameworks`: what the LangGraph store costs over the client (issue 41).

`store.search(namespace, query=...)` is one request (GET /v1/turns/recall): a recall and its hits' items;
the target is its p50 <= 1.2 x `client.recall` p50 on the same queries against the same stack. Both are
timed query by query in one run, alternating which goes first, so machine load hits both alike. The
stack is real: a scheduler, a review worker and the API (with the indexer) as processes, over the
machine's PostgreSQL and Redis when given, else embedded ones.

Timed twice: first right after the load, before PostgreSQL holds any planner statistics for it (a new
database in its first minute, or a server with autovacuum off, as this machine's is), then after ANALYZE,
as autovacuum gathers them within a minute of a load. The target is read on the second: without statistics
the planner takes any index of the scope for the read by key and scans the scope once per key.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from sqlalchemy import text

from bench.freshness import STACK_ENV, start_pipeline
from bench.report import write_section
from bench.stack import BenchStack, scratch_root
from hindsight_frameworks.langgraph_store import HindsightStore
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging

AGENT, USER = "frameworks-bench", "u1"
NAMESPACE = (AGENT, USER, "memories")
TARGET = 1.2
PEOPLE = ("Ana", "Bruno", "Chen", "Dara", "Emil", "Fatima", "Goro", "Hana", "Ivo", "Jun")
TOPICS = (
    ("likes", ("green tea", "spicy ramen", "jazz records", "long hikes", "board games", "sourdough bread")),
    ("is allergic to", ("peanuts", "cats", "penicillin", "shellfish", "pollen", "latex")),
    ("is planning a trip to", ("Lisbon", "Kyoto", "Oaxaca", "Tallinn", "Hobart", "Marrakesh")),
    (
        "works on",
        ("a billing service", "a mobile game", "tax software", "a robot arm", "a news site", "a compiler"),
    ),
)


@dataclass
class FrameworksResult:
    items: int
    queries: int
    recall_ms: list[float]
    search_ms: list[float]
    cold_recall_ms: list[float]
    cold_search_ms: list[float]

    @staticmethod
    def p(values: list[float], q: float) -> float:
        return float(np.percentile(values, q))

    @property
    def ratio(self) -> float:
        return self.p(self.search_ms, 50) / self.p(self.recall_ms, 50)

    @property
    def cold_ratio(self) -> float:
        return self.p(self.cold_search_ms, 50) / self.p(self.cold_recall_ms, 50)


def statements(n: int, rng: random.Random) -> list[str]:
    out = []
    for i in range(n):
        verb, things = TOPICS[i % len(TOPICS)]
        out.append(f"{rng.choice(PEOPLE)} {verb} {rng.choice(things)} (note {i}).")
    return out


def questions(n: int, rng: random.Random) -> list[str]:
    asks = (
        "What does {p} like?",
        "What is {p} allergic to?",
        "Where is {p} going?",
        "What does {p} work on?",
    )
    return [rng.choice(asks).format(p=rng.choice(PEOPLE)) for _ in range(n)]


def measure(client: MemoryClient, store: HindsightStore, qs: list[str]) -> tuple[list[float], list[float]]:
    """Each question timed through client.recall and store.search, alternating which goes first."""
    recall_ms: list[float] = []
    search_ms: list[float] = []

    def recall(q: str) -> None:
        t0 = time.perf_counter()
        client.recall(q, agent_id=AGENT, user_id=USER, k=10)
        recall_ms.append((time.perf_counter() - t0) * 1000)

    def search(q: str) -> None:
        t0 = time.perf_counter()
        store.search((AGENT, USER), query=q, limit=10)
        search_ms.append((time.perf_counter() - t0) * 1000)

    for i, q in enumerate(qs):
        for step in (recall, search) if i % 2 == 0 else (search, recall):
            step(q)
    return recall_ms, search_ms


def run_frameworks_bench(
    settings: Settings,
    *,
    items: int,
    queries: int,
    database_url: str | None,
    redis_url: str | None,
    write: bool,
    console: Console,
) -> FrameworksResult:
    configure_logging("WARNING", settings.log_json)
    rng = random.Random(41)
    stack = BenchStack(scratch_root("hindsight-frameworks-"), database_url, redis_url, dict(STACK_ENV))
    try:
        console.print("starting the servers ...")
        stack.start_servers(settings)
        stack.reset()
        url = start_pipeline(stack, workers=1)
        on_stack = settings.model_copy(
            update={"redis_url": stack.broker_url, "api_key": None, "api_url": url}
        )
        client = MemoryClient(on_stack)
        store = HindsightStore(client)
        console.rule(f"[bold]bench frameworks: {items} store items, {queries} questions")
        for i, said in enumerate(statements(items, rng)):
            store.put(NAMESPACE, f"m{i}", {"text": said, "n": i})
        stack.wait_for(
            lambda: (
                client.latest_turns(agent_id=AGENT, user_id=USER, limit=1)["total"] >= items
                and not stack.outbox()
            ),
            timeout=600,
            what="every item stored and indexed",
        )
        measure(client, store, questions(20, rng))  # warm both paths (connections, caches)
        asked = questions(queries, rng)
        cold = measure(client, store, asked)
        with stack.engine.begin() as conn:
            conn.execute(text("ANALYZE"))
        recall_ms, search_ms = measure(client, store, asked)
        result = FrameworksResult(items, queries, recall_ms, search_ms, *cold)
        for line in lines(result):
            console.print(line, highlight=False)
        if write:
            write_section("frameworks", "\n".join(lines(result)))
        client.close()
        return result
    finally:
        stack.stop_roles()
        stack.close(remove=True)


def lines(r: FrameworksResult) -> list[str]:
    verdict = "meets" if r.ratio <= TARGET else "misses"
    rows: list[Any] = [
        ("`client.recall`", "after ANALYZE", r.recall_ms),
        ("`store.search` (one request: a recall and its hits' items)", "after ANALYZE", r.search_ms),
        ("`client.recall`", "no statistics yet", r.cold_recall_ms),
        ("`store.search`", "no statistics yet", r.cold_search_ms),
    ]
    out = [
        "## Framework adapters: LangGraph store search vs client recall (`hindsight bench frameworks`)",
        "",
        f"{r.items} store items in one scope (a real scheduler, review worker and API), {r.queries} questions, "
        "each timed both ways in one run, alternating which goes first; k = limit = 10. Timed right after "
        "the load, before PostgreSQL held planner statistics for it, then after ANALYZE (what autovacuum "
        "does within a minute of a load; the machine's server runs with autovacuum off).",
        "",
        "| path | planner statistics | p50 ms | p95 ms |",
        "|---|---|---|---|",
    ]
    out += [f"| {name} | {when} | {r.p(ms, 50):.1f} | {r.p(ms, 95):.1f} |" for name, when, ms in rows]
    out += [
        "",
        f"**store.search p50 / client.recall p50 = {r.ratio:.2f}** (target <= {TARGET}: {verdict} it); "
        f"{r.cold_ratio:.2f} before the table had statistics.",
    ]
    return out
