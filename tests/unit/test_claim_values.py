"""Values read from a turn (pipeline/review/claims.py): numbers written in Chinese characters are read whole,
as people say them, and words that only look like numbers are not values."""

from __future__ import annotations

import pytest

from pipeline.recall.value_order import Said, order
from pipeline.review.claims import all_values, claim


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("我现在月薪一万五。", "n:15000"),  # a digit after a unit counts in the next smaller unit
        ("房租三千二一个月", "n:3200"),
        ("两百五", "n:250"),
        ("一万五千块", "n:15000"),  # was 5,000: the 一 of 一万 was dropped as an article
        ("一百二十个", "n:120"),
        ("一万零五", "n:10005"),  # after 零 a digit counts as itself
        ("二十", "n:20"),
        ("十五", "n:15"),
        ("预算被砍到五万了", "n:50000"),
        ("一亿两千万", "n:1.2e+08"),
        ("我有三个孩子", "n:3"),
        ("三点开会", "t:3:zh"),
    ],
)
def test_a_number_in_characters_is_read_whole(text: str, value: str) -> None:
    assert value in all_values(text)


@pytest.mark.parametrize(
    "text", ["我们一起去", "一个月后", "十分好", "千万别忘了", "万一下雨", "一点点", "一二三"]
)
def test_words_that_only_look_like_numbers_are_not_values(text: str) -> None:
    assert not {v for v in all_values(text) if v[0] in "nt"}


def test_a_previous_question_gets_the_older_salary_written_in_characters() -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 3, 1, tzinfo=UTC)
    old = Said(0, now - timedelta(days=40), "user", "我现在月薪一万二。")
    new = Said(1, now - timedelta(days=2), "user", "年初调薪了，现在月薪一万六。")
    assert order("我原来的月薪是多少？", [new, old])[0] == [1, 0]
    assert order("我的月薪是多少？", [old, new])[0] == [1, 0]


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("In the past, I had 3 cats.", True),
        ("Previously I lived in Rome.", True),
        ("I once lived in Rome.", True),
        ("I've watched 15 videos in the past few weeks.", False),  # a recent period, not history
        ("As I previously mentioned, I have 12 plants.", False),  # a reference back
        ("I go swimming once a week.", False),  # a frequency
    ],
)
def test_history_is_told_apart_from_recent_periods_and_frequencies(text: str, past: bool) -> None:
    assert claim(text).past is past


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("I want to sleep 8 hours a night, starting next month.", True),
        ("I'd like to get my sleep up to 8 hours a night.", True),
        ("我准备下个月开始每天跑5公里。", True),
        ("I like to run 5 km every morning.", False),  # a habit, said as a liking
        ("I want to update the limit to 5,000 requests.", False),  # a request to record a value
        ("I'm going to the gym 3 times a week.", False),  # going to a place
        ("I sleep 6 hours. I want to sleep 8 hours.", False),  # the 6 is a fact
    ],
)
def test_a_plan_is_told_apart_from_a_habit_a_request_and_a_fact(text: str, plan: bool) -> None:
    assert claim(text).plan is plan
