"""`hindsight bench freshness`: read your writes (issue 26). How soon a turn written with `write_memory` is
returned by `GET /v1/recall`, under a steady write load, and what it costs the write path and the review.

The stack is the one `hindsight up` runs (bench/stack.py): private embedded PostgreSQL and Redis, a scheduler,
review workers, and the API with the outbox indexer inside it (the embedded Qdrant Edge shard is opened by
one process only), each a real process. Four measures, side by side in one run:

1. freshness: turns written at a steady `rate` over `scopes` scopes (sessions left open, so reviews come only
   from the 30-turn trigger), each a sentence with three rare words of its own; every `sample_every`-th turn is
   recalled by those words every `poll_s` from the moment its write returned, until a result's
   `source_turn_ids` holds it (any side: the lexical side finds it first) and until such a result has a
   dense cosine (`explain.dense`); a turn not found within `timeout_s` is a miss, and counts as an infinite
   latency in the percentiles;
2. `write_memory` over a raw XADD of the same payload (bench/ingest.py), on the stack's Redis;
3. review throughput with `HINDSIGHT_RECALL__UNREVIEWED` on against off: the same turns (full batches only)
   pushed at once into a fresh store, first push -> every turn reviewed, order alternating over the rounds.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import os
import random
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from bench.ingest import run_ingest_bench
from bench.report import write_section
from bench.review import E2E_TRIGGER, print_table, verdict
from bench.scaling import group_usage, warm_up
from bench.stack import READY_TIMEOUT_S, BenchStack, free_port, scratch_root
from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.logging import configure_logging
from pipeline.core.models import Turn
from pipeline.ingest.validation import utcnow
from pipeline.runtime.supervisor import Child, role_argv

TARGET_ANY_P95_S = 2.0  # write returned -> returned by recall
TARGET_DENSE_P95_S = 5.0  # write returned -> returned with a dense cosine
TARGET_INGEST_RATIO = 2.0  # write_memory ÷ raw XADD, p50
TARGET_REVIEW_RATIO = 0.90  # review turns/s with the feature on ÷ off

AGENT = "fresh-agent"
SESSION = "s1"  # one open session per scope: never ended, never idle during the run
UNREVIEWED = "HINDSIGHT_RECALL__UNREVIEWED"
API_ROLE = "indexer-api"  # named so that BenchStack stops it last, as the indexer it holds
# Batches of exactly the trigger, as under a steady stream: the throughput rounds push whole batches only.
STACK_ENV = {
    "HINDSIGHT_POLICY__BATCH_SIZE": str(E2E_TRIGGER),
    "HINDSIGHT_POLICY__MAX_BATCH": str(E2E_TRIGGER),
}
WARM_NOTES = (
    "I moved to Porto last year and I still miss the cold mornings by the river.",
    "My brother collects vinyl records and keeps them sorted by the colour of their sleeves.",
    "We usually cook lentil soup on rainy evenings and eat it with toasted rye bread.",
    "I started learning the cello when I turned thirty and practise before breakfast.",
)

# Rare words, one BM25 term each (tests/unit/test_bench_freshness.py checks no two share a stem and none
# is a stop word): three of them make a turn's own query. No time words (recall reads "may", "spring").
_WORD_LIST = """
    aardvark abacus accordion acorn albatross alcove almanac amethyst anchovy antler apricot archipelago
    armadillo artichoke asparagus avalanche axolotl badger bagpipe balsa bamboo banjo barnacle basalt bassoon
    beetroot begonia bellows bison blowtorch bobsled bonsai boomerang bramble brioche buckwheat bugle burlap
    cactus calliope camphor canoe caramel cardamom carnation cassava catamaran cauldron cedar chameleon
    chandelier chestnut chinchilla chisel cinnamon clarinet cobalt coconut cormorant crocus croquet cucumber
    cymbal daffodil dandelion dinghy dolphin dragonfly driftwood dulcimer eggplant elderberry emerald espresso
    falcon fennel ferret fiddle figurine flamingo flannel fossil foxglove gargoyle gazebo gecko geranium
    giraffe glacier gondola gooseberry granite grapefruit griddle guava gyroscope hammock harmonica harpoon
    hazelnut hedgehog heron hibiscus hourglass hyacinth iguana jackal jasmine jellyfish juniper kaleidoscope
    kayak kelp kettle kumquat ladle lantern lavender lemur licorice lobster loom lychee macaw magnolia
    mandolin marimba marmot marzipan meringue mistletoe molasses mongoose moose mosaic mulberry nectarine
    nutmeg oboe ocelot octopus okra origami ostrich otter oyster papaya parsnip peacock pelican penguin
    peppermint periscope persimmon pewter piccolo pistachio platypus pomegranate porcupine pretzel puffin
    pumpkin quail quartz quince quokka raccoon radish raspberry rhubarb saffron salamander sandalwood sardine
    saxophone scallop sextant shallot sitar skateboard sloth snorkel sorrel sparrow spinach squid starfish
    stingray sunflower tadpole tamarind tambourine tangerine tapioca telescope thimble thistle toboggan
    tortoise toucan trombone truffle tuba tulip turmeric turnip ukulele vanilla velvet vulture walnut walrus
    wasabi weasel wheelbarrow wombat xylophone yak zeppelin zucchini
"""
WORDS = tuple(_WORD_LIST.split())
# A user's own statements about their life: clean for the injection screen, content for the quality score.
# {A} is "a/an word", {a} the bare word; each template holds the three rare words of the turn once each.
TEMPLATES = (
    "I keep {A} next to the {b} on the shelf above my {c}.",
    "My sister gave me {A} and {B} after our trip to the {c} museum.",
    "Our neighbour grows {a} and {b} in a garden shaped like {C}.",
    "I painted {A} on the lid of the {b} box beside the {c} lamp.",
    "The bakery downstairs sells {a} cake with {b} and a hint of {c}.",
    "We found {A}, {B} and an old {c} in my grandfather's attic.",
    "My favourite mug shows {A} riding {B} across {C}.",
    "I learned to sketch {A} holding {B} while sitting under {C}.",
)


@dataclass(frozen=True)
class Phrase:
    content: str
    words: tuple[str, str, str]

    @property
    def query(self) -> str:
        """What a user would type to find this turn: its own rare words."""
        return " ".join(self.words)


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def phrases(n: int, seed: int = 26) -> list[Phrase]:
    """n sentences, each with three rare words no other of them has together (the same n and seed, the same
    sentences)."""
    combinations = math.comb(len(WORDS), 3)
    if n > combinations // 2:
        raise ValueError(f"at most {combinations // 2:,} distinct phrases, asked for {n:,}")
    rng = random.Random(seed)
    seen: set[frozenset[str]] = set()
    out = []
    for i in range(n):
        while True:
            words = tuple(rng.sample(WORDS, 3))
            if frozenset(words) not in seen:
                break
        seen.add(frozenset(words))
        a, b, c = words
        template = TEMPLATES[i % len(TEMPLATES)]
        content = template.format(a=a, b=b, c=c, A=_article(a), B=_article(b), C=_article(c))
        out.append(Phrase(content, (a, b, c)))
    return out


def due_at(i: int, rate: float) -> float:
    """Seconds after the start at which turn i of a steady `rate` turns/s is written."""
    return i / rate


def scope_user(i: int, scopes: int) -> str:
    """The user (scope) of turn i: round robin, so each scope gets a turn every `scopes / rate` seconds."""
    return f"u{i % scopes}"


def is_sampled(i: int, every: int) -> bool:
    return i % every == 0


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (as bench/ingest.py); NaN of no samples. A miss is passed as infinity."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def every(n: int) -> str:
    """ "Every turn", "Every 2nd turn", "Every 10th turn"."""
    if n == 1:
        return "Every turn"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"Every {n}{suffix} turn"


def fmt_s(x: float) -> str:
    return "—" if math.isnan(x) else ("never" if math.isinf(x) else f"{x:.2f} s")


# -- the freshness phase --------------------------------------------------------------------------------------


@dataclass
class Sample:
    """One sampled turn, polled until it is found by both sides or its time is up."""

    index: int
    turn_id: str
    user_id: str
    query: str
    written: float  # monotonic: when its write call returned
    any_s: float | None = None  # write returned -> the first response that held it
    dense_s: float | None = None  # ... -> the first response that held it with a dense cosine
    unreviewed_at_find: bool | None = None  # its `reviewed` flag in that first response
    # The resolution of each latency: from the response (or the write) before the one that found it.
    any_gap_s: float | None = None
    dense_gap_s: float | None = None
    polls: int = 0
    last_seen: float = 0.0  # monotonic: the last response (the write, before any)

    def __post_init__(self) -> None:
        self.last_seen = self.last_seen or self.written

    @property
    def done(self) -> bool:
        return self.any_s is not None and self.dense_s is not None

    def record(self, found: bool, dense: bool, reviewed: bool, now: float) -> None:
        """One recall response, received at `now`."""
        self.polls += 1
        if found and self.any_s is None:
            self.any_s, self.any_gap_s = now - self.written, now - self.last_seen
            self.unreviewed_at_find = not reviewed
        if dense and self.dense_s is None:
            self.dense_s, self.dense_gap_s = now - self.written, now - self.last_seen
        self.last_seen = now


def read_hit(body: dict[str, Any], turn_id: str) -> tuple[bool, bool, bool]:
    """(found, with a dense cosine, reviewed) of a turn in a recall response."""
    found = dense = reviewed = False
    for r in body.get("results", []):
        if turn_id in r.get("source_turn_ids", ()):
            found = True
            reviewed = reviewed or bool(r.get("reviewed", True))
            if (r.get("explain") or {}).get("dense") is not None:
                dense = True
    return found, dense, reviewed


class Pollers:
    """`threads` HTTP clients sharing the sampled turns, at most `max_rps` recalls a second in all, so that on a
    small machine the pollers do not take the CPU the measured pipeline needs.

    A turn not found yet is recalled `poll_s` after its previous response (first at once), and goes first when
    several are due: its latency is the one with the tighter target. Once found, it is recalled every
    `dense_poll_s` until a response has its dense cosine. When the cap binds, polls space out: each latency's
    resolution (`Sample.any_gap_s`, `dense_gap_s`) says by how much."""

    def __init__(
        self,
        base_url: str,
        *,
        threads: int,
        poll_s: float,
        dense_poll_s: float,
        timeout_s: float,
        max_rps: float,
    ) -> None:
        self.base_url = base_url
        self.poll_s = poll_s
        self.dense_poll_s = dense_poll_s
        self.timeout_s = timeout_s
        self.min_gap = 1.0 / max_rps
        # Two queues of (due, seq, sample): not found yet (served first), and found, waiting for the dense side.
        self._unfound: list[tuple[float, int, Sample]] = []
        self._found: list[tuple[float, int, Sample]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._next_slot = 0.0
        self._open = 0  # samples not yet done nor timed out
        self._closing = False
        self.recalls = 0
        self.errors = 0
        self.last_error = ""
        self._threads = [
            threading.Thread(target=self._run, name=f"poller-{i}", daemon=True) for i in range(threads)
        ]
        for t in self._threads:
            t.start()

    def add(self, sample: Sample) -> None:
        with self._cond:
            self._open += 1
            heapq.heappush(self._unfound, (sample.written, next(self._seq), sample))
            self._cond.notify()

    def wait(self, timeout: float) -> bool:
        """Until every sample is done or timed out; then the threads stop. False if `timeout` came first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._open and time.monotonic() < deadline:
                self._cond.wait(0.2)
            self._closing = True
            self._cond.notify_all()
            settled = self._open == 0
        for t in self._threads:
            t.join(15.0)
        return settled

    def _take(self) -> Sample | None:
        with self._cond:
            while True:
                if self._closing:
                    return None
                now = time.monotonic()
                queue = next((q for q in (self._unfound, self._found) if q and q[0][0] <= now), None)
                if queue is not None:
                    sample = heapq.heappop(queue)[2]
                    slot = max(now, self._next_slot)
                    self._next_slot = slot + self.min_gap
                    break
                soonest = min((q[0][0] for q in (self._unfound, self._found) if q), default=now + 0.05)
                self._cond.wait(min(0.05, max(soonest - now, 0.001)))
        if slot > now:
            time.sleep(slot - now)
        return sample

    def _run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=10.0) as http:
            while (sample := self._take()) is not None:
                try:
                    r = http.get(
                        "/v1/recall",
                        params={"q": sample.query, "agent_id": AGENT, "user_id": sample.user_id, "k": 10},
                    )
                    r.raise_for_status()
                    hit = read_hit(r.json(), sample.turn_id)
                except (httpx.HTTPError, ValueError) as exc:
                    hit = None
                    with self._cond:
                        self.errors += 1
                        self.last_error = f"{type(exc).__name__}: {exc}"[:300]
                now = time.monotonic()
                if hit is not None:
                    sample.record(*hit, now)
                self._settle(sample, now)

    def _settle(self, sample: Sample, now: float) -> None:
        with self._cond:
            self.recalls += 1
            if sample.done or now - sample.written > self.timeout_s:
                self._open -= 1
                self._cond.notify_all()
                return
            if sample.any_s is None:
                heapq.heappush(self._unfound, (now + self.poll_s, next(self._seq), sample))
            else:
                heapq.heappush(self._found, (now + self.dense_poll_s, next(self._seq), sample))
            self._cond.notify()


@dataclass
class Freshness:
    rate: float
    scopes: int
    seconds: float
    sample_every: int
    poll_s: float
    timeout_s: float
    dense_poll_s: float = 0.5
    written: int = 0
    write_elapsed_s: float = 0.0  # first write -> last write returned
    behind_max_s: float = 0.0  # the writer's worst lag behind its schedule
    outbox_peak: int = 0  # index outbox rows waiting, the most seen (read once a second during the writes)
    write_us: list[float] = field(default_factory=list)  # every write_memory call under the load
    samples: list[Sample] = field(default_factory=list)
    recalls: int = 0
    recall_errors: int = 0
    last_error: str = ""
    poll_elapsed_s: float = 0.0  # first write -> the last sample settled

    def _latencies(self, dense: bool) -> list[float]:
        out = []
        for s in self.samples:
            v = s.dense_s if dense else s.any_s
            out.append(math.inf if v is None else v)
        return out

    def p(self, q: float, *, dense: bool = False) -> float:
        return percentile(self._latencies(dense), q)

    def found(self, *, dense: bool = False) -> int:
        return sum(1 for v in self._latencies(dense) if not math.isinf(v))

    def missed(self, *, dense: bool = False) -> int:
        return len(self.samples) - self.found(dense=dense)

    @property
    def found_unreviewed(self) -> int:
        return sum(1 for s in self.samples if s.unreviewed_at_find is True)

    @property
    def found_reviewed(self) -> int:
        return sum(1 for s in self.samples if s.unreviewed_at_find is False)

    @property
    def recalls_per_s(self) -> float:
        return self.recalls / self.poll_elapsed_s if self.poll_elapsed_s else 0.0

    def by_part(self, parts: int = 3) -> list[tuple[str, Freshness]]:
        """The samples of each successive part of the writes (first third, ...): whether a side keeps up or
        falls further behind as the run goes on."""
        out = []
        for k in range(parts):
            lo, hi = self.written * k / parts, self.written * (k + 1) / parts
            part = Freshness(
                self.rate, self.scopes, self.seconds, self.sample_every, self.poll_s, self.timeout_s
            )
            part.samples = [s for s in self.samples if lo <= s.index < hi]
            out.append((f"{self.seconds * k / parts:.0f}–{self.seconds * (k + 1) / parts:.0f} s", part))
        return out

    def resolution(self, q: float, *, dense: bool = False) -> float:
        """Percentile of the time between the response that found a turn and the one before it."""
        gaps = [s.dense_gap_s if dense else s.any_gap_s for s in self.samples]
        return percentile([g for g in gaps if g is not None], q)

    @property
    def achieved_rate(self) -> float:
        return (self.written - 1) / self.write_elapsed_s if self.write_elapsed_s and self.written > 1 else 0.0


def run_freshness(
    stack: BenchStack,
    settings: Settings,
    base_url: str,
    f: Freshness,
    *,
    pollers: int,
    max_rps: float,
    run: str,
) -> None:
    """Write `rate × seconds` turns on schedule with the Python client, polling the sampled ones."""
    total = max(1, round(f.rate * f.seconds))
    texts = phrases(total, seed=26)
    client = MemoryClient(settings)
    poll = Pollers(
        base_url,
        threads=pollers,
        poll_s=f.poll_s,
        dense_poll_s=f.dense_poll_s,
        timeout_s=f.timeout_s,
        max_rps=max_rps,
    )
    try:
        t0 = time.monotonic()
        for i, phrase in enumerate(texts):
            delay = t0 + due_at(i, f.rate) - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                f.behind_max_s = max(f.behind_max_s, -delay)
            user, turn_id = scope_user(i, f.scopes), f"fresh-{run}-{i}"
            started = time.perf_counter()
            client.write_memory(AGENT, user, SESSION, "user", phrase.content, turn_id=turn_id)
            returned = time.monotonic()
            f.write_us.append((time.perf_counter() - started) * 1e6)
            if is_sampled(i, f.sample_every):
                sample = Sample(i, turn_id, user, phrase.query, returned)
                f.samples.append(sample)
                poll.add(sample)
            if i % max(1, round(f.rate)) == 0:  # once a second
                stack.check_alive()
                f.outbox_peak = max(f.outbox_peak, stack.outbox())
        f.written = total
        f.write_elapsed_s = time.monotonic() - t0
        poll.wait(f.timeout_s + 30.0)
        f.poll_elapsed_s = time.monotonic() - t0
        f.recalls, f.recall_errors, f.last_error = poll.recalls, poll.errors, poll.last_error
    finally:
        poll.wait(0.0)  # stops the pollers if the writes failed (a no-op once they have stopped)
        client.close()
    stack.check_alive()


# -- starting the roles with the API ----------------------------------------------------------------------------


def start_pipeline(stack: BenchStack, workers: int) -> str:
    """A scheduler, `workers` review workers and the API with the indexer inside it; returns the API's URL once
    it answers a recall (its model loaded)."""
    port = free_port()
    logs = stack.root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stack.data_dir.mkdir(parents=True, exist_ok=True)
    env = {**stack.env(), "HINDSIGHT_API_HOST": "127.0.0.1", "HINDSIGHT_API_PORT": str(port)}
    api = Child(
        API_ROLE,
        role_argv("api", "--indexer"),
        env,
        logs / f"{API_ROLE}-{int(time.time() * 1000)}.log",
    )
    api.start()  # first: it loads its model while the workers load theirs
    stack.roles[API_ROLE] = api
    stack.start_roles(workers, indexer=False)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    with httpx.Client(base_url=url, timeout=60.0) as http:
        while True:
            stack.check_alive()
            with contextlib.suppress(httpx.HTTPError):
                ready = http.get("/readyz").status_code == 200
                warm_recall = {"q": "warm up", "agent_id": AGENT, "user_id": "warm"}
                if ready and http.get("/v1/recall", params=warm_recall).status_code == 200:
                    return url
            if time.monotonic() > deadline:
                raise RuntimeError(f"the API was not ready after {READY_TIMEOUT_S:.0f}s; see {api.log_path}")
            time.sleep(0.25)


def warm(stack: BenchStack, settings: Settings, workers: int) -> None:
    """Each worker's first review (scikit-learn imported, the model run cold) before anything is measured."""
    warm_up(stack, settings, workers, WARM_NOTES)


# -- review throughput, on against off --------------------------------------------------------------------------


@dataclass
class Round:
    unreviewed: bool
    round: int
    turns: int
    elapsed_s: float = 0.0  # first push -> every turn reviewed
    indexed_s: float = 0.0  # first push -> the outbox empty
    cpu_s: dict[str, float] = field(default_factory=dict)  # role group -> CPU seconds, push -> all reviewed
    load: tuple[float, float] = (0.0, 0.0)

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.elapsed_s if self.elapsed_s else 0.0


def review_turns(scopes: int, per_scope: int) -> list[Turn]:
    """The throughput rounds' turns: `per_scope` each in `scopes` fresh scopes, in one open session each."""
    now = utcnow()
    texts = phrases(scopes * per_scope, seed=2601)
    return [
        Turn(
            f"rev-{i}",
            AGENT,
            f"rev-u{i % scopes}",
            SESSION,
            "user",
            p.content,
            now,
            "user",
            {},
        )
        for i, p in enumerate(texts)
    ]


def run_round(
    stack: BenchStack,
    settings: Settings,
    turns: Sequence[Turn],
    *,
    unreviewed: bool,
    rnd: int,
    workers: int,
) -> Round:
    stack.env_overrides[UNREVIEWED] = "true" if unreviewed else "false"
    stack.reset()
    result = Round(unreviewed, rnd, len(turns))
    start_pipeline(stack, workers)
    try:
        warm(stack, settings, workers)
        before = stack.progress()["reviewed"]
        total = before + len(turns)
        load0 = os.getloadavg()[0]
        usage0 = stack.usage()
        result.elapsed_s = stack.push_and_review(settings, turns, total)
        result.cpu_s = group_usage(usage0, stack.usage())
        result.load = (load0, os.getloadavg()[0])
        result.indexed_s = result.elapsed_s + stack.wait_indexed(max(600.0, len(turns) / 2))
        progress = stack.progress()
        if progress["episodes"] != total or progress["reviewed"] != total:
            raise RuntimeError(f"expected {total} episodes, all reviewed; got {progress}")
    finally:
        stack.stop_roles()
    return result


# -- role logs ------------------------------------------------------------------------------------------------

_PROBLEM = re.compile(r'"level":\s*"(error|critical|exception)"|Traceback \(most recent call last\)|\bERROR/')


def log_problems(stack: BenchStack) -> dict[str, int]:
    """Lines that report an error, per log file of the run (the roles' logs outlive the roles)."""
    out: dict[str, int] = {}
    for path in sorted((stack.root / "logs").glob("*.log")):
        n = sum(1 for line in path.read_text(errors="replace").splitlines() if _PROBLEM.search(line))
        if n:
            out[path.name] = n
    return out


# -- the write-side screen: what it costs the scheduler, and what it holds back, on every evaluation set ---------


@dataclass(frozen=True)
class ScreenCost:
    name: str
    turns: int
    turns_per_s: float  # injection.assess + decide, one core
    held: int  # not "clean": waits for its review before it is recallable


def screen_costs(locomo: Path | None = None) -> list[ScreenCost]:
    """The scheduler's injection screen (the review's rules, run as each turn is stored) over the turns of
    each evaluation set present: turns per second on one core and how many it holds back until review. A
    held turn is not lost, only not recallable before its review (which quarantines only above the screen's
    upper threshold, or on the LLM's word)."""
    from bench.quality import builtin_sets, load_set
    from pipeline.review import injection

    thresholds = injection.InjectionThresholds()
    out: list[ScreenCost] = []
    for eval_set in builtin_sets(locomo):
        if not eval_set.path.exists():
            continue
        _, turns, _, _ = load_set(eval_set.path)
        texts = [(t.text, t.role, "agent" if t.role == "assistant" else "user") for t in turns]
        t0 = time.perf_counter()
        held = sum(
            injection.decide(injection.assess(text, role=role, source=source), thresholds) != "clean"
            for text, role, source in texts
        )
        elapsed = time.perf_counter() - t0
        out.append(ScreenCost(eval_set.name, len(texts), len(texts) / elapsed if elapsed else math.inf, held))
    return out


# -- the command ------------------------------------------------------------------------------------------------


@dataclass
class FreshnessResult:
    freshness: Freshness
    ingest: dict[str, float]
    rounds: list[Round]
    workers: int
    review_scopes: int
    review_per_scope: int
    embedded: bool
    backend: str
    max_rps: float = 0.0
    problems: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    screen: list[ScreenCost] = field(default_factory=list)

    def side(self, unreviewed: bool) -> list[Round]:
        return [r for r in self.rounds if r.unreviewed == unreviewed]

    def tps(self, unreviewed: bool) -> float:
        runs = self.side(unreviewed)
        elapsed = sum(r.elapsed_s for r in runs)
        return sum(r.turns for r in runs) / elapsed if elapsed else 0.0

    def cpu_ms_per_turn(self, unreviewed: bool, group: str | None = None) -> float:
        runs = self.side(unreviewed)
        turns = sum(r.turns for r in runs)
        cpu = sum(v for r in runs for k, v in r.cpu_s.items() if group is None or k == group)
        return cpu * 1000 / turns if turns else 0.0

    @property
    def review_ratio(self) -> float:
        off = self.tps(False)
        return self.tps(True) / off if off else math.nan


def figures(r: FreshnessResult) -> dict[str, float]:
    """Flat figures for `bench all`."""
    f = r.freshness
    return {
        "samples": float(len(f.samples)),
        "any_p50_s": f.p(0.5),
        "any_p95_s": f.p(0.95),
        "any_max_s": f.p(1.0),
        "dense_p50_s": f.p(0.5, dense=True),
        "dense_p95_s": f.p(0.95, dense=True),
        "dense_max_s": f.p(1.0, dense=True),
        "found": float(f.found()),
        "missed": float(f.missed()),
        "dense_missed": float(f.missed(dense=True)),
        "found_unreviewed": float(f.found_unreviewed),
        "found_reviewed": float(f.found_reviewed),
        "outbox_peak": float(f.outbox_peak),
        "recalls_per_s": f.recalls_per_s,
        "any_resolution_p50_s": f.resolution(0.5),
        "dense_resolution_p50_s": f.resolution(0.5, dense=True),
        "write_rate": f.achieved_rate,
        "ingest_ratio_p50": r.ingest["ratio_p50"],
        "write_p50_us": r.ingest["write_p50_us"],
        "xadd_p50_us": r.ingest["xadd_p50_us"],
        "review_tps_on": r.tps(True),
        "review_tps_off": r.tps(False),
        "review_ratio": r.review_ratio,
    }


def result_lines(r: FreshnessResult) -> list[str]:
    f = r.freshness
    any_p95, dense_p95 = f.p(0.95), f.p(0.95, dense=True)
    ratio, review = r.ingest["ratio_p50"], r.review_ratio
    rounds = len(r.rounds) // 2
    lines = [
        "## Read your writes: `hindsight bench freshness`",
        "",
        f"A steady **{f.rate:g} turns/s** written with `write_memory` for {f.seconds:g} s over {f.scopes} scopes "
        "(one open session each: reviews come only from the 30-turn trigger), each turn a sentence with three "
        f"rare words of its own, through private "
        + ("embedded PostgreSQL and Redis" if r.embedded else "the given PostgreSQL and Redis")
        + f", a scheduler, {r.workers} review worker(s) (solo pool) and the API with the outbox indexer inside it "
        f"(in-process Qdrant Edge), every process embedding with one {r.backend} thread. {every(f.sample_every)} "
        f"({len(f.samples)} in all) is recalled by its three words (`GET /v1/recall`, "
        f"k=10) every {f.poll_s * 1000:.0f} ms from the moment its write returned until a result's "
        f"`source_turn_ids` holds it, then every {f.dense_poll_s * 1000:.0f} ms until it comes with a dense "
        f"cosine (`explain.dense`); a turn not found within {f.timeout_s:g} s counts as never. The pollers "
        f"make at most {r.max_rps:g} recalls a second in all (the machine runs the whole stack), turns not yet "
        "found first; the resolution column is the time from the response before the one that found a turn "
        "to that one (the latency is known to within it).",
        "",
        "| measure | figure | target | |",
        "|---|---:|---:|---|",
        f"| write returned → returned by recall, p95 | **{fmt_s(any_p95)}** | ≤ {TARGET_ANY_P95_S:g} s | "
        f"{verdict(any_p95 <= TARGET_ANY_P95_S)} |",
        f"| write returned → returned with a dense cosine, p95 | **{fmt_s(dense_p95)}** | "
        f"≤ {TARGET_DENSE_P95_S:g} s | {verdict(dense_p95 <= TARGET_DENSE_P95_S)} |",
        f"| `write_memory` ÷ raw XADD, p50 | **{ratio:.2f}** | ≤ {TARGET_INGEST_RATIO} | "
        f"{verdict(ratio <= TARGET_INGEST_RATIO)} |",
        f"| review turns/s, read your writes on ÷ off | **{review:.2f}** | ≥ {TARGET_REVIEW_RATIO} | "
        f"{verdict(review >= TARGET_REVIEW_RATIO)} |",
        "",
        "### Freshness",
        "",
        "| side | found | never | p50 | p95 | max | resolution p50 / p95 |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| any (the first response that held the turn) | {f.found()} | {f.missed()} | {fmt_s(f.p(0.5))} | "
        f"{fmt_s(any_p95)} | {fmt_s(f.p(1.0))} | {fmt_s(f.resolution(0.5))} / {fmt_s(f.resolution(0.95))} |",
        f"| dense (… with `explain.dense` set) | {f.found(dense=True)} | {f.missed(dense=True)} | "
        f"{fmt_s(f.p(0.5, dense=True))} | {fmt_s(dense_p95)} | {fmt_s(f.p(1.0, dense=True))} | "
        f"{fmt_s(f.resolution(0.5, dense=True))} / {fmt_s(f.resolution(0.95, dense=True))} |",
        "",
        "| written at | turns | any p50 | any p95 | dense p50 | dense p95 |",
        "|---|---:|---:|---:|---:|---:|",
        *[
            f"| {label} | {len(part.samples)} | {fmt_s(part.p(0.5))} | {fmt_s(part.p(0.95))} | "
            f"{fmt_s(part.p(0.5, dense=True))} | {fmt_s(part.p(0.95, dense=True))} |"
            for label, part in f.by_part()
        ],
        "",
        f'Found while still unreviewed (`"reviewed": false`): **{f.found_unreviewed}**; already reviewed: '
        f"{f.found_reviewed}. Written {f.written:,} turns at {f.achieved_rate:.1f} turns/s (the writer at most "
        f"{f.behind_max_s * 1000:.0f} ms behind its schedule; `write_memory` in the writer, whose process also "
        f"runs the pollers, p50 "
        f"{percentile(f.write_us, 0.5):.0f} µs, p99 {percentile(f.write_us, 0.99):.0f} µs). Pollers: "
        f"{f.recalls:,} recalls, {f.recalls_per_s:.1f}/s, {f.recall_errors} errors. The index outbox held at "
        f"most {f.outbox_peak:,} rows during the writes (read once a second).",
        "",
        "### `write_memory` against a raw XADD (bench/ingest.py, on the stack's Redis, after the writes)",
        "",
        "| measure | p50 (µs) | p99 (µs) |",
        "|---|---:|---:|",
        f"| `write_memory` (validate + encode + XADD) | {r.ingest['write_p50_us']:.0f} | "
        f"{r.ingest['write_p99_us']:.0f} |",
        f"| raw `XADD` of the same payload | {r.ingest['xadd_p50_us']:.0f} | {r.ingest['xadd_p99_us']:.0f} |",
        f"| **ratio** | **{r.ingest['ratio_p50']:.2f}** | {r.ingest['ratio_p99']:.2f} |",
        "",
        "### Review throughput, read your writes on against off",
        "",
        f"{r.review_scopes * r.review_per_scope:,} turns ({r.review_scopes} fresh scopes × {r.review_per_scope}, "
        f"whole batches of {E2E_TRIGGER}) pushed at once; first push → every turn reviewed, after a warm-up "
        f"review per worker; the roles restarted with `{UNREVIEWED}` set for each run, order alternating over "
        f"{rounds} round(s). CPU seconds per process from /proc over the same span.",
        "",
        "| run | read your writes | reviewed in | turns/s | indexed in | CPU ms / turn, all processes | "
        "load (start → end) |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for i, run in enumerate(r.rounds):
        lines.append(
            f"| {i + 1} | {'on' if run.unreviewed else 'off'} | {run.elapsed_s:.1f} s | {run.turns_per_s:.1f} | "
            f"{run.indexed_s:.1f} s | {sum(run.cpu_s.values()) * 1000 / run.turns:.2f} | "
            f"{run.load[0]:.1f} → {run.load[1]:.1f} |"
        )
    lines += [
        "",
        "| measure | on | off | on ÷ off |",
        "|---|---:|---:|---:|",
        f"| review turns/s (target ≥ {TARGET_REVIEW_RATIO}) | {r.tps(True):.1f} | {r.tps(False):.1f} | "
        f"**{review:.2f}** {verdict(review >= TARGET_REVIEW_RATIO)} |",
    ]
    for group, label in (
        ("worker", "worker"),
        ("scheduler", "scheduler"),
        ("indexer", "API + indexer"),
        ("postgres", "PostgreSQL"),
        (None, "all processes"),
    ):
        on, off = r.cpu_ms_per_turn(True, group), r.cpu_ms_per_turn(False, group)
        lines.append(
            f"| CPU ms per turn, {label} | {on:.2f} | {off:.2f} | {on / off if off else math.nan:.2f} |"
        )
    if r.screen:
        lines += [
            "",
            "### The write-side injection screen, on every evaluation set",
            "",
            "The scheduler runs the review's injection rules on each turn as it stores it (one core, in "
            "process, after the run); a turn it does not find clean waits for its review before it is "
            "recallable (held back, not lost).",
            "",
            "| set | turns | turns/s, one core | µs / turn | held until review |",
            "|---|---:|---:|---:|---:|",
            *[
                f"| {c.name} | {c.turns:,} | {c.turns_per_s:,.0f} | {1e6 / c.turns_per_s:.0f} | "
                f"{c.held:,} ({c.held / c.turns:.1%}) |"
                for c in r.screen
            ],
        ]
    lines += [
        "",
        f"The machine has {os.cpu_count()} cores, shared with other work. Errors in the role logs: "
        + (", ".join(f"{k} × {v}" for k, v in r.problems.items()) if r.problems else "none")
        + f". Whole run: {r.elapsed_s / 60:.1f} min.",
    ]
    return lines


def run_freshness_bench(
    settings: Settings,
    *,
    rate: float = 100.0,
    scopes: int = 50,
    seconds: float = 60.0,
    sample_every: int = 40,
    poll_s: float = 0.1,
    dense_poll_s: float = 0.5,
    timeout_s: float = 30.0,
    pollers: int = 3,
    max_rps: float = 30.0,
    workers: int = 1,
    review_scopes: int = 50,
    review_per_scope: int = 60,
    rounds: int = 2,
    ingest_n: int = 5000,
    ingest_rounds: int = 3,
    database_url: str | None = None,
    redis_url: str | None = None,
    backend: str | None = None,
    locomo: Path | None = None,
    write: bool,
    console: Console,
) -> FreshnessResult:
    if review_per_scope % E2E_TRIGGER:
        raise ValueError(
            f"turns per scope of the throughput rounds must be a multiple of {E2E_TRIGGER} (whole batches: a "
            f"shorter tail would wait for the session's idle review), got {review_per_scope}"
        )
    configure_logging("WARNING", settings.log_json)
    started = time.monotonic()
    backend = backend or settings.embedding.backend
    env = {**STACK_ENV, "HINDSIGHT_EMBEDDING__BACKEND": backend, UNREVIEWED: "true"}
    stack = BenchStack(scratch_root("hindsight-freshness-"), database_url, redis_url, env)
    f = Freshness(rate, scopes, seconds, sample_every, poll_s, timeout_s, dense_poll_s)
    rounds_done: list[Round] = []
    try:
        console.print("starting the servers ...")
        stack.start_servers(settings)
        stack.reset()
        # The client writes to the stack's Redis itself (an API key would send its writes over HTTP instead).
        on_stack = settings.model_copy(update={"redis_url": stack.broker_url, "api_key": None})
        console.rule(f"[bold]bench freshness: {rate:g} turns/s over {scopes} scopes for {seconds:g} s")
        url = start_pipeline(stack, workers)
        warm(stack, on_stack, workers)
        run_freshness(stack, on_stack, url, f, pollers=pollers, max_rps=max_rps, run=uuid.uuid4().hex[:6])
        console.print(
            f"{len(f.samples)} turns sampled: found {f.found()} (p95 {fmt_s(f.p(0.95))}), with a dense cosine "
            f"{f.found(dense=True)} (p95 {fmt_s(f.p(0.95, dense=True))}); {f.recalls:,} recalls "
            f"({f.recalls_per_s:.1f}/s, {f.recall_errors} errors{': ' + f.last_error if f.last_error else ''})",
            highlight=False,
        )
        console.rule("[bold]bench freshness: write_memory ÷ raw XADD")
        ingest = run_ingest_bench(on_stack, n=ingest_n, rounds=ingest_rounds, write=False, console=console)
        stack.stop_roles()
        review = review_turns(review_scopes, review_per_scope)
        for rnd in range(rounds):
            for unreviewed in (True, False) if rnd % 2 == 0 else (False, True):
                side = "on" if unreviewed else "off"
                console.rule(
                    f"[bold]bench freshness: review throughput, round {rnd + 1}, read your writes {side}"
                )
                run = run_round(stack, on_stack, review, unreviewed=unreviewed, rnd=rnd, workers=workers)
                console.print(
                    f"{run.turns:,} turns reviewed in {run.elapsed_s:.1f} s = {run.turns_per_s:.1f} turns/s; "
                    f"load {run.load[0]:.1f} → {run.load[1]:.1f}",
                    highlight=False,
                )
                rounds_done.append(run)
    except BaseException:
        stack.close()
        console.print(f"[red]failed; logs kept under {stack.root}/logs[/red]")
        raise
    result = FreshnessResult(
        f,
        ingest,
        rounds_done,
        workers,
        review_scopes,
        review_per_scope,
        stack.embedded,
        backend,
        max_rps=max_rps,
        problems=log_problems(stack),
    )
    stack.close(remove=not result.problems)
    if result.problems:
        console.print(f"[yellow]errors in the role logs (kept under {stack.root}/logs)[/yellow]")
    console.rule("[bold]bench freshness: the write-side screen on every evaluation set")
    result.screen = screen_costs(locomo)
    result.elapsed_s = time.monotonic() - started
    lines = result_lines(result)
    print_table(console, lines)
    if write:
        write_section("freshness", "\n".join(lines))
        console.print("wrote BENCHMARKS.md (bench:freshness)")
    return result
