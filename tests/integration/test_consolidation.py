"""Review part 2 through the real pipeline: HDBSCAN consolidation into versioned semantic memories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.helpers import PARAPHRASES, UNRELATED, wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T1 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2026, 2, 8, 9, 0, tzinfo=UTC)
T3 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _rows(stack: Stack, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with stack.repo.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), params)]


def _session(stack: Stack, session: str, contents: list[str], start: datetime) -> list[str]:
    ids = [
        stack.client.write_memory(
            "agent-a", "mo", session, "user", c, ts=start + timedelta(minutes=i), turn_id=f"{session}-{i}"
        )
        for i, c in enumerate(contents)
    ]
    stack.client.end_session("agent-a", "mo", session)
    stack.wait_indexed(ids)
    return ids


def _full_review(stack: Stack) -> list[int]:
    batch_ids = stack.full_review("agent-a", "mo")
    wait_until(lambda: stack.repo.outbox_lag()[0] == 0, timeout=30, what="the outbox to drain")
    return batch_ids


def test_paraphrases_become_one_versioned_semantic_memory_that_a_change_of_mind_closes(stack: Stack) -> None:
    stack.start_scheduler()
    first = _session(stack, "s1", PARAPHRASES[:2] + UNRELATED[:3], T1)
    second = _session(stack, "s2", PARAPHRASES[2:] + UNRELATED[3:], T2)
    paraphrase_turns = {first[0], first[1], second[0], second[1]}
    assert len(_full_review(stack)) == 1

    memories = _rows(stack, "SELECT id, text, valid_from, valid_to, version FROM semantic_memories")
    assert len(memories) == 1
    memory_id, statement, valid_from, valid_to, version = memories[0]
    assert (valid_from, valid_to, version) == (T1, None, 1)
    assert statement
    members = {
        t
        for (t,) in _rows(
            stack,
            "SELECT e.turn_id FROM semantic_members m JOIN episodes e "
            "ON e.id = m.episode_id WHERE m.memory_id = :m",
            m=memory_id,
        )
    }
    assert members == paraphrase_turns  # and the unrelated turns stayed apart
    (counts,) = _rows(stack, "SELECT counts FROM reviews WHERE kind = 'full'")[0]
    assert counts["clusters"] == 1
    assert counts["memories_created"] == 1
    assert [(counts["clustered"],)] == _rows(stack, "SELECT count(*) FROM episodes WHERE status = 'kept'")

    # Recall returns the memory first for a question about its subject (issue 40), with the paraphrases as
    # its provenance; review folds them without lowering their weight, so they decay from their own.
    hits = stack.recall("how long should your answers be", "agent-a", "mo", k=10)
    assert hits[0]["kind"] == "semantic", hits
    assert set(hits[0]["source_turn_ids"]) == paraphrase_turns  # type: ignore[arg-type]
    assert _rows(stack, "SELECT DISTINCT weight, base_weight FROM episodes WHERE consolidated") == [
        (1.0, 1.0)
    ]

    # Reviewing again with nothing new in the cluster adds no duplicate and no version.
    _session(stack, "s3", ["My sister's wedding is in Lisbon in June."], T3)
    _full_review(stack)
    assert _rows(stack, "SELECT count(*), max(version) FROM semantic_memories") == [(1, 1)]

    # A change of mind closes the old memory instead of leaving it to contradict the new preference.
    _session(stack, "s4", ["Actually, now I want detailed answers with examples."], T3 + timedelta(days=1))
    (closed_at,) = _rows(stack, "SELECT valid_to FROM semantic_memories WHERE id = :m", m=memory_id)[0]
    assert closed_at is not None
    assert _rows(stack, "SELECT count(*) FROM semantic_memories WHERE valid_to IS NULL") == [(0,)]
    hits = stack.recall("how long should your answers be", "agent-a", "mo", k=5)
    assert all(h["kind"] == "episode" for h in hits)
    assert "s4-0" in {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]
    assert stack.index.count() == len(stack.repo.indexable_point_ids())
