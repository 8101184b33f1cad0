"""`hindsight bench tools`: a seeded, simulated month of tool traffic through real full reviews (issue 30).

Five task kinds, each served by two (tool, argument pattern) options with known success rates and median
latencies; one option degrades half-way through the month (and stops being the better one). Calls arrive
at random times, 200 a day, and go through the pipeline's own `review_batch` in-process (rules only, real
PostgreSQL) one full review per `batch` calls, as the scheduler's batch trigger would, with the review
clock at the simulated time. The embedder is the deterministic hashing one: tool insights do not depend
on embeddings, and the model would only add minutes.

Figures (targets from the issue):
- direction: the share of task kinds whose insights rate the truly better option above the other, at the
  end of the month (>= 95%); also over every end of day after the first, where the truth is that day's;
- rate error: the largest |reported success rate - true rate| over every insight at the end (<= 5 points);
- degradation: simulated hours from the change until the degrading option's insight reports a rate below
  the midpoint of its old and new truth (<= 24 h).

Agent-wide (`USERS` users): the same month, each call made for one of `USERS` users of the agent, and
each lot of `batch` calls followed by the full review of one user in turn (so each user's scope is
reviewed every ~`batch` of its own calls, as the batch trigger would). Every review re-plans the agent's
agent-wide insights over all users' calls; the same figures are taken from them, beside those of one
user's own insights (a quarter of the traffic).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from sqlalchemy import text

from bench.report import write_section
from bench.review import TABLES, check_disposable
from pipeline.adapters.fakes import HashingEmbedder
from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging
from pipeline.core.models import Dispatch, Scope, Turn
from pipeline.review.review_batch import ReviewConfig, review_batch

BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_tools"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/8"  # checked only: this bench never touches Redis
AGENT, USER = "bench-tools", "traffic"
START = datetime(2026, 5, 1, tzinfo=UTC)
DAYS = 30
CALLS_PER_DAY = 200
BATCH = 30
SEED = 30
USERS = 4  # users of the agent in the agent-wide run
TARGETS = {"direction": 0.95, "max_rate_error_points": 5.0, "degradation_hours": 24.0}


@dataclass(frozen=True)
class Option:
    tool: str
    args: tuple[str, ...]
    rate: float  # true success rate
    latency_ms: float  # true median latency (lognormal)
    failure: str = "timeout"
    degrade_to: float | None = None  # the rate from the middle of the month on

    def rate_at(self, t: datetime) -> float:
        return self.degrade_to if self.degrade_to is not None and t >= CHANGE else self.rate

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return self.tool, tuple(sorted(self.args))


CHANGE = START + timedelta(days=DAYS / 2)
TASKS: dict[str, tuple[Option, Option]] = {
    "flight search": (
        Option("flights.search", ("from", "to", "dates"), 0.92, 1200),
        Option("travel.scrape", ("url",), 0.40, 8000),
    ),
    "weather lookup": (
        Option("weather.get", ("city",), 0.96, 300, degrade_to=0.35),
        Option("weather.get", ("lat", "lon"), 0.85, 450, failure="error"),
    ),
    "hotel booking": (
        Option("hotels.book", ("hotel_id", "dates"), 0.88, 2000, failure="error"),
        Option("hotels.book", ("name", "city", "dates"), 0.70, 2500, failure="error"),
    ),
    "currency conversion": (
        Option("fx.convert", ("amount", "from", "to"), 0.99, 150),
        Option("web.search", ("query",), 0.75, 900),
    ),
    "restaurant search": (
        Option("places.search", ("query", "near"), 0.80, 700),
        Option("places.search", ("query",), 0.62, 650, failure="error"),
    ),
}


def traffic(seed: int = SEED) -> list[tuple[datetime, str, Option, bool, float]]:
    """(time, task, option, succeeded, latency ms) for the month, in time order."""
    rng = random.Random(seed)
    calls = []
    for _ in range(DAYS * CALLS_PER_DAY):
        t = START + timedelta(seconds=rng.uniform(0, DAYS * 86400))
        task = rng.choice(sorted(TASKS))
        option = rng.choice(TASKS[task])
        ok = rng.random() < option.rate_at(t)
        latency = option.latency_ms * rng.lognormvariate(0, 0.4)
        calls.append((t, task, option, ok, round(latency, 1)))
    return sorted(calls, key=lambda c: c[0])


def user_of(i: int, users: int) -> str:
    """Whose call the i-th is: one user for the single-scope run, else spread over `users`."""
    return USER if users == 1 else f"{USER}-{i % users}"


def to_turn(i: int, call: tuple[datetime, str, Option, bool, float], users: int = 1) -> Turn:
    t, task, option, ok, latency = call
    status = "ok" if ok else option.failure
    meta: dict[str, Any] = {
        "tool": option.tool,
        "args": {k: "x" for k in option.args},
        "status": status,
        "latency_ms": latency,
        "task": task,
    }
    if not ok:
        meta["error"] = "upstream timed out after 30 s" if status == "timeout" else "HTTP 502 bad gateway"
    content = '{"results": 3}' if ok else f"Error: {meta['error']}"
    return Turn(f"call-{i}", AGENT, user_of(i, users), "s-month", "tool", content, t, "tool", meta)


@dataclass
class Result:
    reviews: int
    calls: int
    direction_end: float
    direction_daily: float
    max_rate_error: float  # points
    degradation_hours: float | None
    insights: list[dict[str, Any]]

    def figures(self) -> dict[str, float]:
        return {
            "direction": self.direction_end,
            "direction_daily": self.direction_daily,
            "max_rate_error_points": self.max_rate_error,
            "degradation_hours": self.degradation_hours if self.degradation_hours is not None else 1e9,
        }


def _rates(insights: Sequence[dict[str, Any]]) -> dict[tuple[str, str, tuple[str, ...]], float]:
    return {(i["task"], i["tool"], tuple(i["arg_keys"])): float(i["success_rate"]) for i in insights}


def _better_named(rates: dict[tuple[str, str, tuple[str, ...]], float], t: datetime) -> float:
    """Share of task kinds whose insights rate the option that is better at `t` above the other."""
    right = 0
    for task, (a, b) in TASKS.items():
        good, bad = (a, b) if a.rate_at(t) > b.rate_at(t) else (b, a)
        ra, rb = rates.get((task, *good.key)), rates.get((task, *bad.key))
        right += ra is not None and rb is not None and ra > rb
    return right / len(TASKS)


def _at(t: datetime) -> Callable[[], datetime]:
    """A review clock stopped at simulated time `t`."""
    return lambda: t


class _Tracker:
    """The figures of one reader of the insights, followed lot by lot."""

    def __init__(self, read: Callable[[], list[dict[str, Any]]]) -> None:
        self.read = read
        degrading = next((task, o) for task, pair in TASKS.items() for o in pair if o.degrade_to is not None)
        self.degrading_key = (degrading[0], *degrading[1].key)
        self.midpoint = (degrading[1].rate + (degrading[1].degrade_to or 0.0)) / 2
        self.shown_at: datetime | None = None
        self.daily: list[float] = []
        self.next_day = START + timedelta(days=2)

    def after_review(self, now: datetime) -> None:
        rates = _rates(self.read())
        if self.shown_at is None and now >= CHANGE:
            rate = rates.get(self.degrading_key)
            if rate is not None and rate < self.midpoint:
                self.shown_at = now
        while now >= self.next_day:  # the state at each end of day after the first
            self.daily.append(_better_named(rates, self.next_day))
            self.next_day += timedelta(days=1)

    def result(self, reviews: int, calls: int, end: datetime) -> Result:
        insights = self.read()
        return Result(
            reviews=reviews,
            calls=calls,
            direction_end=_better_named(_rates(insights), end),
            direction_daily=sum(self.daily) / len(self.daily) if self.daily else 0.0,
            max_rate_error=_max_error(_rates(insights), end),
            degradation_hours=(self.shown_at - CHANGE).total_seconds() / 3600 if self.shown_at else None,
            insights=insights,
        )


def run(repo: Repository, *, batch: int = BATCH, seed: int = SEED, users: int = 1) -> list[Result]:
    """The month through real full reviews: [the figures of the scope's insights] with one user; with
    `users` > 1 [the agent-wide insights' (read with every user's provenance, as an operator: the bench
    judges numbers, not isolation), user 0's own insights']."""
    calls = traffic(seed)
    embedder = HashingEmbedder()
    config = ReviewConfig()
    first = user_of(0, users)
    trackers = [_Tracker(lambda: repo.tool_insights(AGENT, first, limit=500, scope="user"))]
    if users > 1:
        trackers.insert(
            0,
            _Tracker(lambda: repo.tool_insights(AGENT, first, limit=500, scope="agent", provenance="all")),
        )
    reviews = 0
    for lot_no, start in enumerate(range(0, len(calls), batch)):
        lot = calls[start : start + batch]
        repo.ingest([to_turn(start + i, c, users) for i, c in enumerate(lot)], [])
        scope = Scope(AGENT, user_of(lot_no, users))
        batch_id = repo.claim(Dispatch(scope, "full", "batch_size"), min_count=1, limit=10 * batch)
        if batch_id is None:
            raise RuntimeError("nothing to claim")
        now = lot[-1][0]
        report = review_batch(batch_id, repo=repo, embedder=embedder, clock=_at(now), config=config)
        if report is None or not report.applied:
            raise RuntimeError(f"batch {batch_id} was not reviewed")
        reviews += 1
        for tracker in trackers:
            tracker.after_review(now)
    return [t.result(reviews, len(calls), calls[-1][0]) for t in trackers]


def _max_error(rates: dict[tuple[str, str, tuple[str, ...]], float], end: datetime) -> float:
    """The largest |reported - true| success rate at `end`, in points (a missing insight counts as 0%)."""
    truth = {(task, *o.key): o.rate_at(end) for task, pair in TASKS.items() for o in pair}
    return max(abs(rates.get(k, 0.0) - v) for k, v in truth.items()) * 100


def met(f: dict[str, float]) -> bool:
    return (
        f["direction"] >= TARGETS["direction"]
        and f["max_rate_error_points"] <= TARGETS["max_rate_error_points"]
        and f["degradation_hours"] <= TARGETS["degradation_hours"]
    )


def report_lines(r: Result, agent: Result | None = None, one_user: Result | None = None) -> list[str]:
    f = r.figures()
    hours = f"{r.degradation_hours:.1f} h" if r.degradation_hours is not None else "never"
    ok = {
        k: "met" if v else "missed"
        for k, v in {
            "direction": f["direction"] >= TARGETS["direction"],
            "error": f["max_rate_error_points"] <= TARGETS["max_rate_error_points"],
            "degradation": f["degradation_hours"] <= TARGETS["degradation_hours"],
        }.items()
    }
    lines = [
        "## Tool insights (`hindsight bench tools`)",
        "",
        f"A seeded month of simulated tool traffic (seed {SEED}): {r.calls} calls over {DAYS} days, "
        f"{len(TASKS)} task kinds with two (tool, argument pattern) options each, known success rates and "
        f"lognormal latencies; `weather.get` with `city` falls from 96% to 35% at day {DAYS // 2}. "
        f"{r.reviews} real full reviews (`review_batch` in-process, rules only, PostgreSQL; one per "
        f"{BATCH} calls, the review clock at simulated time; hashing embedder: insights do not read "
        "embeddings). A group's rate is taken over the calls since its latest change point "
        "(likelihood-ratio test, 12 nats; `pipeline/review/tool_insights.py`).",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| task kinds whose insights rate the better option higher (end of month) | "
        f"{f['direction']:.0%} | ≥ 95% ({ok['direction']}) |",
        f"| the same, every end of day from day 2 (that day's truth) | {f['direction_daily']:.1%} | — |",
        f"| max \\|reported − true success rate\\| (end of month) | {f['max_rate_error_points']:.1f} points | "
        f"≤ 5 ({ok['error']}) |",
        f"| simulated time until the degradation shows (rate below the old/new midpoint) | {hours} | "
        f"≤ 24 h ({ok['degradation']}) |",
        "",
        "The insights at the end of the month:",
        "",
    ]
    lines += [f"- {i['text']}" for i in r.insights]
    if agent is not None and one_user is not None:
        lines += ["", *agent_lines(agent, one_user)]
    return lines


def agent_lines(agent: Result, one_user: Result) -> list[str]:
    """The agent-wide run beside one of its users' own insights."""
    a, u = agent.figures(), one_user.figures()

    def hours(h: float | None) -> str:
        return f"{h:.1f} h" if h is not None else "never"

    return [
        f"Agent-wide: the same month with each call made for one of {USERS} users of the agent, and after "
        f"each lot of {BATCH} calls the full review of one user in turn ({agent.reviews} reviews); each "
        "review re-plans the agent's insights over every user's calls under the agent's lock.",
        "",
        f"| figure | agent-wide insights | one user's own insights (1/{USERS} of the calls) | target |",
        "|---|---|---|---|",
        f"| task kinds whose insights rate the better option higher (end of month) | {a['direction']:.0%} | "
        f"{u['direction']:.0%} | ≥ 95% |",
        f"| the same, every end of day from day 2 | {a['direction_daily']:.1%} | {u['direction_daily']:.1%} | — |",
        f"| max \\|reported − true success rate\\| (end of month) | {a['max_rate_error_points']:.1f} points | "
        f"{u['max_rate_error_points']:.1f} points | ≤ 5 |",
        f"| simulated time until the degradation shows | {hours(agent.degradation_hours)} | "
        f"{hours(one_user.degradation_hours)} | ≤ 24 h |",
    ]


def run_tools_bench(
    settings: Settings, *, database_url: str, redis_url: str, write: bool, console: Console
) -> dict[str, float]:
    configure_logging("WARNING", settings.log_json)
    check_disposable(database_url, redis_url, settings)
    upgrade(database_url)
    engine = make_engine(database_url, pool_size=2)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        console.rule("[bold]bench tools")
        repo = Repository(engine)
        (result,) = run(repo)
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        agent, one_user = run(repo, users=USERS)
    finally:
        engine.dispose()
    lines = report_lines(result, agent, one_user)
    for line in lines:
        console.print(line, markup=False, highlight=False)
    if write:
        write_section("tools", "\n".join(lines))
    return result.figures() | {f"agent_{k}": v for k, v in agent.figures().items()}
