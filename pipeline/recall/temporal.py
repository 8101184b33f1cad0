"""Temporal expressions in a recall query ("last May", "yesterday", "上周") -> a time window. Pure.

`now` is passed in (the recall's `as_of`, else the clock), so "last week" means the week before what the
caller asks about. Only the first expression found counts; a query without one has no window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_CN_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


@dataclass(frozen=True, slots=True)
class Window:
    """[start, end) in UTC, and the words that asked for it."""

    start: datetime
    end: datetime
    phrase: str

    def contains(self, ts: datetime) -> bool:
        return self.start <= ts < self.end

    def extended(self, lag: timedelta) -> Window:
        """The window with its end moved `lag` later (an open end stays open)."""
        if self.end >= OPEN_END - lag:
            return self
        return Window(self.start, self.end + lag, self.phrase)


def _day(d: datetime) -> datetime:
    return d.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    while month < 1:
        month, year = month + 12, year - 1
    while month > 12:
        month, year = month - 12, year + 1
    return datetime(year, month, 1, tzinfo=UTC)


def _week_start(d: datetime) -> datetime:
    day = _day(d)
    return day - timedelta(days=day.weekday())


def _months(n: int, now: datetime, phrase: str) -> Window:
    start = _month_start(now.year, now.month + n)
    return Window(start, _month_start(start.year, start.month + 1), phrase)


def _weeks(n: int, now: datetime, phrase: str) -> Window:
    start = _week_start(now) + timedelta(weeks=n)
    return Window(start, start + timedelta(weeks=1), phrase)


def _days(n: int, now: datetime, phrase: str) -> Window:
    start = _day(now) + timedelta(days=n)
    return Window(start, start + timedelta(days=1), phrase)


def _years(n: int, now: datetime, phrase: str) -> Window:
    start = datetime(now.year + n, 1, 1, tzinfo=UTC)
    return Window(start, datetime(now.year + n + 1, 1, 1, tzinfo=UTC), phrase)


_RELATIVE: list[tuple[re.Pattern[str], int, str]] = [
    (re.compile(r"\bday before yesterday\b|前天"), -2, "day"),
    (re.compile(r"\byesterday\b|昨天"), -1, "day"),
    (re.compile(r"\btoday\b|今天"), 0, "day"),
    (re.compile(r"\blast week\b|\bprevious week\b|上周|上个?星期|上个?礼拜"), -1, "week"),
    (re.compile(r"\bthis week\b|本周|这周|这个?星期"), 0, "week"),
    (re.compile(r"\blast month\b|\bprevious month\b|上个?月"), -1, "month"),
    (re.compile(r"\bthis month\b|本月|这个月"), 0, "month"),
    (re.compile(r"\blast year\b|\bprevious year\b|去年"), -1, "year"),
    (re.compile(r"\bthis year\b|今年"), 0, "year"),
]
_UNIT = {"day": _days, "week": _weeks, "month": _months, "year": _years}
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b")
_AGO_CN = re.compile(r"([一二两三四五六七八九十\d]+)\s*(天|周|个?星期|个?月|年)前")
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_LAST_MONTH_NAME = re.compile(rf"\b(last|in|during)\s+({_MONTH_RE})\b(?:\s+(\d{{4}}))?")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\s+(\d{{4}})\b")
_CN_MONTH = re.compile(r"(去年|今年)?\s*([一二三四五六七八九十\d]{1,3})月")
_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d{2})\b")
# A calendar date: "October 24, 2023", "24 October 2023", "on May 3" (the most recent one that has begun).
_DATE_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b")
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?(?:,?\s+(\d{{4}}))?\b")
_ISO_DATE = re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})\b")
# "as of May 2023", "before last week", "since March": the named time bounds the window on one side only.
_BOUND = re.compile(r"\b(as of|by|until|till|up to|before|prior to|since|after)\s+$")
_UNTIL_WORDS = {"as of", "by", "until", "till", "up to"}
OPEN_START = datetime(1, 1, 1, tzinfo=UTC)
OPEN_END = datetime(9999, 1, 1, tzinfo=UTC)


def _cn_int(s: str) -> int:
    if s.isdigit():
        return int(s)
    if s.startswith("十"):
        return 10 + _CN_NUM.get(s[1:], 0)
    if "十" in s:
        tens, _, ones = s.partition("十")
        return _CN_NUM[tens] * 10 + _CN_NUM.get(ones, 0)
    return _CN_NUM[s]


def _named_month(month: int, now: datetime, *, last: bool, year: int | None, phrase: str) -> Window:
    if year is None:
        year = now.year
        # "last May" in June 2024 is May 2024; in April 2024 it is May 2023. "in May" alone means the most
        # recent May that has begun.
        if month > now.month or (last and month == now.month):
            year -= 1
    start = _month_start(year, month)
    return Window(start, _month_start(year, month + 1), phrase)


def _cn_month(m: re.Match[str], now: datetime) -> Window | None:
    month = _cn_int(m.group(2))
    if not 1 <= month <= 12:
        return None
    year = {"去年": now.year - 1, "今年": now.year}.get(m.group(1) or "")
    return _named_month(month, now, last=False, year=year, phrase=m.group(0))


def _is_month(query: str, m: re.Match[str], group: int) -> bool:
    # "may" is a month only when written "May": "in may be" is not a time.
    return m.group(group) != "may" or query[m.start(group) : m.end(group)] == "May"


def time_window(query: str, now: datetime) -> Window | None:
    """The time window a query names, relative to `now` (timezone-aware), or None.

    A time after "as of", "by", "until" or "before" ends the window (it starts at the beginning of time);
    after "since" or "after" it starts it (open to the future): "how many dogs as of May" is about all
    that was said up to May, not only in May."""
    found = _named_window(query, now)
    if found is None:
        return None
    window, at = found
    bound = _BOUND.search(query[:at].lower())
    if bound is None:
        return window
    phrase = f"{bound.group(1)} {window.phrase}"
    word = bound.group(1)
    if word in _UNTIL_WORDS:
        return Window(OPEN_START, window.end, phrase)
    if word in ("before", "prior to"):
        return Window(OPEN_START, window.start, phrase)
    if word == "since":
        return Window(window.start, OPEN_END, phrase)
    return Window(window.end, OPEN_END, phrase)  # after


def _date(year: int | None, month: int, day: int, now: datetime, phrase: str) -> Window | None:
    if year is None:
        year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "February 30"
        return None
    return Window(start, start + timedelta(days=1), phrase)


def _calendar_date(query: str, q: str, now: datetime) -> tuple[Window, int] | None:
    if m := _ISO_DATE.search(q):
        w = (
            _date(int(m.group(1)), int(m.group(2)), int(m.group(3)), now, m.group(0))
            if 1 <= int(m.group(2)) <= 12
            else None
        )
        return (w, m.start()) if w else None
    for pattern, month_group, day_group in ((_DATE_MDY, 1, 2), (_DATE_DMY, 2, 1)):
        for m in pattern.finditer(q):
            if not _is_month(query, m, month_group):
                continue
            year = int(m.group(3)) if m.group(3) else None
            w = _date(year, MONTHS[m.group(month_group)], int(m.group(day_group)), now, m.group(0))
            if w is not None:
                return w, m.start()
    return None


def _named_window(query: str, now: datetime) -> tuple[Window, int] | None:
    """The first time the query names and where its words start."""
    q = query.lower()
    if found := _calendar_date(query, q, now):
        return found
    # "去年十二月" is December of last year, not all of last year: a named month wins over its year.
    if (m := _CN_MONTH.search(query)) and m.group(1):
        w = _cn_month(m, now)
        return (w, m.start()) if w else None
    for pattern, n, unit in _RELATIVE:
        if m := pattern.search(q):
            return _UNIT[unit](n, now, m.group(0)), m.start()
    if m := _AGO.search(q):
        n = _WORDS.get(m.group(1)) or int(m.group(1))
        return _UNIT[m.group(2)](-n, now, m.group(0)), m.start()
    if m := _AGO_CN.search(query):
        unit = {"天": "day", "周": "week", "月": "month", "年": "year"}[m.group(2)[-1:]]
        if m.group(2).endswith("星期"):
            unit = "week"
        return _UNIT[unit](-_cn_int(m.group(1)), now, m.group(0)), m.start()
    if (m := _LAST_MONTH_NAME.search(q)) and _is_month(query, m, 2):
        year = int(m.group(3)) if m.group(3) else None
        last = m.group(1) == "last"
        # "in May 2023": the window's words start at the month ("as of May" has no "in").
        at = m.start(2) if not last else m.start()
        return _named_month(MONTHS[m.group(2)], now, last=last, year=year, phrase=m.group(0)), at
    if (m := _MONTH_YEAR.search(q)) and _is_month(query, m, 1):
        w = _named_month(MONTHS[m.group(1)], now, last=False, year=int(m.group(2)), phrase=m.group(0))
        return w, m.start()
    if m := _CN_MONTH.search(query):
        w = _cn_month(m, now)
        return (w, m.start()) if w else None
    if m := _YEAR.search(q):
        return _years(int(m.group(1)) - now.year, now, m.group(0)), m.start()
    return None
