"""Time expressions in recall queries -> windows, relative to the `now` passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.recall.temporal import time_window

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)  # a Wednesday


def d(y: int, m: int, day: int) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did I eat yesterday", d(2024, 6, 11), d(2024, 6, 12)),
        ("plans for today?", d(2024, 6, 12), d(2024, 6, 13)),
        ("where did we go last week", d(2024, 6, 3), d(2024, 6, 10)),
        ("我上周去了哪里", d(2024, 6, 3), d(2024, 6, 10)),
        ("上个月的账单", d(2024, 5, 1), d(2024, 6, 1)),
        ("去年的旅行", d(2023, 1, 1), d(2024, 1, 1)),
        ("what happened last month", d(2024, 5, 1), d(2024, 6, 1)),
        ("trip last May", d(2024, 5, 1), d(2024, 6, 1)),
        ("the concert last August", d(2023, 8, 1), d(2023, 9, 1)),
        ("what did she do in March", d(2024, 3, 1), d(2024, 4, 1)),
        ("in December 2022", d(2022, 12, 1), d(2023, 1, 1)),
        ("the trip in 2021", d(2021, 1, 1), d(2022, 1, 1)),
        ("two weeks ago", d(2024, 5, 27), d(2024, 6, 3)),
        ("3 days ago", d(2024, 6, 9), d(2024, 6, 10)),
        ("三天前说的", d(2024, 6, 9), d(2024, 6, 10)),
        ("5月的会议", d(2024, 5, 1), d(2024, 6, 1)),
        ("去年十二月", d(2023, 12, 1), d(2024, 1, 1)),
        ("last year", d(2023, 1, 1), d(2024, 1, 1)),
    ],
)
def test_windows(query: str, start: datetime, end: datetime) -> None:
    w = time_window(query, NOW)
    assert w is not None, query
    assert (w.start, w.end) == (start, end)
    assert w.phrase  # says which words asked for it


def test_last_named_month_in_the_current_month_is_a_year_back() -> None:
    w = time_window("what did we do last June", NOW)
    assert w is not None
    assert (w.start, w.end) == (d(2023, 6, 1), d(2023, 7, 1))


def test_month_windows_cross_the_year() -> None:
    w = time_window("last month", datetime(2024, 1, 20, tzinfo=UTC))
    assert w is not None
    assert (w.start, w.end) == (d(2023, 12, 1), d(2024, 1, 1))


@pytest.mark.parametrize(
    "query",
    ["where does Ana live", "this may help", "what is in may be a typo", "I like marching", "你好"],
)
def test_no_window(query: str) -> None:
    assert time_window(query, NOW) is None


def test_contains_is_half_open() -> None:
    w = time_window("yesterday", NOW)
    assert w is not None
    assert w.contains(d(2024, 6, 11))
    assert not w.contains(d(2024, 6, 12))


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Audrey eat for dinner on October 24, 2023?", d(2023, 10, 24), d(2023, 10, 25)),
        ("where was she on 3rd of March 2022", d(2022, 3, 3), d(2022, 3, 4)),
        ("the call on 2023-01-09", d(2023, 1, 9), d(2023, 1, 10)),
        ("what happened on May 2", d(2024, 5, 2), d(2024, 5, 3)),
        ("what happened on July 2", d(2023, 7, 2), d(2023, 7, 3)),  # not yet this year: last year's
    ],
)
def test_calendar_dates_are_day_windows(query: str, start: datetime, end: datetime) -> None:
    w = time_window(query, NOW)
    assert w is not None, query
    assert (w.start, w.end) == (start, end)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("How many pets did Andrew have, as of September 2023?", None, d(2023, 10, 1)),
        ("what had she said by last month", None, d(2024, 6, 1)),
        ("what did I do before March 2024", None, d(2024, 3, 1)),
        ("everything since last May", d(2024, 5, 1), None),
        ("what changed after May 2023", d(2023, 6, 1), None),
    ],
)
def test_bounds_open_one_side(query: str, start: datetime | None, end: datetime | None) -> None:
    w = time_window(query, NOW)
    assert w is not None, query
    if start is None:
        assert w.start < d(1900, 1, 1)
        assert w.end == end
    else:
        assert w.start == start
        assert w.end > d(3000, 1, 1)
    assert w.phrase.split()[0] in {"as", "by", "before", "since", "after"}


@pytest.mark.parametrize("query", ["may 3 people come", "I ran 3 marathons", "February 30, 2023 never was"])
def test_not_calendar_dates(query: str) -> None:
    assert time_window(query, NOW) is None


def test_extended_moves_the_end_only() -> None:
    w = time_window("on March 16, 2022", NOW)
    assert w is not None
    later = w.extended(timedelta(days=3))
    assert (later.start, later.end) == (w.start, w.end + timedelta(days=3))
    assert later.contains(d(2022, 3, 18))
    assert not w.contains(d(2022, 3, 18))


def test_extended_keeps_an_open_end_open() -> None:
    w = time_window("since last May", NOW)
    assert w is not None
    assert w.extended(timedelta(days=3)) == w
