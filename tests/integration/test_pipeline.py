"""The walking pipeline end to end: real Redis stream, scheduler, Celery worker process, PostgreSQL, Qdrant Edge."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from tests.helpers import wait_until
from tests.integration.harness import Stack, WorkerProcess

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
FACTS = [
    "I just moved to Lisbon for a job at a robotics startup.",
    "My sister Marta is visiting in May and we want to hike in Sintra.",
    "I am allergic to peanuts, please never suggest recipes with them.",
    "I play the cello in an amateur orchestra on Thursday evenings.",
    "My budget for the new laptop is 1500 euros.",
]


def _write_conversation(stack: Stack, agent: str, user: str, n: int, session: str = "s1") -> list[str]:
    ids = []
    for i in range(n):
        content = FACTS[i] if i < len(FACTS) else f"Small talk number {i} about the weather and the news."
        ids.append(
            stack.client.write_memory(
                agent,
                user,
                session,
                "user",
                content,
                ts=T0 + timedelta(minutes=i),
                turn_id=f"{user}-{session}-{i}",
            )
        )
    return ids


def _q(repo: Repository, sql: str, **params: object) -> list[tuple[object, ...]]:
    with repo.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def test_turns_flow_from_write_memory_to_recall(stack: Stack) -> None:
    stack.start_scheduler()
    ids = _write_conversation(stack, "agent-a", "ana", 30)
    stack.wait_indexed(ids)

    hits = stack.recall("where did I move to?", "agent-a", "ana")
    assert hits[0]["source_turn_ids"] == ["ana-s1-0"]
    assert "Lisbon" in str(hits[0]["text"])
    assert hits[0]["kind"] == "episode"
    assert hits[0]["session_id"] == "s1"
    assert hits[0]["valid_from"] == T0.isoformat()
    scores = [float(h["score"]) for h in hits]  # type: ignore[arg-type]
    assert scores == sorted(scores, reverse=True)

    # 30 pending episodes of one scope is the full-review trigger; the review is in the audit log.
    assert _q(stack.repo, "SELECT kind, trigger, episode_count, status FROM batches") == [
        ("full", "batch_size", 30, "done")
    ]
    (counts,) = _q(stack.repo, "SELECT counts FROM reviews")[0]
    assert (counts["episodes"], counts["new"]) == (30, 30)
    # Each turn is embedded once: by the review, or already by the indexer when it arrived (read your writes).
    assert _q(stack.repo, "SELECT count(*) FROM episodes WHERE embedding IS NOT NULL") == [(30,)]
    assert counts["embedded"] <= 30
    assert counts["kept"] + counts["cold"] + counts["merged"] == 30
    # Every fact was kept; the index holds exactly what the review kept.
    kept = {t for (t,) in _q(stack.repo, "SELECT turn_id FROM episodes WHERE status = 'kept'")}
    assert kept >= {f"ana-s1-{i}" for i in range(len(FACTS))}
    assert len(kept) == counts["kept"]
    assert stack.index.ids() == stack.repo.indexable_point_ids()


def test_recall_never_crosses_scopes(stack: Stack) -> None:
    stack.start_scheduler()
    ids = _write_conversation(stack, "agent-a", "ana", 3) + _write_conversation(stack, "agent-a", "bob", 3)
    stack.client.end_session("agent-a", "ana", "s1")
    stack.client.end_session("agent-a", "bob", "s1")
    stack.wait_indexed(ids)
    for user in ("ana", "bob"):
        hits = stack.recall("Lisbon robotics job", "agent-a", user, k=10)
        assert hits
        assert all(str(t).startswith(f"{user}-") for h in hits for t in h["source_turn_ids"])
    assert stack.recall("Lisbon", "agent-b", "ana") == []


def test_duplicate_turn_ids_are_stored_once(stack: Stack) -> None:
    stack.start_scheduler()
    for _ in range(3):
        stack.client.write_memory("agent-a", "ana", "s1", "user", "I live in Porto.", turn_id="dup-1")
    response = stack.api.post(
        "/v1/turns",
        json=[
            {
                "turn_id": "dup-1",
                "agent_id": "agent-a",
                "user_id": "ana",
                "session_id": "s1",
                "role": "user",
                "content": "I live in Porto.",
            }
        ],
    )
    assert response.status_code == 202
    stack.client.end_session("agent-a", "ana", "s1")
    stack.wait_indexed(["dup-1"])
    wait_until(lambda: stack.stream.stats("scheduler")["pending"] == 0, timeout=10, what="all entries acked")
    assert _q(stack.repo, "SELECT count(*) FROM episodes") == [(1,)]
    assert stack.index.count() == 1


def test_malformed_entries_go_to_dead_letters_with_a_reason_and_the_rest_flows(stack: Stack) -> None:
    stack.start_scheduler()
    good = {
        "v": "1",
        "kind": "turn",
        "agent_id": "agent-a",
        "user_id": "ana",
        "session_id": "s1",
        "role": "user",
        "content": "I work as a nurse in Coimbra.",
        "ts": T0.isoformat(),
        "source": "user",
        "metadata": "{}",
    }
    bad = [
        ({**good, "turn_id": "bad-1", "content": ""}, "content: missing"),
        ({**good, "turn_id": "bad-2", "ts": "yesterday"}, "ts: not an ISO-8601 timestamp"),
        ({**good, "turn_id": "bad-3", "role": "robot"}, "role: must be one of"),
        ({**good, "turn_id": "bad-4", "metadata": "[1, 2]"}, "metadata: must be a JSON object"),
        ({**good, "turn_id": "bad-5", "content": b"\xff\xfe broken"}, "content: not valid UTF-8"),
        ({**good, "turn_id": "bad-6", "ts": "2026-03-01T09:00:00"}, "ts: must include a UTC offset"),
    ]
    stack.stream.add({**good, "turn_id": "good-1"})
    for fields, _ in bad:
        stack.stream.client.xadd("hindsight:turns", fields)  # type: ignore[arg-type]
    stack.stream.add({**good, "turn_id": "good-2", "content": "My manager is called Rui."})
    stack.client.end_session("agent-a", "ana", "s1")

    stack.wait_indexed(["good-1", "good-2"])
    dead = wait_until(
        lambda: (
            stack.stream.client.xrange("hindsight:dead")
            if stack.stream.client.xlen("hindsight:dead") == 6
            else []
        ),
        timeout=10,
        what="six dead letters",
    )
    reasons = {f[b"turn_id"].decode(): f[b"reason"].decode() for _, f in dead}
    for fields, expected in bad:
        assert expected in reasons[str(fields["turn_id"])]
    assert all(b"stream_id" in f for _, f in dead)
    assert _q(stack.repo, "SELECT turn_id FROM episodes ORDER BY turn_id") == [("good-1",), ("good-2",)]
    assert stack.stream.stats("scheduler")["pending"] == 0


def test_session_end_triggers_a_light_review_of_that_session(stack: Stack) -> None:
    stack.start_scheduler()
    ids = _write_conversation(stack, "agent-a", "ana", 4, session="s1")
    other = _write_conversation(stack, "agent-a", "ana", 2, session="s2")
    stack.client.end_session("agent-a", "ana", "s1")
    stack.wait_indexed(ids)
    assert _q(stack.repo, "SELECT kind, trigger, session_id, episode_count FROM batches") == [
        ("light", "session_end", "s1", 4)
    ]
    # The other session is neither ended nor idle: still pending.
    assert stack.repo.turn_progress(other)["reviewed"] == 0


def test_an_idle_session_gets_a_light_review(stack: Stack) -> None:
    stack.start_scheduler(idle_s=1.5)
    ids = _write_conversation(stack, "agent-a", "ana", 3)
    stack.wait_indexed(ids, timeout=60)
    assert _q(stack.repo, "SELECT kind, trigger, episode_count FROM batches") == [("light", "idle", 3)]


def test_light_reviewed_episodes_still_count_towards_a_full_review(stack: Stack) -> None:
    stack.start_scheduler()
    first = _write_conversation(stack, "agent-a", "ana", 20, session="s1")
    stack.client.end_session("agent-a", "ana", "s1")
    stack.wait_indexed(first)
    second = _write_conversation(stack, "agent-a", "ana", 10, session="s2")
    wait_until(
        lambda: (
            _q(stack.repo, "SELECT count(*) FROM batches WHERE kind = 'full' AND status = 'done'") == [(1,)]
        ),
        timeout=60,
        what="a full review",
    )
    assert _q(stack.repo, "SELECT episode_count FROM batches WHERE kind = 'full'") == [(30,)]
    assert stack.repo.turn_progress(second)["reviewed"] == 10


def test_two_schedulers_never_dispatch_the_same_episodes(stack: Stack) -> None:
    for _ in range(2):
        stack.start_scheduler(read_count=15, tick_s=0.05)
    entries = []
    for u in range(8):
        for i in range(45):
            entries.append(
                {
                    "v": "1",
                    "kind": "turn",
                    "turn_id": f"u{u}-{i}",
                    "agent_id": "agent-a",
                    "user_id": f"u{u}",
                    "session_id": f"s{i // 15}",
                    "role": "user",
                    "content": f"user {u} says fact {i}",
                    "ts": T0.isoformat(),
                    "source": "user",
                    "metadata": "{}",
                }
            )
    stack.stream.add_many(entries[:180])
    stack.stream.add_many(entries[180:])
    for u in range(8):
        for s in range(3):
            stack.client.end_session("agent-a", f"u{u}", f"s{s}")
    ids = [str(e["turn_id"]) for e in entries]
    stack.wait_indexed(ids, timeout=120)

    assert all(stack.dispatched[name] for name in stack.dispatched), (
        f"both schedulers worked: {stack.dispatched}"
    )
    all_dispatched = [b for batches in stack.dispatched.values() for b in batches]
    assert len(all_dispatched) == len(set(all_dispatched))
    # Each batch holds exactly the episodes it claimed, ran once, and no episode sits in two batches of a kind.
    rows = _q(
        stack.repo,
        """SELECT b.id, b.episode_count, b.attempts,
                  (SELECT count(*) FROM episodes e WHERE e.full_batch_id = b.id OR e.light_batch_id = b.id)
           FROM batches b""",
    )
    assert rows
    assert all(count == members and attempts == 1 for _, count, attempts, members in rows)
    assert _q(stack.repo, "SELECT count(*), count(DISTINCT batch_id) FROM reviews") == [
        (len(rows), len(rows))
    ]
    assert _q(
        stack.repo, "SELECT count(*) FROM episodes WHERE reviewed_at IS NULL OR status = 'pending'"
    ) == [(0,)]
    (kept,) = _q(stack.repo, "SELECT count(*) FROM episodes WHERE status = 'kept'")[0]
    assert stack.index.ids() == stack.repo.indexable_point_ids()
    assert len(stack.index.ids()) >= kept


def test_entries_left_by_a_dead_scheduler_are_taken_over(stack: Stack) -> None:
    stack.stream.ensure_group("scheduler")
    ids = _write_conversation(stack, "agent-a", "ana", 5)
    stack.client.end_session("agent-a", "ana", "s1")
    # A scheduler that read everything and died before acknowledging any of it.
    taken = stack.stream.read("scheduler", "dead-scheduler", count=100, block_ms=10)
    assert len(taken) == 6
    stack.start_scheduler(claim_idle_ms=500)
    stack.wait_indexed(ids, timeout=60)
    wait_until(
        lambda: stack.stream.stats("scheduler")["pending"] == 0,
        timeout=10,
        what="the dead consumer's entries acked",
    )
    assert _q(stack.repo, "SELECT count(*) FROM episodes") == [(5,)]


# Long turns enough for one review to take seconds: long enough to be killed in the middle of it.
KILLED_TURNS = 120


def test_a_worker_killed_mid_batch_finishes_the_batch_after_restart(
    stack: Stack, worker: WorkerProcess
) -> None:
    long_text = " ".join(
        ["The quarterly planning meeting covered hiring, budgets and the robotics roadmap."] * 12
    )
    entries = [
        {
            "v": "1",
            "kind": "turn",
            "turn_id": f"k-{i}",
            "agent_id": "agent-a",
            "user_id": "ana",
            "session_id": "s1",
            "role": "user",
            "content": f"{i}: {long_text}",
            "ts": T0.isoformat(),
            "source": "user",
            "metadata": "{}",
        }
        for i in range(KILLED_TURNS)
    ]
    stack.stream.add_many(entries)
    # Written before the scheduler starts and read in one go, so they are claimed as one batch: a remainder
    # under the 30-turn trigger would otherwise wait for the session's idle review.
    stack.start_scheduler(read_count=1000)
    wait_until(
        lambda: _q(stack.repo, "SELECT count(*) FROM episodes") == [(KILLED_TURNS,)],
        timeout=30,
        what="episodes",
    )
    batch_id = wait_until(
        lambda: _q(stack.repo, "SELECT id FROM batches WHERE status = 'running'"),
        timeout=30,
        interval=0.02,
        what="the batch to start running",
    )[0][0]
    worker.kill()
    status = _q(stack.repo, "SELECT status FROM batches WHERE id = :b", b=batch_id)[0][0]
    assert status == "running", "the worker finished before it could be killed; the test proves nothing"
    assert _q(stack.repo, "SELECT episode_count FROM batches") == [(KILLED_TURNS,)]

    worker.start()
    ids = [str(e["turn_id"]) for e in entries]
    stack.wait_indexed(ids, timeout=120)
    assert _q(stack.repo, "SELECT status, attempts FROM batches WHERE id = :b", b=batch_id) == [("done", 2)]
    assert _q(stack.repo, "SELECT count(*) FROM reviews WHERE batch_id = :b", b=batch_id) == [(1,)]
    reviewed = "SELECT count(*) FROM episodes WHERE status <> 'pending' AND embedding IS NOT NULL"
    assert _q(stack.repo, reviewed) == [(KILLED_TURNS,)]
    (kept,) = _q(stack.repo, "SELECT count(*) FROM episodes WHERE status = 'kept'")[0]
    assert stack.index.ids() == stack.repo.indexable_point_ids()
    assert len(stack.index.ids()) >= kept
    assert json.loads(json.dumps(stack.repo.stats()))["outbox"]["pending"] == 0
