"""A memory of the user's requests holds the user's own voice only (issue 44): reported speech ("my manager
always says: ...") and a request on someone else's behalf ("please answer her in Spanish") are not the
user's standing request, never lead or supersede the user's own, and recall serves the user's request first.
Through the HTTP API with a real worker and a full review."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
AGENT, USER = "concierge", "ines"


def _ingest(stack: Stack, turns: list[tuple[int, str, str, str]]) -> None:
    stack.start_scheduler()
    ids = [
        stack.client.write_memory(
            AGENT, USER, f"s{s}", role, content, ts=T0 + timedelta(days=7 * s, minutes=i), turn_id=turn_id
        )
        for i, (s, role, content, turn_id) in enumerate(turns)
    ]
    for s in sorted({s for s, *_ in turns}):
        stack.client.end_session(AGENT, USER, f"s{s}")
    stack.wait_indexed(ids)
    stack.full_review(AGENT, USER, timeout=90)


def _memories(stack: Stack) -> list[Any]:
    with stack.repo.engine.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT m.id, m.text, array_agg(e.turn_id ORDER BY e.ts) AS members "
                    "FROM semantic_memories m JOIN semantic_members s ON s.memory_id = m.id "
                    "JOIN episodes e ON e.id = s.episode_id WHERE m.valid_to IS NULL GROUP BY m.id"
                )
            )
        )


def _show(hits: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    return [(h["kind"], h["text"][:70], h["source_turn_ids"]) for h in hits]


def test_a_managers_reported_words_do_not_replace_the_users_own_request(stack: Stack) -> None:
    _ingest(
        stack,
        [
            (0, "user", "What's a good stretch for a stiff neck?", "t-0"),
            (0, "assistant", "Try slow chin tucks, ten at a time.", "t-1"),
            (0, "user", "Keep your answers short please.", "own-1"),
            (1, "user", "How do I descale a kettle?", "t-2"),
            (1, "assistant", "Boil a mix of water and vinegar, then rinse twice.", "t-3"),
            (1, "user", "Please keep answers short.", "own-2"),
            (2, "user", "My manager always says: please give long, detailed answers.", "boss"),
            (2, "user", "Draft an agenda for Monday's team sync.", "t-4"),
            (2, "assistant", "1. Updates 2. Blockers 3. Next steps.", "t-5"),
        ],
    )
    mine = [m for m in _memories(stack) if {"own-1", "own-2"} & set(m.members)]
    assert len(mine) == 1, [(m.text, m.members) for m in _memories(stack)]
    memory = mine[0]
    assert "short" in memory.text.lower(), memory.text
    assert "manager" not in memory.text.lower(), memory.text
    assert "long" not in memory.text.lower(), memory.text
    assert "no longer" not in memory.text, memory.text  # the user never changed their mind
    assert "boss" not in memory.members, memory.members

    hits = stack.recall("how long should answers be", AGENT, USER, k=5)
    assert {"own-1", "own-2"} & set(hits[0]["source_turn_ids"]), _show(hits)
    assert "short" in hits[0]["text"].lower(), _show(hits)
    first_boss = next((k for k, h in enumerate(hits) if "boss" in h["source_turn_ids"]), len(hits))
    assert first_boss > 0, _show(hits)


def test_a_request_on_someone_elses_behalf_does_not_replace_the_users_own(stack: Stack) -> None:
    _ingest(
        stack,
        [
            (0, "user", "Please answer in English.", "own-1"),
            (0, "assistant", "Sure, English it is.", "ack-1"),
            (1, "user", "Recommend a podcast about history.", "t-0"),
            (1, "assistant", "Try The Rest Is History.", "t-1"),
            (1, "user", "Always reply in English, please.", "own-2"),
            (2, "user", "My mom only reads Spanish, please answer her in Spanish.", "mom"),
        ],
    )
    mine = [m for m in _memories(stack) if {"own-1", "own-2"} & set(m.members)]
    assert len(mine) == 1, [(m.text, m.members) for m in _memories(stack)]
    memory = mine[0]
    assert "english" in memory.text.lower(), memory.text
    assert "spanish" not in memory.text.lower(), memory.text
    assert "no longer" not in memory.text, memory.text
    assert "mom" not in memory.members, memory.members

    hits = stack.recall("which language should I reply in", AGENT, USER, k=5)
    assert {"own-1", "own-2"} & set(hits[0]["source_turn_ids"]), _show(hits)
    assert "english" in hits[0]["text"].lower(), _show(hits)
