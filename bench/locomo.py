"""`hindsight bench locomo`: evidence recall@5/@10 of the real pipeline on LoCoMo, beside BM25 and dense-only.

1. Ingest: every conversation is one scope (agent "locomo", user = its sample_id); every turn goes through
   the Redis stream with its session's date-time as event time and turn id `conv-26:D1:3`, each session
   followed by its session_end; a real scheduler thread, a real Celery worker process and the indexer run
   until every turn is reviewed and indexed (`hindsight ingest --wait`). The bench database remembers a
   fingerprint of what it ingested (data, ingest format, review settings): `--reuse` skips this step
   when it matches, so that ranking can be iterated on without re-running the review.
2. Ask every question that has evidence through the recall API (`GET /v1/recall`, k=10) and score
   recall@5/@10 per category by walking the results' `source_turn_ids` (bench/locomo_data.py).
   In the same run: plain BM25 over the raw turn texts (the floor) and dense-only recall over the same
   index. Conversations 1-5 are where ranking was tuned; 6-10 are held out.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from sqlalchemy import text

from bench.locomo_data import (
    AGENT,
    DEFAULT_DATA,
    K,
    LocomoTurn,
    Question,
    Ranker,
    Table,
    parse,
    score,
)
from bench.report import write_section
from bench.review import CACHE_DIR, TABLES, WorkerProcess, check_disposable
from pipeline.core.config import Settings
from pipeline.core.errors import ConfigError
from pipeline.core.logging import configure_logging
from pipeline.core.models import DEFAULT_SOURCE, SessionEnd, Turn
from pipeline.ingest.validation import encode_event, parse_event, utcnow
from pipeline.recall.hybrid import DEFAULT_TUNING

BENCH_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/hindsight_bench_locomo"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/2"
# Bump when what the bench ingests changes (content format, roles, metadata): the fingerprint then
# no longer matches and `--reuse` re-ingests. Also bump when review's rules change what they keep
# (4: a statement that asks back is no longer a question to quality.py; 5: a personal statement of
# an ongoing spell or plan, "currently reading ...", is no longer stale by tomorrow; 6: quality's
# novelty knee 0.2 -> 0.1).
# 7: a turn's role from the set; the speaker mode. 8: a turn's index point reads it in the context of the
# turn before it (review.index_vector): the persisted index of an earlier run no longer matches.
INGEST_FORMAT = "8"
TUNING = 5  # conversations 1..TUNING tune the ranking; the rest are held out
POLL_S = 0.5
__all__ = ["DEFAULT_DATA", "run_locomo_bench"]


# How a turn says who spoke: "metadata" (metadata.speaker, the content as said), "prefix" (content
# "Speaker: text", nothing else: what a plain chat export gives) or "none" (the role alone).
SPEAKER_MODES = ("metadata", "prefix", "none")


def fingerprint(
    data: bytes, settings: Settings, conversations: Sequence[str], speaker: str = "metadata"
) -> str:
    parts = [
        INGEST_FORMAT,
        speaker,
        hashlib.sha256(data).hexdigest(),
        settings.review.model_dump_json(),
        settings.policy.model_dump_json(),
        settings.embedding.model,
        ",".join(conversations),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def turn_text(t: LocomoTurn, speaker: str = "metadata") -> str:
    """The content the agent service stores for this turn (what the floors index too)."""
    return f"{t.speaker}: {t.content}" if speaker == "prefix" else t.content


def to_turn(t: LocomoTurn, speaker: str = "metadata") -> Turn:
    # Both LoCoMo speakers are people talking to each other, so both are user turns (trust 1.0); other
    # sets mark the assistant's turns, which come from the agent.
    return Turn(
        t.turn_id,
        AGENT,
        t.conversation,
        t.session_id,
        t.role,
        turn_text(t, speaker),
        t.ts,
        DEFAULT_SOURCE.get(t.role, "user"),
        {"speaker": t.speaker} if speaker == "metadata" else {},
    )


def refused(turns: Sequence[LocomoTurn], speaker: str) -> dict[str, str]:
    """Turn id -> why the pipeline's validation refuses it (dead-lettered on ingest: it can never be
    waited for, and its evidence counts as lost)."""
    from pipeline.core.errors import InvalidTurn

    out: dict[str, str] = {}
    now = utcnow()
    for t in turns:
        try:
            parse_event(encode_event(to_turn(t, speaker)), now=now)
        except InvalidTurn as exc:
            out[t.turn_id] = str(exc)
    return out


# -- 1. ingest through the real pipeline -----------------------------------------------------------


@dataclass
class Ingested:
    turns: int
    reused: bool
    seconds: float = 0.0
    counts: dict[str, Any] = field(default_factory=dict)


def _stored_fingerprint(engine: Any) -> str | None:
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE IF NOT EXISTS bench_fingerprint (value text NOT NULL)"))
        return conn.scalar(text("SELECT value FROM bench_fingerprint LIMIT 1"))


def _holds_turns(engine: Any, turns: Sequence[LocomoTurn]) -> bool:
    """Whether the ingested turns are still there: another bench sharing the database may have TRUNCATEd it
    (`hindsight bench all --database-url`), which leaves the fingerprint table alone."""
    with engine.connect() as conn:
        found = conn.scalar(
            text("SELECT count(*) FROM episodes WHERE agent_id = :a AND turn_id = ANY(:ids)"),
            {"a": AGENT, "ids": [t.turn_id for t in turns]},
        )
    return bool(found)


def _store_fingerprint(engine: Any, value: str | None) -> None:
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM bench_fingerprint"))
        if value is not None:
            conn.execute(text("INSERT INTO bench_fingerprint (value) VALUES (:v)"), {"v": value})


def ingest(
    settings: Settings,
    turns: Sequence[LocomoTurn],
    *,
    qdrant_path: Path,
    console: Console,
    timeout_s: float,
    speaker: str = "metadata",
) -> float:
    """Push every turn (and session ends) through the stream; wait until all are reviewed and indexed
    (but those validation refuses: they go to the dead-letter stream, as they would in production)."""
    import shutil
    import threading

    from pipeline.adapters.indexer import Indexer
    from pipeline.adapters.postgres.engine import libpq_dsn, make_engine
    from pipeline.adapters.postgres.repository import Repository
    from pipeline.adapters.qdrant_edge import EdgeVectorIndex
    from pipeline.adapters.redis_stream import TurnStream, connect
    from scheduler.runner import RunnerConfig, SchedulerRunner
    from tasks.app import REVIEW_TASK, create_app

    engine = make_engine(settings.db_url, pool_size=4)
    repo = Repository(engine)
    redis = connect(settings.broker_url)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES}, memory_audit RESTART IDENTITY CASCADE"))
    redis.flushdb()
    shutil.rmtree(qdrant_path, ignore_errors=True)
    index = EdgeVectorIndex(qdrant_path, settings.embedding.dimension)
    worker = WorkerProcess(
        {
            "HINDSIGHT_DATABASE_URL": settings.db_url,
            "HINDSIGHT_REDIS_URL": settings.broker_url,
            "HINDSIGHT_LLM__BASE_URL": "",  # rules only: the figures must not depend on an LLM
            "HINDSIGHT_LOG_JSON": "true",
        },
        CACHE_DIR / "locomo-worker.log",
    )
    celery_app = create_app(settings)
    runner = SchedulerRunner(
        repo=repo,
        stream=TurnStream(redis, settings.stream_turns, settings.stream_dead),
        dispatch=lambda batch_id: celery_app.send_task(REVIEW_TASK, args=[batch_id]),
        config=RunnerConfig(
            group=settings.scheduler_group,
            read_count=settings.scheduler_read_count,
            block_ms=100,
            claim_idle_ms=settings.scheduler_claim_idle_ms,
            tick_s=0.2,
            batch_size=settings.policy.batch_size,
            idle_s=5.0,  # every session is ended explicitly; idle only catches a straggler
            max_batch=settings.policy.max_batch,
        ),
        clock=utcnow,
        consumer="bench-locomo-scheduler",
    )
    indexer = Indexer(repo, index, dsn=libpq_dsn(settings.db_url), poll_s=0.5, batch=settings.indexer_batch)
    thread = threading.Thread(target=runner.run, name="bench-locomo-scheduler", daemon=True)
    stream = TurnStream(redis, settings.stream_turns, settings.stream_dead)
    lost = refused(turns, speaker)
    ids = [t.turn_id for t in turns if t.turn_id not in lost]
    if lost:
        console.print(f"  {len(lost):,} turns refused by validation, e.g. {next(iter(lost.values()))}")
    try:
        worker.start()
        thread.start()
        indexer.start()
        t0 = time.perf_counter()
        entries: list[dict[str, str]] = []
        for i, t in enumerate(turns):
            entries.append(encode_event(to_turn(t, speaker)))
            last_of_session = i + 1 == len(turns) or turns[i + 1].session_id != t.session_id
            if last_of_session:
                end = SessionEnd(AGENT, t.conversation, t.session_id, t.ts)
                entries.append(encode_event(end))
        for start in range(0, len(entries), 500):
            stream.add_many(entries[start : start + 500])
        last = -1
        while (progress := repo.turn_progress(ids))["indexed"] < len(ids):
            worker.check_alive()
            if time.perf_counter() - t0 > timeout_s:
                raise RuntimeError(f"LoCoMo ingest timed out after {timeout_s:.0f}s: {progress}")
            if progress["reviewed"] // 1000 != last:
                last = progress["reviewed"] // 1000
                console.print(f"  reviewed {progress['reviewed']:,} / {len(ids):,}", highlight=False)
            time.sleep(POLL_S)
        while repo.outbox_lag()[0]:  # semantic memories too
            time.sleep(POLL_S)
        return time.perf_counter() - t0
    finally:
        runner.stop_event.set()
        thread.join(10)
        indexer.stop()
        worker.stop()
        index.close()
        redis.close()
        engine.dispose()


# -- 2. ask the questions ----------------------------------------------------------------------------


def halves(questions: Sequence[Question], splits: dict[str, str] | None = None) -> dict[str, str]:
    """Conversation -> "tuned" | "held-out": a set's own `split` ("dev" is tuned on) or, for LoCoMo,
    conversations 1..TUNING tuned."""
    if splits:
        return {
            q.conversation: ("tuned" if splits.get(q.conversation) == "dev" else "held-out")
            for q in questions
        }
    order = list(dict.fromkeys(q.conversation for q in questions))
    return {conv: ("tuned" if i < TUNING else "held-out") for i, conv in enumerate(order)}


def bm25_floor(turns: Sequence[LocomoTurn], speaker: str = "metadata") -> Ranker:
    """Plain BM25 over the raw turn texts of the question's conversation (what the floor means)."""
    from pipeline.recall import lexical

    indexes: dict[str, lexical.BM25] = {}
    for t in turns:
        indexes.setdefault(t.conversation, lexical.BM25()).add_text(t.turn_id, turn_text(t, speaker))

    def rank(q: Question) -> list[tuple[str, ...]]:
        return [(str(doc),) for doc, _ in indexes[q.conversation].search(q.text, K)]

    return rank


def table_lines(
    tables: Sequence[Table], halves_: Sequence[str | None] = ("tuned", "held-out", None)
) -> list[str]:
    categories = sorted({c for t in tables for c in t.categories()})
    header = "| ranker | half | " + " | ".join(f"{c} R@5 / R@10" for c in categories)
    lines = [header + " | **all R@5** | **all R@10** | n |", "|---|---|" + "---:|" * (len(categories) + 3)]
    for t in tables:
        for half in halves_:
            cats = []
            for c in categories:
                s = t.total(half, c)
                cats.append(f"{s.at5:.3f} / {s.at10:.3f}")
            s = t.total(half)
            label = half or "**all**"
            lines.append(
                f"| {t.name} | {label} | "
                + " | ".join(cats)
                + f" | **{s.at5:.3f}** | **{s.at10:.3f}** | {s.n} |"
            )
    return lines


def print_lines(console: Console, lines: Sequence[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


@dataclass
class LocomoResult:
    tables: list[Table]
    ingested: Ingested
    questions: int
    conversations: int
    ceiling: float = 1.0  # mean share of a question's evidence turns that review left recallable
    figures: dict[str, float] = field(default_factory=dict)


@dataclass
class Prepared:
    """A set ingested and reviewed in its bench database: what review left recallable, and its counts."""

    ingested: Ingested
    recallable: set[str]
    refused: dict[str, str]


def prepare(
    settings: Settings,
    turns: Sequence[LocomoTurn],
    raw: bytes,
    *,
    qdrant_path: Path,
    reuse: bool,
    speaker: str,
    console: Console,
    timeout_s: float,
) -> Prepared:
    """Ingest `turns` through the real pipeline into `settings`' (bench) database, unless `reuse` and the
    database already holds exactly this ingest (fingerprint of data, format and review settings)."""
    from pipeline.adapters.postgres.engine import make_engine
    from pipeline.adapters.postgres.migrate import upgrade

    upgrade(settings.db_url)
    convs = sorted({t.conversation for t in turns})
    wanted = fingerprint(raw, settings, convs, speaker)
    engine = make_engine(settings.db_url, pool_size=2)
    try:
        stored = _stored_fingerprint(engine)
        if reuse and stored == wanted and qdrant_path.exists() and _holds_turns(engine, turns):
            ingested = Ingested(len(turns), reused=True)
            console.print(f"reusing the ingested state (fingerprint {wanted[:12]})", highlight=False)
        else:
            _store_fingerprint(engine, None)
            seconds = ingest(
                settings,
                turns,
                qdrant_path=qdrant_path,
                console=console,
                timeout_s=timeout_s,
                speaker=speaker,
            )
            _store_fingerprint(engine, wanted)
            ingested = Ingested(len(turns), reused=False, seconds=seconds)
        scope = {"a": AGENT}
        with engine.connect() as conn:
            ingested.counts = dict(
                conn.execute(
                    text("SELECT status, count(*) FROM episodes WHERE agent_id = :a GROUP BY status"), scope
                ).all()
            )
            ingested.counts["semantic memories"] = conn.scalar(
                text("SELECT count(*) FROM semantic_memories WHERE agent_id = :a AND valid_to IS NULL"), scope
            )
            ingested.counts["facts"] = conn.scalar(
                text("SELECT count(*) FROM facts WHERE agent_id = :a"), scope
            )
            recallable = set(
                conn.scalars(
                    text(
                        "SELECT unnest(array_prepend(turn_id, merged_turn_ids)) FROM episodes "
                        "WHERE agent_id = :a AND status = 'kept'"
                    ),
                    scope,
                )
            )
    finally:
        engine.dispose()
    return Prepared(ingested, recallable, refused(turns, speaker))


def evidence_kept(questions: Sequence[Question], recallable: set[str]) -> float:
    """Mean share of a question's evidence turns that review left recallable (kept, or merged into a kept
    turn): the ceiling of any ranking over the reviewed state."""
    if not questions:
        return 0.0
    return sum(len(recallable.intersection(q.evidence)) / len(q.evidence) for q in questions) / len(questions)


TARGET_R10, TARGET_R5, TARGET_GAP = 0.80, 0.70, 0.03  # over all conversations; held-out against tuned


def held_out_gap(final: Table) -> float:
    """How far the held-out half's R@5 or R@10 is from the tuned half's, whichever is farther."""
    tuned, held = final.total("tuned"), final.total("held-out")
    return max(abs(tuned.at5 - held.at5), abs(tuned.at10 - held.at10))


def missed_targets(final: Table) -> list[str]:
    """The targets the product's table misses (over all conversations; a subset run has no targets)."""
    all_, gap = final.total(), held_out_gap(final)
    checks = {
        f"R@10 {all_.at10:.3f} < {TARGET_R10}": all_.at10 >= TARGET_R10,
        f"R@5 {all_.at5:.3f} < {TARGET_R5}": all_.at5 >= TARGET_R5,
        f"held-out {gap:.3f} from tuned > {TARGET_GAP}": gap <= TARGET_GAP,
    }
    return [name for name, met in checks.items() if not met]


def run_locomo_bench(
    settings: Settings,
    *,
    data: Path,
    database_url: str,
    redis_url: str,
    conversations: Sequence[str] | None,
    reuse: bool,
    variants: Sequence[str],
    write: bool,
    console: Console,
    timeout_s: float = 3600.0,
) -> LocomoResult:
    from bench import locomo_eval

    configure_logging("WARNING", settings.log_json)
    locomo_eval.check_variants(variants)
    if not data.exists():
        raise ConfigError(f"LoCoMo data not found at {data}: pass --data PATH to locomo10.json")
    raw = data.read_bytes()
    turns, questions = parse(json.loads(raw))
    if conversations:
        unknown = sorted(set(conversations) - {t.conversation for t in turns})
        if unknown:
            raise ConfigError(f"no such LoCoMo conversation(s): {', '.join(unknown)}")
        turns = [t for t in turns if t.conversation in conversations]
        questions = [q for q in questions if q.conversation in conversations]
    half_of = halves(questions)
    check_disposable(database_url, redis_url, settings)
    bench = settings.model_copy(update={"database_url": database_url, "redis_url": redis_url})
    qdrant_path = CACHE_DIR / "locomo-qdrant"
    console.rule("[bold]bench locomo: ingest through the pipeline")
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
    console.rule("[bold]bench locomo: questions")
    tables = [score("BM25 over raw turns (floor)", questions, bm25_floor(turns), half_of)]
    tables += locomo_eval.evaluate(bench, qdrant_path, questions, half_of, variants, console)
    convs = {t.conversation for t in turns}
    ceiling = evidence_kept(questions, prepared.recallable)
    result = LocomoResult(tables, prepared.ingested, len(questions), len(convs), ceiling)
    lines = report_lines(result)
    print_lines(console, lines)
    final = tables[-1]
    result.figures = {
        "all_r5": final.total().at5,
        "all_r10": final.total().at10,
        "tuned_r10": final.total("tuned").at10,
        "held_out_r10": final.total("held-out").at10,
        **category_figures("floor", tables[0]),
        **category_figures("pipeline", final),
    }
    if write and not conversations:
        write_section("locomo", "\n".join(lines))
    elif write:
        console.print("[yellow]a subset of conversations: BENCHMARKS.md left as it was[/yellow]")
    return result


def category_figures(prefix: str, table: Table) -> dict[str, float]:
    """`{prefix}_r5_{category}` and `{prefix}_r10_{category}` for each LoCoMo category with questions, and
    for `all` of them."""
    out: dict[str, float] = {}
    for c, name in [*((c, c) for c in table.categories()), (None, "all")]:
        s = table.total(category=c)
        if s.n:
            out[f"{prefix}_r5_{name}"], out[f"{prefix}_r10_{name}"] = s.at5, s.at10
    return out


def report_lines(r: LocomoResult) -> list[str]:
    c = r.ingested.counts
    how = (
        "reused from an earlier run of the same fingerprint"
        if r.ingested.reused
        else f"ingested and reviewed in {r.ingested.seconds:.0f} s"
    )
    lines = [
        "## Recall on LoCoMo: `hindsight bench locomo`",
        "",
        f"LoCoMo ([Maharana et al., ACL 2024](https://snap-research.github.io/locomo/), CC BY-NC 4.0, read from "
        f"`../shared/bench/locomo/`, not vendored): {r.conversations} conversations, {r.ingested.turns:,} turns "
        f"({how}; rules-only review: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(c.items()))
        + f"), {r.questions:,} questions with evidence. Evidence recall@k: k counts distinct turns taken from "
        "the ranked results' `source_turn_ids`. Tuned on conversations 1-5, held out 6-10.",
        "",
        *table_lines(r.tables),
        "",
        *verdict_lines(r),
    ]
    return lines


def verdict_lines(r: LocomoResult) -> list[str]:
    final = r.tables[-1]
    all_, gap = final.total(), held_out_gap(final)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    def ok(met: bool) -> str:
        return "met" if met else "**missed**"

    return [
        f"Targets (all conversations): R@10 ≥ {TARGET_R10}: {all_.at10:.3f}, {ok(all_.at10 >= TARGET_R10)}; "
        f"R@5 ≥ {TARGET_R5}: {all_.at5:.3f}, {ok(all_.at5 >= TARGET_R5)}; held-out within {TARGET_GAP} of tuned: "
        f"{gap:.3f}, {ok(gap <= TARGET_GAP)}.",
        "",
        f"Ceiling: review (rules only) sent {r.ingested.counts.get('cold', 0):,} turns cold, and cold memories "
        f"are not recalled by default (DESIGN §2): on average {r.ceiling:.3f} of a question's evidence turns "
        "are recallable at all.",
        "",
        "Rows: the floor is BM25 over the raw turn texts; dense only is cosine x weight x trust from the "
        f"pipeline's Qdrant index (x {DEFAULT_TUNING.speaker_boost:g} for the one speaker a question names); "
        "`hybrid, X` is the default ranking with one "
        "change (lexical-only: no dense candidates; no-context: BM25 documents without the previous or next turn; "
        "no-next: without the next turn; no-stand-in: semantic memories do not replace their members; no-unfold: members of semantic memories too big to "
        "stand in keep review's member weight 0.5; "
        "no-speaker: turns spoken by the one person a question names are not favoured; no-rescore: only the vector search's own hits have a cosine); the last row is the default, asked through "
        f"`GET /v1/recall`. Machine load average at the end: {load} (2 cores shared with other work).",
    ]
