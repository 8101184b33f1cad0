"""A memory of the user's requests holds the user's own voice only (issue 44; restatements.own_voice): what
someone else says or wants, and what the user asks on someone else's behalf, is no standing request of
theirs, never joins or leads their memory, and never makes theirs "no longer" hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.review import restatements as r

T0 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def said(session: int, text: str, *, old: bool = False) -> r.Said:
    return r.Said("user", f"s{session}", T0 + timedelta(days=session), text, frozenset(), old)


@pytest.mark.parametrize(
    "text",
    [
        # reported speech: a holder with a verb of saying or wanting governs the sentence
        "My manager always says: please give long, detailed answers.",
        "Keep it short, my boss said.",
        "My boss wants detailed answers from now on.",
        "The team lead said to use tables.",
        'He said: "keep your answers long and detailed".',
        '"Give long answers" - my manager',
        "As the book says, always use examples.",
        "Quote from the book: always cite sources.",
        "My wife's sister keeps saying I should ask for bullet points.",
        "老板总是说：回答要详细。",
        # another person is the clause's subject, or the request's recipient
        "My mom only reads Spanish, please answer her in Spanish.",
        "She hates emojis.",
        "Our team prefers markdown tables.",
        "Please write to my boss in a formal tone.",
        # what is left once another's clause is out is no short complaint of the user's
        "My coworker gives really long answers in every meeting, it drives everyone crazy.",
        "我妈只看得懂西班牙语，请用西班牙语回复她。",
        "请给我妈回复用中文",
    ],
)
def test_someone_elses_wish_is_not_the_users_request(text: str) -> None:
    assert r.subjects(text), "it names a subject: only the voice keeps it out"
    assert not r.is_request("user", text)


@pytest.mark.parametrize(
    "text",
    [
        "Keep your answers short please.",
        "I said keep it short!",
        "You said you'd keep it short.",
        "They are too long, cut them down.",  # "they" is the answers
        "Nobody wants long answers, keep it short.",
        "My mom only reads Spanish, so please answer in Spanish.",  # the user's own ask, for a reason
        "My time zone is CET, please use it.",
        "My name is Ana, call me Ana.",
        'Please stop saying "Great question".',
        "以后回答简短一点",
    ],
)
def test_the_users_own_voice_stays_a_request(text: str) -> None:
    assert r.is_request("user", text)


MANAGER = [
    said(0, "Keep your answers short please."),
    said(1, "Please keep answers short."),
    said(2, "My manager always says: please give long, detailed answers."),
]


def test_a_reported_wish_never_joins_or_leads_the_users_memory() -> None:
    (group,) = r.group(MANAGER)
    assert group.requests == (0, 1)
    s = r.statement(MANAGER, group)
    assert s.text == 'Please keep answers short. Earlier: "Keep your answers short please".'
    assert 2 not in s.stated


def test_a_flag_no_newer_wording_of_the_user_explains_does_not_say_no_longer() -> None:
    # Issue 39's links flagged both requests superseded by the manager's words: nothing the user said later
    # on the subject changed them, so they hold and the memory says so.
    flagged = [
        said(0, "Keep your answers short please.", old=True),
        said(1, "Please keep answers short.", old=True),
    ]
    s = r.statement(flagged, r.Group("answer_length", (0, 1)))
    assert s.text == 'Please keep answers short. Earlier: "Keep your answers short please".'
    # Only the newest flagged (a chain, not a clique): the same.
    chain = [said(0, "Keep your answers short please."), said(1, "Please keep answers short.", old=True)]
    assert r.statement(chain, r.Group("answer_length", (0, 1))).text == s.text
    # The user's own newer wording does change it.
    changed = [*flagged, said(3, "Actually, detailed answers from now on please.")]
    text = r.statement(changed, r.Group("answer_length", (0, 1, 2))).text
    assert text.startswith("Actually, detailed answers from now on please. (no longer: "), text
