"""Near-duplicate folding never merges two turns that differ in a value (issue 44): "the hotel room is 105"
and the same sentence with 106 sit at cosine 0.98 and share all words but one, yet state two rooms. Through
the HTTP API with a real worker and a full review, both stay episodes of their own and both are recalled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
AGENT, USER = "concierge", "noor"
ROOM = (
    "Reminder for my trip: the hotel room is {} on the fourth floor, breakfast is served from seven to ten, "
    "and the shuttle to the airport leaves from the main entrance."
)
GATE = "My flight to Berlin leaves on March 3 at 10:30 from gate {}, please remind me the day before."
TURNS = [  # (session, text, turn id): each pair differs only in its number
    ("s1", ROOM.format(105), "room-105"),
    ("s2", ROOM.format(106), "room-106"),
    ("s1", GATE.format(12), "gate-12"),
    ("s2", GATE.format(14), "gate-14"),
]


def test_turns_that_differ_only_in_a_number_both_stay_recallable(stack: Stack) -> None:
    stack.start_scheduler()
    ids = []
    for i, (session, content, turn_id) in enumerate(TURNS):
        ids.append(
            stack.client.write_memory(
                AGENT, USER, session, "user", content, ts=T0 + timedelta(days=i), turn_id=turn_id
            )
        )
    for session in ("s1", "s2"):
        stack.client.end_session(AGENT, USER, session)
    stack.wait_indexed(ids)
    stack.full_review(AGENT, USER, timeout=90)

    with stack.repo.engine.connect() as conn:
        status = dict(conn.execute(text("SELECT turn_id, status FROM episodes")).all())
    assert status == {turn_id: "kept" for *_, turn_id in TURNS}, status

    for q, wanted in (
        ("which hotel room am I in", {"room-105", "room-106"}),
        ("flight gate", {"gate-12", "gate-14"}),
    ):
        hits = stack.recall(q, AGENT, USER, k=10)
        found = {t for h in hits for t in h["source_turn_ids"]}  # type: ignore[attr-defined]
        assert wanted <= found, [(h["text"], h["source_turn_ids"]) for h in hits]
        # Each value is recalled as itself: no hit speaks for the other number's turn.
        for h in hits:
            if h["kind"] == "episode":
                assert len(wanted & set(h["source_turn_ids"])) <= 1, h  # type: ignore[arg-type]
