"""Long turns through the real pipeline: a 60 KB assistant reply is found by a fact deep inside it (its
passages are points of their own), its passages leave the index with it and come back from PostgreSQL, and a
turn over 256 KiB is refused at every door with a reason naming the limit."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import text

from pipeline.core.errors import InvalidTurn
from pipeline.core.ports import IndexPoint
from pipeline.core.vector_ids import passage_point_ids, point_id
from pipeline.ingest.validation import MAX_CONTENT_BYTES, encode_event, parse_event
from tests.helpers import wait_until
from tests.integration.harness import REDIS_URL, Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 4, 2, 14, 0, tzinfo=UTC)
AGENT, USER = "coder", "lea"
FACT = (
    "One more thing about the Kestrel deployment: the nightly backup job writes its compressed archives "
    "to the object storage bucket named ochre-walrus-archive in the eu-north-1 region, and keeps each one "
    "for thirty-seven days before the lifecycle rule deletes it."
)
QUERY = "Which storage bucket does the nightly backup job write its archives to?"

_SENTENCES = [
    "The connection pool should be sized to the number of worker threads, not to the number of requests.",
    "A covering index lets PostgreSQL answer the query from the index alone without visiting the heap.",
    "Flexbox aligns the items on the main axis with justify-content and on the cross axis with align-items.",
    "Structured logs with a request id make it possible to follow one call through every service it touches.",
    "When the test suite is slow, profile it first: most of the time usually goes to a handful of fixtures.",
    "The retry loop needs a jittered exponential backoff, otherwise every client retries at the same instant.",
    "Type hints do not change what the program does at run time, but the checker catches the renamed field.",
    "A feature flag that nobody removes becomes a second code path that nobody tests.",
    "Use a context manager so that the file is closed even when the parser raises halfway through.",
    "The cache key has to include the locale, or French users will see the English page after a deploy.",
    "Keep the migration and the code that needs it in separate releases so that a rollback stays possible.",
    "A generator keeps memory flat when the input file is larger than the machine's RAM.",
    "The CSS grid template areas make the layout readable at a glance in the stylesheet itself.",
    "Pin the versions in the lock file and let a bot open the upgrade pull requests every week.",
    "The websocket heartbeat detects a dead connection long before the TCP keepalive would.",
    "A unit test that needs the network is an integration test with a misleading name.",
]
_CODE = """```python
def load_rows(path: Path) -> Iterator[dict[str, str]]:
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("status") != "deleted":
                yield {key.strip().lower(): value.strip() for key, value in row.items()}
```"""


def _prose(rng: random.Random, words: int) -> str:
    """Varied technical prose with a code block every ~400 words, `words` whitespace tokens or a few more."""
    parts: list[str] = []
    count = 0
    since_code = 0
    while count < words:
        sentence = rng.choice(_SENTENCES)
        parts.append(sentence)
        count += len(sentence.split())
        since_code += len(sentence.split())
        if since_code > 400:
            parts.append("\n\n" + _CODE + "\n\n")
            count += len(_CODE.split())
            since_code = 0
    return " ".join(parts)


def _long_reply() -> str:
    rng = random.Random(7)
    head = _prose(rng, 5_200)
    assert len(head.split()) > 5_000
    reply = head + "\n\n" + FACT + "\n\n" + _prose(rng, 5_000)
    assert 55_000 < len(reply.encode()) < 70_000
    return reply


def _rows(stack: Stack, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with stack.repo.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def _settle(stack: Stack) -> None:
    wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")


def _write(stack: Stack, session: str, turns: list[tuple[str, str]]) -> list[str]:
    return [
        stack.client.write_memory(
            AGENT, USER, session, role, content, ts=T0 + timedelta(minutes=i), turn_id=f"{session}-{i}"
        )
        for i, (role, content) in enumerate(turns)
    ]


def _episode_points(stack: Stack, episode_id: int, k: int) -> set[str]:
    return {point_id("episode", episode_id), *passage_point_ids(episode_id, k)} & stack.index.ids()


def test_a_fact_deep_in_a_long_reply_is_recalled_and_its_passages_leave_with_it(stack: Stack) -> None:
    stack.start_scheduler()
    reply = _long_reply()
    ids = _write(
        stack,
        "s1",
        [
            ("user", "Can you walk me through hardening the Kestrel deployment before the launch?"),
            ("assistant", reply),
            ("user", "I also set up backups for my own laptop last week with Time Machine."),
            ("user", "My team moved the staging database to a bigger instance on Monday."),
            ("assistant", "Good call on the bigger instance; watch the connection count after the move."),
            ("user", "Where should the nightly exports of the analytics tables go, S3 or the NAS?"),
            ("assistant", "Either works; S3 with a lifecycle rule is simpler to keep tidy than the NAS."),
            ("user", "We archive old invoices as compressed PDFs once a quarter."),
            *(("assistant" if i % 2 else "user", s) for i, s in enumerate(_SENTENCES)),
        ],
    )
    stack.client.end_session(AGENT, USER, "s1")
    stack.wait_indexed(ids)
    _settle(stack)

    ((episode_id, k, dim),) = _rows(
        stack,
        "SELECT id, length(passages) / length(embedding), length(embedding) / 4 FROM episodes "
        "WHERE turn_id = 's1-1'",
    )
    assert 100 <= k <= 256  # ~10,000 words past the first window, a passage per 70
    assert dim == stack.settings.embedding.dimension
    assert len(_episode_points(stack, episode_id, k)) == k + 1
    assert stack.index.ids() == stack.repo.indexable_point_ids()
    ((counts, timings),) = _rows(
        stack, "SELECT counts, timings_ms FROM reviews WHERE (counts->>'passages')::int > 0"
    )
    assert counts["passages"] == k
    print(f"\nreview of a batch with a {len(reply.encode())}-byte reply ({k} passages): {timings}")

    hits = stack.recall(QUERY, AGENT, USER, k=3)
    top = [h["source_turn_ids"] for h in hits]
    assert ["s1-1"] in top, top
    found = next(h for h in hits if h["source_turn_ids"] == ["s1-1"])
    explain: dict[str, Any] = found["explain"]  # type: ignore[assignment]
    print(f"the reply's hit: rank {top.index(['s1-1']) + 1}, {explain}")
    # Found by the vector search, by one of its points (its main vector reads the first ~180 words).
    assert explain["dense_rank"] is not None

    # Forgotten: the episode and every passage leave the index.
    body = {"agent_id": AGENT, "user_id": USER, "reason": "test", "actor": "tests"}
    assert stack.api.post(f"/v1/memories/episode:{episode_id}/forget", json=body).status_code == 200
    _settle(stack)
    assert _episode_points(stack, episode_id, k) == set()
    assert stack.index.ids() == stack.repo.indexable_point_ids()
    assert ["s1-1"] not in [h["source_turn_ids"] for h in stack.recall(QUERY, AGENT, USER, k=5)]

    # Restored: they come back, rebuilt from PostgreSQL alone; a reindex changes nothing.
    restored = stack.api.patch(f"/v1/memories/episode:{episode_id}", json={**body, "status": "kept"})
    assert restored.status_code == 200, restored.text
    _settle(stack)
    assert len(_episode_points(stack, episode_id, k)) == k + 1
    reindex = stack.api.post("/v1/reindex").json()
    assert reindex["orphans_deleted"] == 0
    _settle(stack)
    assert stack.index.ids() == stack.repo.indexable_point_ids()

    # Cold (as the decay pass or a quality verdict leaves it): gone from the index again, passages too.
    with stack.repo.engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE episodes SET status = 'cold', cold_reason = 'decay', cold_since = now() WHERE id = :i"
            ),
            {"i": episode_id},
        )
        conn.execute(
            text("INSERT INTO index_outbox (kind, ref_id) VALUES ('episode', :i)"), {"i": episode_id}
        )
        conn.execute(text("SELECT pg_notify('hindsight_outbox', 'test')"))
    _settle(stack)
    assert _episode_points(stack, episode_id, k) == set()

    # A passage point the store no longer knows (a crash between writes, an older cap) is an orphan.
    stray = passage_point_ids(episode_id, k + 1)[-1]
    stack.index.upsert(
        [
            IndexPoint(
                stray, [1.0] + [0.0] * (dim - 1), {"kind": "episode", "ref_id": episode_id, "passage": k + 1}
            )
        ]
    )
    assert stack.api.post("/v1/reindex").json()["orphans_deleted"] == 1
    assert stray not in stack.index.ids()


def _varied(size: int) -> str:
    """Prose of exactly `size` bytes."""
    out = _prose(random.Random(size), size // 5)
    while len(out.encode()) < size:
        out += " " + _prose(random.Random(len(out)), 200)
    return out.encode()[:size].decode("utf-8", errors="ignore").rstrip() + "."


def test_a_256_kib_turn_goes_through_and_one_byte_more_is_refused_at_every_door(stack: Stack) -> None:
    stack.start_scheduler()
    at_limit = _varied(MAX_CONTENT_BYTES - 1)
    assert len(at_limit.encode()) <= MAX_CONTENT_BYTES
    over = "x" * (MAX_CONTENT_BYTES + 1024)  # 257 KiB
    turn = {"agent_id": AGENT, "user_id": USER, "session_id": "s2", "role": "assistant"}
    limit = f"more than the limit of {MAX_CONTENT_BYTES} bytes (256 KiB)"

    # HTTP: the long one is accepted, the one over refused with the reason (and nothing of it queued).
    ok = stack.api.post("/v1/turns", json=[{**turn, "turn_id": "s2-0", "content": at_limit}])
    assert ok.status_code == 202, ok.text
    refused = stack.api.post("/v1/turns", json=[{**turn, "turn_id": "s2-1", "content": over}])
    assert refused.status_code == 422
    assert refused.json()["detail"] == f"item 0: content: {len(over)} bytes, {limit}"

    # The Python client refuses before anything is sent.
    with pytest.raises(InvalidTurn, match=r"content: 263168 bytes, more than the limit of 262144 bytes"):
        stack.client.write_memory(AGENT, USER, "s2", "assistant", over, turn_id="s2-2")

    # A producer that writes the stream itself: dead-lettered with the reason, the scheduler carries on.
    good = parse_event({**turn, "turn_id": "s2-3", "content": "A short one after it."}, now=T0)
    raw = {**encode_event(good), "turn_id": "s2-4", "content": over}
    stack.stream.add_many([raw, encode_event(good)])
    stack.client.end_session(AGENT, USER, "s2")

    started = time.perf_counter()
    stack.wait_indexed(["s2-0", "s2-3"], timeout=180)
    print(f"\n256 KiB turn stored, reviewed and indexed in {time.perf_counter() - started:.1f} s")
    dead: list[Any] = redis.Redis.from_url(REDIS_URL).xrange(stack.settings.stream_dead)  # type: ignore[assignment]
    assert [(f[b"turn_id"], f[b"reason"].decode()) for _, f in dead] == [
        (b"s2-4", f"content: {len(over)} bytes, {limit}")
    ]
    assert _rows(stack, "SELECT turn_id FROM episodes ORDER BY turn_id") == [("s2-0",), ("s2-3",)]
    ((k,),) = _rows(stack, "SELECT length(passages) / length(embedding) FROM episodes WHERE turn_id = 's2-0'")
    assert k == 256  # the cap: ~43,000 words of prose would need ~620
    ((timings,),) = _rows(stack, "SELECT timings_ms FROM reviews WHERE (counts->>'passages')::int = 256")
    print(f"review of the batch holding it: {timings}")
    assert stack.index.ids() == stack.repo.indexable_point_ids()
