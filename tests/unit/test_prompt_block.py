"""pipeline.recall.prompt_block: current facts, preferences and tool insights cut to a token budget; and
the rule that only user turns state facts about the user (a tool's output never does)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.recall.prompt_block import build, estimate_tokens, fact_line
from pipeline.review.fact_extraction import extract

FACTS = [
    {"entity": "user", "attribute": "location", "value": "Lisbon", "valid_from": "2026-05-02"},
    {"entity": "user", "attribute": "preference:jazz", "value": "dislikes", "valid_from": "2026-05-03"},
    {"entity": "sister", "attribute": "home_city", "value": "Berlin", "valid_from": "2026-05-01"},
]
INSIGHTS = [{"text": "For flight search, `flights.search` with dates succeeds 93% of the time."}]


def test_lines_read_naturally() -> None:
    assert [fact_line(f) for f in FACTS] == ["location: Lisbon", "dislikes: jazz", "sister home city: Berlin"]


def test_everything_fits_a_roomy_budget_in_section_order() -> None:
    block = build(FACTS, INSIGHTS, budget_tokens=400)
    assert block.text.split("\n") == [
        "What is true about the user now:",
        "- location: Lisbon",
        "- sister home city: Berlin",
        "The user's preferences:",
        "- dislikes: jazz",
        "What you have learnt about your tools:",
        "- " + INSIGHTS[0]["text"],
    ]
    assert block.left_out == 0
    assert block.tokens == estimate_tokens(block.text)


@pytest.mark.parametrize("budget", [5, 12, 20, 30, 45])
def test_a_tight_budget_is_never_exceeded(budget: int) -> None:
    block = build(FACTS, INSIGHTS, budget_tokens=budget)
    assert block.tokens <= budget
    assert len(block.text) <= 4 * budget
    assert block.left_out == 4 - sum(block.included.values())
    assert block.left_out > 0


def test_estimate_is_characters_over_four_rounded_up() -> None:
    assert (estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")) == (0, 1, 2)


@pytest.mark.parametrize("role", ["tool", "assistant", "system"])
def test_only_user_turns_state_facts_about_the_user(role: str) -> None:
    ts = datetime(2026, 5, 1, tzinfo=UTC)
    said = "I live in Paris. I like jazz."
    assert extract(said, role="user", source="user", ts=ts, turn_id="u", metadata={}).facts
    assert extract(said, role=role, source="tool", ts=ts, turn_id="t", metadata={}).facts == ()
