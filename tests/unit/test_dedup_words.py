"""De-duplication merges only what says the same words, whatever the embedding says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from pipeline.review import dedup

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _memory(i: int, text: str) -> dedup.Memory:
    v = np.ones(8, dtype=np.float32) / np.sqrt(8)  # every vector the same: cosine 1.0
    return dedup.Memory(i, T0 + timedelta(minutes=i), v, text)


def test_same_words_is_strict_about_a_changed_detail() -> None:
    assert dedup.same_words("I'm allergic to peanuts", "i'm allergic to peanuts!")
    assert not dedup.same_words("Mei: the blue one", "Mei: the red one")
    assert not dedup.same_words("Mei: yes!! twice", "Mei: haha")
    assert dedup.same_words("我对花生过敏", "我对花生过敏！")
    assert not dedup.same_words("我对花生过敏", "我对芒果过敏")


def test_equal_vectors_merge_only_when_the_words_are_the_same() -> None:
    kept = [_memory(1, "Mei: the blue one")]
    batch = [_memory(2, "Mei: the red one"), _memory(3, "Mei: the blue one")]
    plan = dedup.plan(batch, kept, threshold=0.95)
    assert [(m.loser, m.survivor) for m in plan.merges] == [(1, 3)]
    assert plan.max_similarity[2] > 0.99  # similar by vector, still its own memory


ROOM = (
    "Reminder for my trip: the hotel room is {} on the fourth floor, breakfast is served from seven to ten."
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ROOM.format(105), ROOM.format(106)),  # a number
        (
            "My flight leaves on 2026-03-03 from gate 12, remind me",
            "My flight leaves on 2026-03-04 from gate 12, remind me",
        ),
        (
            "The standup moved to 10:30 every weekday from now on",
            "The standup moved to 11:30 every weekday from now on",
        ),
        (
            "The plumber charged $40 for the visit and the new washer",
            "The plumber charged $45 for the visit and the new washer",
        ),
        (
            "We deploy version v1.2.3 of the billing service on Friday",
            "We deploy version v1.2.4 of the billing service on Friday",
        ),
        (
            "I take 40mg of lisinopril every morning with breakfast",
            "I take 20mg of lisinopril every morning with breakfast",
        ),
        (
            "We have two dogs and a cat living at home with us now",
            "We have three dogs and a cat living at home with us now",
        ),
        ("我住在一百零五号房间，早餐七点开始", "我住在一百零六号房间，早餐七点开始"),
        (
            "ROOM １０５ on the fourth floor, breakfast from seven",
            "ROOM 106 on the fourth floor, breakfast from seven",
        ),
    ],
)
def test_texts_whose_values_differ_never_say_the_same_words(a: str, b: str) -> None:
    # Without the values the word sets overlap enough to merge: the value is the only difference.
    words = {w for w in dedup._WORD.findall(a.casefold())}, {w for w in dedup._WORD.findall(b.casefold())}
    assert len(words[0] & words[1]) / len(words[0] | words[1]) >= dedup.SAME_WORDS
    assert not dedup.same_words(a, b)
    assert dedup.same_words(a, a + "!")  # the same values, the same words: still one memory


def test_equal_vectors_do_not_merge_two_values() -> None:
    kept = [_memory(1, ROOM.format(105))]
    batch = [_memory(2, ROOM.format(106)), _memory(3, ROOM.format(105) + " Thanks!")]
    plan = dedup.plan(batch, kept, threshold=0.95)
    assert [(m.loser, m.survivor) for m in plan.merges] == [(1, 3)]  # the verbatim repeat only


def test_values_are_normalised_and_whole() -> None:
    assert dedup.values("Flight on 2026-03-04 at 10:30, $40, v1.2.3, 5pm, 40mg, 3,5%.") == {
        "2026-03-04",
        "10:30",
        "$40",
        "v1.2.3",
        "5pm",
        "40mg",
        "3,5%",
    }
    assert dedup.values("ROOM １０５") == {"105"}
    assert dedup.values("一下一个") == frozenset()  # "一" alone is "a", not a value
    assert dedup.values("Mei: the blue one") == dedup.values("Mei: the red one")
