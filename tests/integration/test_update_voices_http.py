"""Whose words supersede the user's (issue 44), through the real pipeline (scheduler, Celery worker, API):
a quotation, reported speech, an example, another person's or nobody's statement states no fact of the user,
so it closes no fact chain, supersedes no statement and is not served as the user's current value; and an
operator's undo of a link reopens the fact chain version that link closed, so /v1/facts and /v1/prompt agree
with recall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

AGENT, USER = "care-bot", "rui"
JAN = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)
SCOPE = {"agent_id": AGENT, "user_id": USER}


def _session(stack: Stack, session: str, turns: list[str], start: datetime) -> list[str]:
    """Write one session's user turns, a minute apart, end it and wait for its review."""
    ids = [
        stack.client.write_memory(
            AGENT, USER, session, "user", content, ts=start + timedelta(minutes=i), turn_id=f"{session}-{i}"
        )
        for i, content in enumerate(turns)
    ]
    stack.client.end_session(AGENT, USER, session)
    stack.wait_indexed(ids)
    return ids


def _get(stack: Stack, path: str, **params: Any) -> dict[str, Any]:
    response = stack.api.get(path, params={**SCOPE, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _facts(stack: Stack) -> dict[str, str]:
    return {f["attribute"]: f["value"] for f in _get(stack, "/v1/facts")["facts"]}


def _links(stack: Stack, **params: Any) -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = _get(stack, "/v1/supersessions", **params)["supersessions"]
    return links


def _recall(stack: Stack, q: str) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = _get(stack, "/v1/recall", q=q, k=10)["results"]
    return hits


def _hit(hits: list[dict[str, Any]], turn_id: str) -> dict[str, Any]:
    return next(h for h in hits if turn_id in h["source_turn_ids"])


def test_a_quotation_or_reported_speech_closes_no_fact_of_the_user(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", ["I live in Lisbon.", "I work at Google as an engineer."], JAN)
    _session(
        stack,
        "s2",
        ['He said: "I live in Paris now."', "Quote from the book: I work at Microsoft as an engineer now."],
        MAR,
    )
    facts = _facts(stack)
    assert facts["location"] == "Lisbon", facts
    assert facts["employer"] == "Google", facts
    assert _links(stack) == []
    prompt = _get(stack, "/v1/prompt")["prompt"]
    assert "Lisbon" in prompt
    assert "Google" in prompt
    assert "Paris" not in prompt
    assert "Microsoft" not in prompt
    home = _recall(stack, "Where do I live?")
    assert home[0]["source_turn_ids"] == ["s1-0"], home
    assert _hit(home, "s1-0")["superseded"] is False
    job = _recall(stack, "Where do I work?")
    assert _hit(job, "s1-1")["superseded"] is False


def test_undo_reopens_the_fact_chain_version_the_link_closed(stack: Stack) -> None:
    stack.start_scheduler()
    _session(stack, "s1", ["I work at Google as an engineer."], JAN)
    _session(stack, "s2", ["I work at Microsoft as an engineer now."], MAR)
    assert _facts(stack)["employer"] == "Microsoft"
    (link,) = [x for x in _links(stack) if (x["old"]["turn_id"], x["new"]["turn_id"]) == ("s1-0", "s2-0")]

    response = stack.api.post(
        f"/v1/supersessions/{link['id']}/undo",
        json={**SCOPE, "reason": "that was a quote, not me", "actor": "ops-ana"},
    )
    assert response.status_code == 200, response.text
    hits = _recall(stack, "Where do I work?")
    assert _hit(hits, "s1-0")["superseded"] is False
    # The fact chain agrees with recall: Google holds again, Microsoft was never the user's value.
    assert _facts(stack)["employer"] == "Google"
    prompt = _get(stack, "/v1/prompt")["prompt"]
    assert "Google" in prompt
    assert "Microsoft" not in prompt
    history = _get(stack, "/v1/facts", history=True)["facts"]
    microsoft = next(f for f in history if f["value"] == "Microsoft")
    assert microsoft["retracted_at"] is not None
    with stack.repo.engine.connect() as conn:
        (changes,) = conn.execute(
            text("SELECT changes FROM memory_audit WHERE action = 'undo_supersede'")
        ).scalars()
    assert changes["facts_retracted"] == [microsoft["id"]]
    assert len(changes["facts_reopened"]) == 1
    # A later review leaves it so: the undone pair is never linked again, nor the chain closed again.
    stack.full_review(AGENT, USER)
    assert _links(stack, include_undone=False) == []
    assert _facts(stack)["employer"] == "Google"


def test_another_persons_or_nobodys_statement_never_supersedes_the_users(stack: Stack) -> None:
    stack.start_scheduler()
    _session(
        stack,
        "s1",
        [
            "I'm allergic to peanuts.",
            "I'm allergic to penicillin.",
            "I take 20mg of lisinopril daily.",
            "I run every morning before work.",
        ],
        JAN,
    )
    _session(
        stack,
        "s2",
        [
            "My sister's not allergic to peanuts anymore.",
            "Turns out nobody here is allergic to penicillin anymore.",
            "Dosage example: I take 40mg of lisinopril daily now.",
            "The doctor said I should no longer run in the mornings before work.",
        ],
        MAR,
    )
    assert _links(stack) == []
    facts = _facts(stack)
    assert facts["allergy:peanuts"] == "allergic", facts
    assert facts["allergy:penicillin"] == "allergic", facts
    hits = _recall(stack, "What am I allergic to?")
    assert hits[0]["source_turn_ids"] in (["s1-0"], ["s1-1"]), hits
    assert _hit(hits, "s1-0")["superseded"] is False
    assert _hit(hits, "s1-1")["superseded"] is False
    assert _hit(_recall(stack, "How much lisinopril do I take?"), "s1-2")["superseded"] is False
    assert _hit(_recall(stack, "Do I still run in the mornings?"), "s1-3")["superseded"] is False
