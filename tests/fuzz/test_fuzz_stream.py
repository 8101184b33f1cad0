"""Fuzzing the scheduler's stream path: raw entries XADDed to a real Redis stream and consumed by the real
SchedulerRunner end as an episode (or a session end) in PostgreSQL, or in the dead-letter stream with the
reason; every entry is acknowledged, and the scheduler does not die."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from pipeline.adapters.postgres.engine import make_engine
from pipeline.adapters.postgres.migrate import upgrade
from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.postgres.turn_fingerprints_sql import stored_fingerprints
from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.core.errors import InvalidTurn
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest import turn_ids
from pipeline.ingest.validation import decode_stream_fields, parse_event, utcnow
from scheduler.runner import RunnerConfig, SchedulerRunner
from tests.fuzz.strategies import FUZZ_TIMEOUT_S, STREAM_EXAMPLES, turn_fields
from tests.integration.harness import DB_URL, REDIS_URL, TABLES

pytestmark = [pytest.mark.fuzz, pytest.mark.integration, pytest.mark.timeout(FUZZ_TIMEOUT_S)]
STREAM, DEAD, GROUP, CONSUMER = "hindsight:fuzz:stream", "hindsight:fuzz:stream-dead", "scheduler", "fuzz"


def _wire(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")  # lone surrogates become invalid UTF-8 on the wire
    return json.dumps(value).encode()


@st.composite
def raw_entries(draw: st.DrawFn) -> dict[bytes, bytes]:
    fields = draw(turn_fields())
    raw = {_wire(k): _wire(v) for k, v in fields.items() if v is not None}
    for key in draw(st.lists(st.sampled_from(sorted(raw)), max_size=2)) if raw else []:
        raw[key] = draw(st.binary(max_size=20))  # undecodable or just wrong bytes
    return raw or {b"x": b"y"}


@pytest.fixture(scope="module")
def runner() -> Iterator[SchedulerRunner]:
    upgrade(DB_URL)
    repo = Repository(make_engine(DB_URL))
    with repo.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    client = redis.Redis.from_url(REDIS_URL)
    client.delete(STREAM, DEAD)
    stream = TurnStream(connect(REDIS_URL), STREAM, DEAD)
    stream.ensure_group(GROUP)
    config = RunnerConfig(
        group=GROUP,
        read_count=100,
        block_ms=1,
        claim_idle_ms=60_000,
        tick_s=1.0,
        batch_size=30,
        idle_s=600.0,
        max_batch=500,
    )
    yield SchedulerRunner(
        repo=repo, stream=stream, dispatch=lambda _b: None, config=config, clock=utcnow, consumer=CONSUMER
    )
    client.delete(STREAM, DEAD)


def _expected(raw: dict[bytes, bytes]) -> Turn | SessionEnd | None:
    try:
        return parse_event(decode_stream_fields(raw), now=utcnow(), require_ts=True)
    except InvalidTurn:
        return None


@settings(max_examples=STREAM_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(raw_entries(), min_size=1, max_size=4))
def test_every_stream_entry_becomes_an_episode_or_a_dead_letter(
    runner: SchedulerRunner, entries: list[dict[bytes, bytes]]
) -> None:
    client = runner.stream.client
    events = [_expected(raw) for raw in entries]
    # Ids repeat across cases (the strategy draws "fz-<n>"): an id that its scope already stores, or that an
    # earlier entry of this batch stored, with another role or text is a conflict, dead-lettered by design.
    known = stored_fingerprints(runner.repo.engine, [turn_ids.key(e) for e in events if isinstance(e, Turn)])
    reused: set[int] = set()
    for i, event in enumerate(events):
        if isinstance(event, Turn):
            seen = known.setdefault(turn_ids.key(event), turn_ids.turn_fingerprint(event))
            if seen != turn_ids.turn_fingerprint(event):
                reused.add(i)
    ids = [client.xadd(STREAM, raw).decode() for raw in entries]  # type: ignore[arg-type]
    dead_before = {e[1][b"stream_id"].decode() for e in client.xrange(DEAD)}  # type: ignore[union-attr]
    runner.process(runner.stream.read(GROUP, CONSUMER, count=100, block_ms=1))

    dead = {
        fields[b"stream_id"].decode(): fields[b"reason"].decode()
        for _, fields in client.xrange(DEAD)  # type: ignore[union-attr]
        if fields[b"stream_id"].decode() not in dead_before
    }
    turns, ends = [], []
    for i, (entry_id, event) in enumerate(zip(ids, events, strict=True)):
        if event is None:
            assert dead.get(entry_id), f"{entry_id} was neither stored nor dead-lettered"
        elif i in reused:
            assert "already used" in dead.get(entry_id, ""), (
                f"{entry_id} reused an id but was not dead-lettered"
            )
        else:
            assert entry_id not in dead, dead.get(entry_id)
            (turns if isinstance(event, Turn) else ends).append(event)
    with runner.repo.engine.connect() as conn:
        stored = set(
            conn.scalars(
                text("SELECT turn_id FROM episodes WHERE turn_id = ANY(:t)"),
                {"t": [t.turn_id for t in turns]},
            )
        )
        assert stored == {t.turn_id for t in turns}  # type: ignore[union-attr]
        for end in ends:
            assert (
                conn.scalar(
                    text(
                        "SELECT count(*) FROM sessions WHERE agent_id = :a AND user_id = :u AND session_id = :s"
                    ),
                    {"a": end.agent_id, "u": end.user_id, "s": end.session_id},
                )
                == 1
            )
    pending = client.xpending(STREAM, GROUP)
    assert pending["pending"] == 0  # type: ignore[index]
