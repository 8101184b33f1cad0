"""`hindsight bench updates` (issue 39): does the newer statement come back first, and are look-alikes left alone?

The labelled set (bench/sets/updates.py, bench/data/sets/updates.json.gz) holds update pairs (an older and a
newer statement of the same subject with another value) and look-alike pairs (two statements that are both
true: another holder, another project, a question, an assistant's suggestion, tea *and* coffee), in
conversations of their own with filler around them, English, Chinese and mixed, user↔assistant and friends.
Every conversation goes through the real pipeline (scheduler, Celery worker, indexer) into a disposable
database; then each pair's question is asked of recall:

- current-first: the first hit holding a newer statement ranks above the first holding an older one (an
  older one not returned at all counts as current-first, a newer one not returned does not);
- current top-1: the first hit holds the newer statement;
- false supersessions: look-alike pairs review linked (either way round), over all look-alike pairs;
- linked: update pairs review linked, over all update pairs (what the recall-time rules did not need to do).

Beside the product, on the same turns and questions: BM25 alone; the product without update detection (its
links ignored, no recall-time rules: `RecallTuning.updates` off); and the naive reorder that puts the later of
two look-alike hits (cosine >= 0.8) first. The dev half is what the rules were written against; the test
half was not read while writing them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from sqlalchemy import text

from bench.locomo import AGENT, bm25_floor, prepare
from bench.locomo_data import LocomoTurn, Question
from bench.report import machine, write_section
from bench.review import CACHE_DIR, check_disposable
from bench.sets.common import SETS_DIR
from pipeline.core.config import Settings
from pipeline.recall.hybrid import recall
from pipeline.recall.tuning import configured

PATH = SETS_DIR / "updates.json.gz"
DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_updates"
REDIS_URL = "redis://127.0.0.1:6379/6"  # its own db: the ingest flushes it, and bench quality uses 2
K = 10
LOOKALIKE_COSINE = 0.8  # the naive reorder's "look-alike": two hits this close


@dataclass(frozen=True, slots=True)
class Pair:
    pair_id: str
    conversation: str
    split: str
    label: str  # update | lookalike
    lang: str
    shape: str
    kind: str  # value_kind for updates, lookalike_kind for look-alikes
    rule_table: bool
    old: frozenset[str]  # bench turn ids
    new: frozenset[str]
    question: str
    evidence: frozenset[str]


@dataclass
class Counts:
    n: int = 0
    current_first: int = 0
    top1: int = 0
    linked: int = 0
    found: int = 0  # the newer statement among the k hits at all: the ceiling of any reordering of them

    def add(self, other: Counts) -> None:
        self.n += other.n
        self.current_first += other.current_first
        self.top1 += other.top1
        self.linked += other.linked
        self.found += other.found


@dataclass
class Result:
    rows: dict[str, dict[str, Counts]] = field(default_factory=dict)  # ranker -> group -> counts
    false_links: dict[str, list[int]] = field(default_factory=dict)  # half -> [linked, look-alike pairs]
    # ranker -> half -> [both in the top k, pairs, the true statement above the look-alike]
    lookalike_both: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    stray_links: int = 0  # links between turns of no labelled pair
    review_ms: float = 0.0  # wall time of every review of the ingest
    detect_ms: float = 0.0  # of which update detection (review timings' "updates" stage)
    reviews: int = 0
    samples: list[str] = field(default_factory=list)
    ingest_s: float = 0.0
    turns: int = 0
    conversations: int = 0


def load(path: Path = PATH) -> tuple[bytes, list[dict[str, Any]]]:
    raw = path.read_bytes()
    return raw, json.loads(gzip.decompress(raw))


def to_turns(conversations: Sequence[dict[str, Any]]) -> tuple[list[LocomoTurn], dict[str, str]]:
    """The set's turns as the LoCoMo-shaped turns the ingest takes, and set turn id -> bench turn id."""
    turns: list[LocomoTurn] = []
    ids: dict[str, str] = {}
    for conv in conversations:
        sessions: dict[str, int] = {}
        counts: dict[int, int] = {}
        for t in conv["turns"]:
            session = sessions.setdefault(t["session_id"], len(sessions) + 1)
            counts[session] = counts.get(session, 0) + 1
            turn = LocomoTurn(
                conversation=conv["conversation_id"],
                dia_id=f"D{session}:{counts[session]}",
                session=session,
                speaker=t["speaker"],
                text=t["content"],
                caption=None,
                ts=datetime.fromisoformat(t["ts"]),
                role=t["role"],
            )
            turns.append(turn)
            ids[t["turn_id"]] = turn.turn_id
    return turns, ids


def pairs_of(conversations: Sequence[dict[str, Any]], ids: dict[str, str]) -> list[Pair]:
    out = []
    for conv in conversations:
        for p in conv["pairs"]:
            out.append(
                Pair(
                    pair_id=p["pair_id"],
                    conversation=conv["conversation_id"],
                    split=conv["split"],
                    label=p["label"],
                    lang=p["lang"],
                    shape=conv["shape"],
                    kind=(p.get("lookalike_kind") if p["label"] == "lookalike" else p.get("value_kind"))
                    or "",
                    rule_table=bool(p.get("rule_table")),
                    old=frozenset(ids[t] for t in p["old_turns"]),
                    new=frozenset(ids[t] for t in p["new_turns"]),
                    question=p["question"],
                    evidence=frozenset(ids[t] for t in p.get("evidence") or p["new_turns"]),
                )
            )
    return out


Ranked = list[tuple[tuple[str, ...], str]]  # (source turn ids, text) per hit, best first
Ranker = Callable[[Pair], Ranked]


def first(ranked: Ranked, turns: frozenset[str]) -> int | None:
    return next((i for i, (ids, _) in enumerate(ranked) if turns.intersection(ids)), None)


def judge(ranked: Ranked, pair: Pair) -> Counts:
    new, old = first(ranked, pair.new), first(ranked, pair.old)
    return Counts(
        n=1,
        # One hit holding both is the newer wording with the older merged into it (dedup keeps the newer).
        current_first=int(new is not None and (old is None or new <= old)),
        top1=int(new == 0),
        found=int(new is not None),
    )


def kept_first(ranked: Ranked, pair: Pair) -> int:
    """1 when a look-alike pair's asked-about statement (`old`: the speaker's own value, which still holds)
    ranks above the later look-alike (`new`: another holder's or thing's value, a plan): no false currency."""
    kept, look = first(ranked, pair.old), first(ranked, pair.new)
    return int(kept is not None and (look is None or kept < look))


def groups(pair: Pair) -> list[str]:
    return [
        f"{pair.split}",
        f"{pair.split} · {pair.lang}",
        f"{pair.split} · {pair.shape}",
        f"{pair.split} · {'rule table' if pair.rule_table else 'other attributes'}",
    ]


def naive_reorder(
    ranked: Ranked, vectors: Callable[[list[str]], np.ndarray[Any, Any]], ts: dict[str, datetime]
) -> Ranked:
    """The later of two look-alike hits first: a stable pass that moves each hit above any earlier-said hit
    it closely resembles."""
    if len(ranked) < 2:
        return ranked
    matrix = vectors([t for _, t in ranked])
    out = list(range(len(ranked)))
    for j in range(1, len(ranked)):
        for i in range(j):
            a, b = out.index(i), out.index(j)
            if (
                a < b
                and float(matrix[i] @ matrix[j]) >= LOOKALIKE_COSINE
                and _when(ranked[j], ts) > _when(ranked[i], ts)
            ):
                out.remove(j)
                out.insert(a, j)
    return [ranked[i] for i in out]


def _when(hit: tuple[tuple[str, ...], str], ts: dict[str, datetime]) -> float:
    """When the hit was said (its latest turn), as a POSIX time; 0 for a hit of no known turn."""
    return max((ts[t].timestamp() for t in hit[0] if t in ts), default=0.0)


def run_updates_bench(
    settings: Settings,
    *,
    reuse: bool,
    console: Console,
    timeout_s: float = 3600.0,
    path: Path = PATH,
    database_url: str = DATABASE_URL,
    redis_url: str = REDIS_URL,
) -> Result:
    from bench.locomo_eval import recall_env

    raw, conversations = load(path)
    turns, ids = to_turns(conversations)
    pairs = pairs_of(conversations, ids)
    check_disposable(database_url, redis_url, settings)
    bench = settings.model_copy(update={"database_url": database_url, "redis_url": redis_url})
    qdrant_path = CACHE_DIR / (
        "updates-qdrant" if path == PATH else f"updates-qdrant-{path.name.split('.')[0]}"
    )
    console.rule("[bold]bench updates: ingest through the pipeline")
    prepared = prepare(
        bench,
        turns,
        raw,
        qdrant_path=qdrant_path,
        reuse=reuse,
        speaker="metadata",
        console=console,
        timeout_s=timeout_s,
    )
    result = Result(ingest_s=prepared.ingested.seconds, turns=len(turns), conversations=len(conversations))
    env = recall_env(bench, qdrant_path)
    embedder = env.deps.embedder
    ts = {t.turn_id: t.ts for t in turns}
    try:

        def product(tuning: Any) -> Ranker:
            def rank(p: Pair) -> Ranked:
                hits = recall(
                    p.question,
                    agent_id=AGENT,
                    user_id=p.conversation,
                    k=K,
                    repo=env.repo,
                    store=env.store,
                    index=env.index,
                    embedder=embedder,
                    lexicon=env.deps.lexicon,
                    tuning=tuning,
                )
                return [(h.source_turn_ids, h.text) for h in hits]

            return rank

        bm25 = bm25_floor(turns, "metadata")
        tuned = configured(bench)  # what the API ranks with under these settings (the model's reads_cjk)
        without = product(replace(tuned, updates=False))
        cache: dict[str, np.ndarray[Any, Any]] = {}

        def vectors(texts: list[str]) -> np.ndarray[Any, Any]:
            missing = [t for t in dict.fromkeys(texts) if t not in cache]
            if missing:
                cache.update(zip(missing, embedder.embed(missing), strict=True))
            return np.stack([cache[t] for t in texts])

        text_of = {t.turn_id: t.text for t in turns}
        rankers: dict[str, Ranker] = {
            "BM25 alone (floor)": lambda p: [((ids_,), text_of[ids_]) for (ids_,) in bm25(_question(p))],
            "product without update detection (floor)": without,
            "naive: later look-alike first (floor)": lambda p: naive_reorder(without(p), vectors, ts),
            "**product**": product(tuned),
        }
        for name, ranker in rankers.items():
            console.print(f"  {name}", highlight=False)
            result.rows[name] = {}
            result.lookalike_both[name] = {}
            for p in pairs:
                ranked = ranker(p)
                if p.label == "update":
                    c = judge(ranked, p)
                    for g in groups(p):
                        result.rows[name].setdefault(g, Counts()).add(c)
                else:
                    both = result.lookalike_both[name].setdefault(p.split, [0, 0, 0])
                    top = {t for ids_, _ in ranked for t in ids_}
                    both[0] += int(p.evidence <= top)
                    both[1] += 1
                    both[2] += kept_first(ranked, p)
        _links(bench, pairs, result)
    finally:
        env.close()
    return result


def _question(p: Pair) -> Question:
    return Question(p.conversation, 0, p.question, p.kind, tuple(sorted(p.evidence)))


def _links(settings: Settings, pairs: Sequence[Pair], result: Result) -> None:
    from pipeline.adapters.postgres.engine import make_engine

    engine = make_engine(settings.db_url, pool_size=1)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT o.turn_id AS old, n.turn_id AS new, l.reason, left(o.content, 120) AS ot, "
                    "left(n.content, 120) AS nt FROM supersessions l "
                    "JOIN episodes o ON o.id = l.old_episode_id JOIN episodes n ON n.id = l.new_episode_id "
                    "WHERE l.undone_at IS NULL AND l.agent_id = :a"
                ),
                {"a": AGENT},
            ).all()
    finally:
        engine.dispose()
    result.reviews, result.review_ms, result.detect_ms = review_cost(settings)
    linked = {(r.old, r.new) for r in rows}
    labelled: set[tuple[str, str]] = set()
    for p in pairs:
        between = {(a, b) for a in p.old | p.new for b in p.old | p.new if a != b}
        labelled |= between
        hit = bool(between & linked)
        if p.label == "update":
            for g in groups(p):
                result.rows["**product**"][g].linked += int(hit)
        else:
            f = result.false_links.setdefault(p.split, [0, 0])
            f[0] += int(hit)
            f[1] += 1
            if hit:
                result.samples.append(f"false link ({p.kind}): {p.pair_id}")
    stray = [r for r in rows if (r.old, r.new) not in labelled]
    result.stray_links = len(stray)
    result.samples += [f"unlabelled link: {r.ot!r} -> {r.nt!r} ({r.reason.get('rule')})" for r in stray[:10]]


def review_cost(settings: Settings) -> tuple[int, float, float]:
    """(reviews, their wall time in ms, the part spent in update detection in ms), from the audit log of
    the ingest: measured in the same reviews, so the ratio holds whatever the machine's load."""
    from pipeline.adapters.postgres.engine import make_engine

    engine = make_engine(settings.db_url, pool_size=1)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT count(*) AS n, "
                    "coalesce(sum(extract(epoch FROM finished_at - started_at) * 1000), 0) AS total, "
                    "coalesce(sum((timings_ms->>'updates')::float), 0) AS detect FROM reviews"
                )
            ).one()
    finally:
        engine.dispose()
    return int(row.n), float(row.total), float(row.detect)


def report_lines(r: Result) -> list[str]:
    lines = [
        f"{r.conversations} conversations, {r.turns:,} turns through the pipeline; {machine()}.",
        "",
        "| ranker | half | update pairs | current-first | current top-1 | newer in the top 10 (ceiling) "
        "| linked by review |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, by_group in r.rows.items():
        for half in ("dev", "test"):
            c = by_group.get(half)
            if c is None or not c.n:
                continue
            linked = f"{c.linked / c.n:.3f}" if name == "**product**" else ""
            lines.append(
                f"| {name} | {half} | {c.n} | {c.current_first / c.n:.3f} | {c.top1 / c.n:.3f} | "
                f"{c.found / c.n:.3f} | {linked} |"
            )
    lines += ["", "By language, shape and attribute (product; test half):", ""]
    lines += ["| group | pairs | current-first | top-1 | linked |", "|---|---:|---:|---:|---:|"]
    for g, c in sorted(r.rows.get("**product**", {}).items()):
        if g.startswith("test ·") and c.n:
            lines.append(
                f"| {g} | {c.n} | {c.current_first / c.n:.3f} | {c.top1 / c.n:.3f} | {c.linked / c.n:.3f} |"
            )
    lines += [
        "",
        "| half | look-alike pairs | false supersessions | both statements in the top 10 (product / without "
        "detection) | asked-about statement above the look-alike (product / without detection / naive) |",
    ]
    lines += ["|---|---:|---:|---:|---:|"]
    for half in ("dev", "test"):
        f = r.false_links.get(half)
        if not f:
            continue
        both = r.lookalike_both.get("**product**", {}).get(half, [0, 1, 0])
        base = r.lookalike_both.get("product without update detection (floor)", {}).get(half, [0, 1, 0])
        naive = r.lookalike_both.get("naive: later look-alike first (floor)", {}).get(half, [0, 1, 0])
        lines.append(
            f"| {half} | {f[1]} | {f[0]} ({f[0] / f[1]:.3%}) | {both[0] / max(both[1], 1):.3f} / "
            f"{base[0] / max(base[1], 1):.3f} | {both[2] / max(both[1], 1):.3f} / "
            f"{base[2] / max(base[1], 1):.3f} / {naive[2] / max(naive[1], 1):.3f} |"
        )
    lines += ["", f"Links between turns of no labelled pair: {r.stray_links}."]
    if r.review_ms:
        lines += [
            "",
            f"Review cost: {r.reviews} reviews took {r.review_ms / 1000:.1f} s, of which update detection "
            f"{r.detect_ms / 1000:.2f} s ({r.detect_ms / r.review_ms:.1%}): review throughput with detection "
            f"is {1 - r.detect_ms / r.review_ms:.3f} of what it is without (target ≥ 0.9).",
        ]
    if r.samples:
        lines += ["", "Samples:", ""] + [f"- {s}" for s in r.samples[:12]]
    return lines


INTRO = [
    "Set: `bench/data/sets/updates.json.gz` (`bench.sets.updates`): 70 conversations (35 dev, 35 test), 334 "
    "update pairs and 359 look-alike pairs (other holder, other project, a question, an assistant's "
    "suggestion, a hypothetical, the past, the same value, two values both true); 39% Chinese or mixed; "
    "user↔assistant and friends' chats; 72% of pairs on attributes outside the rule table. Every "
    "conversation goes through the real pipeline (scheduler, Celery worker, indexer); each update pair's "
    "question is asked of recall (k = 10). Targets on the test half: current-first ≥ 0.95, current top-1 "
    "≥ 0.85, false supersessions ≤ 1%.",
    "",
    "Tuned and held out: the review rules and recall's ordering knobs were written and chosen on the dev "
    "half (issue 39's `update_answer_ratio` and `update_answer_cosine`, replaced in issue 46 by "
    "`value_order`, which was written on LongMemEval's and the long-request set's dev halves). Three rule "
    'fixes (a capitalised qualifier at a sentence start, a lone 一, "last year") were prompted by false '
    "links printed from the test half, so the test half's false-supersession figure is not fully held out; "
    "its current-first and top-1 are.",
    "",
]


def write_report(r: Result) -> None:
    body = ["## Knowledge updates: `hindsight bench updates`", "", *INTRO, *report_lines(r)]
    write_section("updates", "\n".join(body))


TARGETS = {"current_first": 0.95, "top1": 0.85, "false_rate": 0.01}
PRODUCT = "**product**"


def figures(r: Result) -> dict[str, float]:
    """Headline figures: the product's and each floor's on both halves, and the false supersession rate."""
    out: dict[str, float] = {}
    names = {
        PRODUCT: "product",
        "BM25 alone (floor)": "bm25",
        "product without update detection (floor)": "without",
        "naive: later look-alike first (floor)": "naive",
    }
    for name, short in names.items():
        for half in ("dev", "test"):
            c = r.rows.get(name, {}).get(half)
            if c and c.n:
                out[f"{short}_{half}_current_first"] = c.current_first / c.n
                out[f"{short}_{half}_top1"] = c.top1 / c.n
                if name == PRODUCT:
                    out[f"{short}_{half}_linked"] = c.linked / c.n
    for half, (linked, n) in r.false_links.items():
        out[f"{half}_false_rate"] = linked / n if n else 0.0
    if r.review_ms:
        out["review_throughput_ratio"] = 1 - r.detect_ms / r.review_ms
    return out


def met(f: dict[str, float]) -> bool:
    return (
        f.get("product_test_current_first", 0.0) >= TARGETS["current_first"]
        and f.get("product_test_top1", 0.0) >= TARGETS["top1"]
        and f.get("test_false_rate", 1.0) <= TARGETS["false_rate"]
    )


# The long-request shape (issue 46, bench/sets/updates_long.py): values said in passing inside 200-400-word
# requests, asked in the plain present tense or for the previous value; its own database.
LONG_PATH = SETS_DIR / "updates_long.json.gz"
LONG_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_updates_long"
LONG_INTRO = [
    "Set: `bench/data/sets/updates_long.json.gz` (`bench.sets.updates_long`): 40 conversations (20 dev, 20 "
    "test; the attributes and request topics alternate between the halves), each with three values said "
    "in passing inside long requests for help about something else, a newer request stating the new value "
    "weeks later (half with the assistant echoing the old value), questions in the plain present tense or "
    "(30%) for the previous value, where the wanted statement is the older one; look-alikes that are both "
    "true (another person's or thing's value, a plan, a hypothetical). 50% Chinese or mixed.",
    "",
]


# Short agent chats (issue 46, bench/sets/updates_agents.py): a value told to an assistant (sometimes echoed),
# the new one weeks later, often in passing inside a request; written by hand, its test half never read.
AGENTS_PATH = SETS_DIR / "updates_agents.json.gz"
AGENTS_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_updates_agents"
AGENTS_INTRO = [
    "Set: `bench/data/sets/updates_agents.json.gz` (`bench.sets.updates_agents`): 28 short agent chats written "
    "by hand (20 dev, 8 test), each a value told to an assistant (some echoed back), unrelated turns, and the "
    "new value forty days later, often in passing inside a request; questions in the plain present tense or "
    "for the previous value (the wanted statement is then the older one, listed as the newer of the pair); "
    "look-alikes that are both true (another person's or thing's value, a plan, a hypothetical). The dev half "
    "was read and three defects it showed were fixed (2026-12-07); the test half was written before any of it "
    "ran; its misses were read after the first run (6 of 11 right) and one fix followed (numbers written in "
    "Chinese characters), so later figures of it are not held out.",
    "",
]
SETS = {
    "updates": (PATH, DATABASE_URL, "updates", []),
    "long": (LONG_PATH, LONG_DATABASE_URL, "updates-long", LONG_INTRO),
    "agents": (AGENTS_PATH, AGENTS_DATABASE_URL, "updates-agents", AGENTS_INTRO),
}
TITLES = {
    "long": "## Knowledge updates in long requests: `hindsight bench updates --set long`",
    "agents": "## Knowledge updates in short agent chats: `hindsight bench updates --set agents`",
}


def run(
    settings: Settings, *, reuse: bool, write: bool, console: Console, set_name: str = "updates"
) -> dict[str, float]:
    path, database_url, section, intro = SETS[set_name]
    result = run_updates_bench(settings, reuse=reuse, console=console, path=path, database_url=database_url)
    for line in report_lines(result):
        console.print(line, markup=False, highlight=False)
    if write and set_name in TITLES:
        body = [TITLES[set_name], "", *intro]
        write_section(section, "\n".join([*body, *report_lines(result)]))
    elif write:
        write_report(result)
    return figures(result)
