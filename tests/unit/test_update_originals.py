"""Every copy of the old value (issue 46): when a newer statement supersedes the assistant's echo of a
value, the user's own statement it echoed (a long request saying it in passing, which the pairwise rules
cannot read) is superseded with it, and only that one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipeline.core.review_records import Statement
from pipeline.review.updates import chain_echoes, detect

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
REQUEST = (
    "I'm rewriting the onboarding doc for our support team and I want it to read less like a legal "
    "contract. Could you help me restructure the sections so the escalation path comes first, then the "
    "tone guide, then the macros? Keep the headings short. Context you may need: we answer in English and "
    "Spanish, we close tickets after three days without a reply, and the open tickets are at 48 right now, "
    "which is why the escalation path matters so much this month."
)


def _s(i: int, minutes: int, role: str, text: str) -> Statement:
    return Statement(i, T0 + timedelta(minutes=minutes), role, None, text)


def test_the_original_and_its_echo_are_both_superseded() -> None:
    original = _s(1, 0, "user", REQUEST)
    echo = _s(2, 1, "assistant", "Got it: 48 open tickets. Here's a restructured outline.")
    other = _s(3, 2, "user", "We have 12 macros in the support tool.")  # another value: left alone
    new = _s(4, 60 * 24 * 20, "user", "Quick update: the open tickets are now at 31.")
    links = {(x.old, x.new): x.reason["rule"] for x in detect([original, echo, other, new], [])}
    assert links == {(2, 4): "value", (1, 4): "original"}


def test_no_original_without_the_old_value_or_from_another_speaker() -> None:
    unrelated = _s(1, 0, "user", REQUEST.replace("48", "many"))
    echo = _s(2, 1, "assistant", "Got it: 48 open tickets.")
    new = _s(4, 60 * 24 * 20, "user", "Quick update: the open tickets are now at 31.")
    links = {(x.old, x.new) for x in detect([unrelated, echo, new], [])}
    assert links == {(2, 4)}


def test_a_fact_chains_old_value_takes_its_echoes_and_only_those() -> None:
    # The rule table closed "$4,000" for "$2,500": the assistant's short acknowledgements of $4,000 just
    # after the user's turn go with it; a later one, a long answer, or one that states the change stay.
    said = _s(1, 0, "user", "My monthly marketing budget is $4,000, mostly for ads on Instagram.")
    echo = _s(2, 1, "assistant", "Noted: a $4,000 monthly marketing budget, mostly Instagram ads.")
    late = _s(3, 30, "assistant", "With $4,000 a month you could test two channels.")
    change = _s(4, 2, "assistant", "So it goes from $4,000 to $2,500? Noted.")
    other = _s(5, 2, "assistant", "Noted: 12 posts a month.")
    long_answer = _s(6, 3, "assistant", "Here is a plan for $4,000. " + "Step. " * 60)
    pool = [echo, late, change, other, long_answer]
    assert [s.id for s in chain_echoes(said, "$4,000", "$2,500", pool)] == [2]
    # A name stated as a value ("Berlin") is read as a name, not as a sentence's first word.
    city = _s(7, 0, "user", "I'm based in Berlin.")
    ack = _s(8, 1, "assistant", "Got it, you're based in Berlin.")
    assert [s.id for s in chain_echoes(city, "Berlin", "Munich", [ack])] == [8]
    # The assistant's own statement is no value of the user's: nothing echoes it.
    assert chain_echoes(echo, "$4,000", "$2,500", pool) == []
