"""Consolidated memories that reach the agent (issue 40), through the real pipeline and `GET /v1/recall`: a
preference restated across sessions in other words becomes one coherent memory that says it, ranks first for
the question an agent asks, and stands in for the turns it states; the switch turns memories off again; a
memory review did not find coherent is never returned."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
AGENT, USER = "concierge", "maya"
# (session, role, text, turn id); the three brevity requests share no word MiniLM would group them by.
TURNS = [
    (0, "user", "What's a quick pasta I can make tonight?", "t-0"),
    (0, "assistant", "A garlic and chili spaghetti takes 15 minutes.", "t-1"),
    (0, "user", "too wordy", "brief-1"),
    (1, "user", "How do I fix a leaking tap?", "t-2"),
    (1, "assistant", "Turn off the water, then replace the washer under the handle.", "t-3"),
    (1, "user", "can you be shorter", "brief-2"),
    (1, "assistant", "Sure, I'll keep it shorter.", "ack-2"),
    (2, "user", "Recommend a sci-fi novel.", "t-4"),
    (2, "assistant", "Try The Dispossessed by Ursula K. Le Guin.", "t-5"),
    (2, "user", "My coworker writes really long emails, it's exhausting.", "near-1"),
    (3, "user", "just the gist, please", "brief-3"),
    (3, "user", "Plan a weekend in Porto for me.", "t-6"),
    (3, "assistant", "Day 1: Ribeira and the bridge; day 2: Livraria Lello.", "t-7"),
]
BRIEF = {"brief-1", "brief-2", "brief-3"}


def _ingest(stack: Stack) -> None:
    stack.start_scheduler()
    ids = [
        stack.client.write_memory(
            AGENT, USER, f"s{s}", role, content, ts=T0 + timedelta(days=7 * s, minutes=i), turn_id=turn_id
        )
        for i, (s, role, content, turn_id) in enumerate(TURNS)
    ]
    for s in sorted({s for s, *_ in TURNS}):
        stack.client.end_session(AGENT, USER, f"s{s}")
    stack.wait_indexed(ids)
    stack.full_review(AGENT, USER, timeout=90)


def _memories(stack: Stack) -> list[Any]:
    with stack.repo.engine.connect() as conn:
        return list(
            conn.execute(
                text(
                    "SELECT m.id, m.text, m.method, m.coherent, array_agg(e.turn_id ORDER BY e.ts) AS members, "
                    "array_agg(e.turn_id ORDER BY e.ts) FILTER (WHERE s.stated) AS stated "
                    "FROM semantic_memories m JOIN semantic_members s ON s.memory_id = m.id "
                    "JOIN episodes e ON e.id = s.episode_id WHERE m.valid_to IS NULL GROUP BY m.id"
                )
            )
        )


def _recall(stack: Stack, q: str, k: int = 5) -> list[dict[str, Any]]:
    return stack.recall(q, AGENT, USER, k=k)


def test_a_restated_preference_is_one_memory_that_reaches_the_agent_first(stack: Stack) -> None:
    _ingest(stack)
    memories = _memories(stack)
    brief = [m for m in memories if BRIEF & set(m.members)]
    assert len(brief) == 1, [(m.text, m.members) for m in memories]
    memory = brief[0]
    # One memory, of one subject: the three requests and the assistant's acknowledgement, not the near miss.
    assert set(memory.members) == BRIEF | {"ack-2"}, memory.members
    assert memory.coherent
    assert memory.method == "restated"
    # The latest wording leads, the earlier ones quoted: the text states every member it stands in for.
    assert memory.text.startswith("Just the gist"), memory.text
    assert '"Too wordy"' in memory.text, memory.text
    assert '"Can you be shorter"' in memory.text, memory.text
    assert set(memory.stated or ()) >= BRIEF, memory.stated

    hits = _recall(stack, "How long should my answers be?")
    top = hits[0]
    assert top["kind"] == "semantic", [(h["kind"], h["text"][:40], h["score"]) for h in hits]
    assert set(top["source_turn_ids"]) >= BRIEF
    assert set(top["speaks_for"]) >= BRIEF
    # It stands in for them: none of the three turns is listed again.
    listed = [t for h in hits[1:] for t in h["source_turn_ids"]]
    assert not BRIEF & set(listed), [(h["text"], h["source_turn_ids"]) for h in hits]
    # Provenance: each member is still recallable on its own words.
    assert any("brief-2" in h["source_turn_ids"] for h in _recall(stack, "can you be shorter", k=10))


def test_the_switch_turns_semantic_memories_off_and_an_incoherent_memory_is_never_returned(
    stack: Stack,
) -> None:
    _ingest(stack)
    q = "How long should my answers be?"
    assert any(h["kind"] == "semantic" for h in _recall(stack, q, k=10))

    deps = stack.api.app.state.deps
    saved = deps.tuning
    deps.tuning = replace(saved, semantic=False)  # what HINDSIGHT_RECALL__SEMANTIC=false sets (create_app)
    try:
        off = _recall(stack, q, k=10)
    finally:
        deps.tuning = saved
    assert all(h["kind"] == "episode" for h in off), off
    assert BRIEF & {t for h in off for t in h["source_turn_ids"]}, "the turns themselves are still recalled"

    # A memory review did not find coherent (one written before issue 40, say) is never returned, and its
    # members come back as themselves.
    with stack.repo.engine.begin() as conn:
        conn.execute(text("UPDATE semantic_memories SET coherent = false"))
    hidden = _recall(stack, q, k=10)
    assert all(h["kind"] == "episode" for h in hidden), hidden
    assert BRIEF & {t for h in hidden for t in h["source_turn_ids"]}
