"""The labelled set of restated preferences (issue 40, bench/sets/restated.py): what its figures rest on."""

from __future__ import annotations

import gzip
import json
from collections import Counter

from bench.sets import restated
from bench.sets.common import read_set


def test_every_wish_is_restated_at_least_three_times_in_as_many_sessions() -> None:
    for user in restated.USERS:
        for wish in user.wishes:
            sessions = [s for s, _, _ in wish.said]
            assert len(sessions) >= 3, wish.key
            assert len(set(sessions)) == len(sessions), wish.key


def test_both_halves_hold_english_chinese_and_mixed_users() -> None:
    langs = {
        split: Counter(w.lang for u in restated.USERS if u.split == split for w in u.wishes)
        for split in ("dev", "test")
    }
    for split, counted in langs.items():
        assert set(counted) == {"en", "zh", "mixed"}, split


def test_the_files_are_what_the_generator_writes() -> None:
    locomo = read_set(restated.PATH)
    assert locomo == [c.to_json() for c in map(restated.locomo, restated.USERS)]
    labelled = json.loads(gzip.decompress(restated.CONSOLIDATION_PATH.read_bytes()))
    assert labelled == [restated.labelled(u) for u in restated.USERS]


def test_preference_evidence_is_the_users_own_turns() -> None:
    for conv in read_set(restated.PATH):
        turns = {
            t["dia_id"]: t
            for k, v in conv["conversation"].items()
            if k.startswith("session_") and not k.endswith("date_time")
            for t in v
        }
        for qa in conv["qa"]:
            assert all(e in turns for e in qa["evidence"]), qa
            if qa["category"] == "preference":
                assert all(turns[e]["role"] == "user" for e in qa["evidence"]), qa
