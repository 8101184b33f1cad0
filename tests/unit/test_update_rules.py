"""Update detection's rules (pipeline/review/updates.py, claims.py): which newer statement supersedes which
older one, in English, Chinese and mixed text, and the look-alikes that must never link (issue 39)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.core.review_records import Statement
from pipeline.review.claims import claim
from pipeline.review.updates import detect, verdict

T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def _pair(
    old: str,
    new: str,
    *,
    old_role: str = "user",
    new_role: str = "user",
    old_speaker: str | None = None,
    new_speaker: str | None = None,
) -> tuple[Statement, Statement]:
    return (
        Statement(1, T0, old_role, old_speaker, old),
        Statement(2, T0 + timedelta(days=30), new_role, new_speaker, new),
    )


UPDATES = [
    ("The Atlas budget is 50k.", "We bumped the Atlas budget to 80k.", "value"),
    ("Our test coverage target is 80%", "coverage target is now 90%", "value"),
    ("API quota is 1000 requests per day", "the API quota went up to 5000 requests a day", "value"),
    ("My favourite drink is tea", "My favourite drink is coffee now", "value"),
    (
        "The Atlas project deadline is Friday the 14th.",
        "The Atlas project deadline moved to Monday the 24th.",
        "value",
    ),
    ("I run every morning", "I no longer run in the mornings", "negation"),
    ("通知发到飞书", "以后通知发钉钉", "value"),
    ("项目预算是5万", "项目预算改成8万了", "value"),
    ("我每天早上跑步", "我不再早上跑步了", "negation"),
    ("截止日期是14号", "截止日期改到24号了", "value"),
    ("standup 在周二", "standup 改到周四了", "value"),
    # "once a week" is a frequency, not history ("I once lived in Rome")
    ("I go swimming once a week.", "I go swimming three times a week now.", "slot"),
]


@pytest.mark.parametrize(("old", "new", "rule"), UPDATES)
def test_a_newer_statement_of_the_same_subject_supersedes_the_older(old: str, new: str, rule: str) -> None:
    why = verdict(*_pair(old, new))
    assert why is not None
    assert why["rule"] == rule
    # Never the other way round: the older statement does not supersede the newer.
    a, b = _pair(old, new)
    assert verdict(b, a) is None


LOOK_ALIKES = [
    ("I like tea.", "I like coffee.", {}),  # both hold
    ("My sister lives in Paris.", "I live in Lyon.", {}),  # another holder
    ("The Atlas budget is 50k.", "The Borealis budget is 80k.", {}),  # another project
    ("The budget is 50k.", "Is the budget 60k?", {}),  # a question
    ("The budget is 50k.", "You could raise the budget to 60k.", {"new_role": "assistant"}),  # a suggestion
    ("The budget is 50k.", "You could raise the budget to 60k.", {}),  # the user quoting one
    ("If we had 100k budget we'd hire", "The budget is 50k", {}),  # a hypothetical
    ("I live in Milan", "I used to live in Rome", {}),  # the past
    ("I like tea", "I also like coffee", {}),  # "also"
    ("The budget is 50k", "The budget is 50k", {}),  # the same value
    ("I live in Lyon", "I live in Paris now", {"old_speaker": "Mei", "new_speaker": "Jon"}),  # another person
    (
        "page 500 of our list endpoint is super slow",
        "page 500 of our list endpoint is super slow — oh and I spent 20 minutes chasing the rabbit",
        {},
    ),  # a number in an aside
    ("Thanks, Gina! Keep going.", "Thanks, Dave! Keep going.", {}),  # names addressed, not stated
    ("made ramen and it was mid", "made a burrito and it was mid", {}),  # two events
    ("could you output the entire accounts.py", "could you output the entire services.py", {}),  # requests
    ("我喜欢喝茶", "我也喜欢喝咖啡", {}),
    ("我妹妹住在巴黎", "我住在里昂", {}),
    # A plan beside the fact it means to change (issue 46): the fact holds until it is done.
    ("I sleep about 6 hours a night.", "Now I want to sleep 8 hours a night, starting next month.", {}),
    ("I run 10 km a week.", "I'm now going to run 20 km a week from next month.", {}),
    ("我现在每天跑3公里。", "我准备下个月开始每天跑5公里。", {}),
]


@pytest.mark.parametrize(("old", "new", "who"), LOOK_ALIKES)
def test_look_alikes_that_are_both_true_never_link(old: str, new: str, who: dict[str, str]) -> None:
    assert verdict(*_pair(old, new, **who)) is None


def test_an_assistant_echo_of_the_old_value_is_superseded_but_the_assistant_never_supersedes() -> None:
    echo = Statement(1, T0, "assistant", None, "Noted: the Atlas budget is 50,000 dollars.")
    user = Statement(2, T0 + timedelta(days=3), "user", None, "We bumped the Atlas budget to 80,000 dollars.")
    assert verdict(echo, user) is not None
    later_echo = Statement(
        3, T0 + timedelta(days=4), "assistant", None, "Got it: the Atlas budget is 90,000."
    )
    assert verdict(user, later_echo) is None
    long_answer = Statement(
        4, T0, "assistant", None, "The Atlas budget is 50,000 dollars. " + "Details. " * 60
    )
    assert verdict(long_answer, user) is None  # an answer of its own, not an echo


def test_a_chat_export_prefix_names_the_speaker() -> None:
    mine = Statement(1, T0, "user", None, "Mei: the gym closes at 9pm")
    theirs = Statement(2, T0 + timedelta(days=1), "user", None, "Jon: the gym closes at 10pm now")
    again = Statement(3, T0 + timedelta(days=2), "user", None, "Mei: the gym closes at 10pm now")
    assert verdict(mine, theirs) is None
    assert verdict(mine, again) is not None


def test_detect_links_both_ways_and_skips_refused_pairs() -> None:
    old = Statement(1, T0, "user", None, "Our staging API quota is 1,000 requests per minute.")
    new = Statement(
        2, T0 + timedelta(days=9), "user", None, "Our staging API quota went up to 5,000 requests per minute."
    )
    other = Statement(3, T0 + timedelta(days=1), "user", None, "I like green tea.")
    # A late batch holding the older statement still links it to the newer one reviewed before.
    (link,) = detect([old], [new, other])
    assert (link.old, link.new, link.valid_from) == (1, 2, new.ts)
    assert detect([old], [new, other], refused=[(1, 2)]) == []


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("The budget is 50k", {"n:50000"}),
        ("预算是5万元", {"n:50000"}),
        ("$1,200 a month", {"n:1200"}),
        ("meet at 3pm on Friday", {"t:15:00", "d:fri"}),
        ("deadline is the 14th", {"d:14"}),
        ("we moved from Slack to Teams", {"p:slack", "p:teams"}),
        ("Thanks, Gina!", set()),
    ],
)
def test_values_are_read_by_kind(text: str, values: set[str]) -> None:
    assert claim(text).values == values
