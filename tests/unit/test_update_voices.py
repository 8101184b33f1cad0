"""Whose words they are (issue 44): a quotation, reported speech, an example, another person's or nobody's
statement neither supersedes the user's statement nor states a fact of the user; health and allergy facts
change only with the user's own word."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.core.review_records import Statement
from pipeline.review.claims import claim
from pipeline.review.fact_extraction import extract
from pipeline.review.updates import verdict

T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def _links(old: str, new: str) -> bool:
    pair = Statement(1, T0, "user", None, old), Statement(2, T0 + timedelta(days=3), "user", None, new)
    return verdict(*pair) is not None


NOT_THE_USER = [
    ("I'm allergic to peanuts.", "My sister's not allergic to peanuts anymore."),
    ("I'm allergic to peanuts.", "My son's not allergic to peanuts anymore."),
    ("My weight is 80 kg", "My boss's weight is 90 kg now"),
    ("My weight is 80 kg", "The kid's weight is 30 kg now"),
    ("I'm allergic to penicillin.", "Turns out nobody here is allergic to penicillin anymore"),
    ("I take 20mg of lisinopril daily.", "Dosage example: I take 40mg of lisinopril daily now"),
    ("I run every morning", "The doctor said I should no longer run in the mornings"),
    ("I live in Lisbon.", 'He said: "I live in Paris now."'),
    ("I work at Google as an engineer.", "Quote from the book: I work at Microsoft as an engineer now."),
    ("The Atlas budget is 50k.", "For example: the Atlas budget is 80k now."),
]


@pytest.mark.parametrize(("old", "new"), NOT_THE_USER)
def test_someone_elses_words_never_supersede_the_users(old: str, new: str) -> None:
    assert not _links(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I'm allergic to peanuts.", "I'm not allergic to peanuts anymore."),
        ("I take 20mg of lisinopril daily.", "I take 40mg of lisinopril daily now"),
        ("I run every morning", "I no longer run in the mornings"),
        ("I work at Google as an engineer.", "I work at Microsoft as an engineer now."),
        ("My weight this morning is 80.5 kg", "My weight this morning is 80.9 kg"),
    ],
)
def test_the_users_own_change_still_supersedes(old: str, new: str) -> None:
    assert _links(old, new)


@pytest.mark.parametrize(
    ("text", "holder"),
    [
        ("My sister's not allergic to peanuts anymore.", "sister"),
        ("my boss's budget is 5k", "boss"),
        ("the kid's bedtime is 8pm", "kid"),
        ("nobody here is allergic anymore", "nobody"),
        ('He said: "I live in Paris now."', "~reported"),
        ("Quote: I live in Paris now.", "~quote"),  # not read as a chat export's speaker "Quote"
        ("e.g. I live in Paris now", "~example"),
    ],
)
def test_holders_are_read_by_grammar(text: str, holder: str) -> None:
    assert holder in claim(text).holders


def test_health_needs_the_speakers_own_word() -> None:
    assert claim("I'm allergic to penicillin").health
    assert not claim("nobody here is allergic to penicillin anymore").first_person


def _facts(text: str) -> set[tuple[str, str]]:
    got = extract(text, role="user", source="chat", ts=T0, turn_id="t1", metadata={})
    return {(f.attribute, f.value) for f in got.facts}


@pytest.mark.parametrize(
    "text",
    [
        'He said: "I live in Paris now."',
        "Quote from the book: I work at Microsoft as an engineer now.",
        "For example, I live in Paris.",
        '"I moved to Berlin. I work at SAP," she wrote.',
        "The doctor says I'm allergic to penicillin.",
    ],
)
def test_quoted_reported_or_example_text_states_no_fact(text: str) -> None:
    assert _facts(text) == set()


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ('He said: "I live in Paris." I live in Rome.', {("location", "Rome")}),
        ("You said I live in Paris, but I live in Lyon.", {("location", "Lyon")}),
        ("I said I live in Paris", {("location", "Paris")}),
    ],
)
def test_the_users_own_words_beside_a_quotation_still_count(text: str, facts: set[tuple[str, str]]) -> None:
    assert _facts(text) == facts
