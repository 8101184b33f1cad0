"""The simulated month's traffic generator: deterministic, mixed, with preference changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.locomo_data import LocomoTurn
from bench.month_traffic import KINDS, PREFERENCES, T0, generate


def locomo(conversations: int = 3, sessions: int = 4, per_session: int = 10) -> list[LocomoTurn]:
    out = []
    for c in range(conversations):
        for s in range(1, sessions + 1):
            ts = datetime(2023, 5, 1, tzinfo=UTC) + timedelta(days=s)
            for i in range(1, per_session + 1):
                speaker = "Ann" if i % 2 else "Bob"
                out.append(LocomoTurn(f"conv-{c}", f"D{s}:{i}", s, speaker, f"c{c} s{s} line {i}", None, ts))
    return out


def test_same_seed_same_traffic_other_seed_other_traffic() -> None:
    a = generate(locomo(), days=6, turns_per_day=200, seed=3)
    b = generate(locomo(), days=6, turns_per_day=200, seed=3)
    c = generate(locomo(), days=6, turns_per_day=200, seed=4)
    assert a.turns == b.turns
    assert [t.content for t in a.turns] != [t.content for t in c.turns]


def test_days_hold_their_turns_at_their_own_event_times() -> None:
    traffic = generate(locomo(), days=4, turns_per_day=150)
    assert len(traffic.turns) == 4 * 150
    assert len({t.turn_id for t in traffic.turns}) == len(traffic.turns)
    for d in range(4):
        day = traffic.day(d)
        assert len(day) == 150
        assert all(T0 + timedelta(days=d) <= t.ts < T0 + timedelta(days=d + 1) for t in day)
        assert [t.ts for t in day] == sorted(t.ts for t in day)


def test_mixes_every_kind_and_keeps_locomo_ids_and_order() -> None:
    source = locomo()
    traffic = generate(source, days=10, turns_per_day=200)
    kinds = traffic.kinds()
    assert set(kinds) == set(KINDS)
    assert all(kinds[k] > 0 for k in KINDS), kinds
    # 20% of 2,000 turns exceeds the 120 LoCoMo turns: all of them, each conversation in its own order.
    taken = [t for t in traffic.turns if t.kind == "locomo"]
    assert {t.turn_id for t in taken} == {s.turn_id for s in source}
    for conv in ("conv-0", "conv-1", "conv-2"):
        ids = [t.turn_id for t in taken if t.user_id == conv]
        assert ids == [s.turn_id for s in source if s.conversation == conv]
    assert {t.role for t in traffic.turns} == {"user", "assistant", "tool"}
    # A LoCoMo session ends once, with its last turn; filler sessions end with their goodbye.
    ends = [t for t in traffic.turns if t.ends_session and t.kind == "locomo"]
    assert len(ends) == 3 * 4


def test_preferences_change_later_in_the_month() -> None:
    traffic = generate(locomo(), days=30, turns_per_day=100)
    assert traffic.preference_changes
    afters = {after for _, after in PREFERENCES}
    for user, before, after in traffic.preference_changes:
        said = [t for t in traffic.turns if t.user_id == user and t.kind == "preference"]
        first_after = next(t for t in said if t.content == after)
        stated_before = [t for t in said if before[1:] in t.content]
        assert after in afters
        assert stated_before
        assert stated_before[0].ts < first_after.ts


def test_repeats_restate_what_the_user_said_before() -> None:
    traffic = generate(locomo(), days=5, turns_per_day=200)
    seen: dict[str, set[str]] = {}
    repeats = 0
    for t in traffic.turns:
        if t.kind == "repeat":
            repeats += 1
            core = t.content.removeprefix("Like I said, ").removeprefix("Again, ")
            assert core in seen[t.user_id]
        if t.role == "user":
            seen.setdefault(t.user_id, set()).add(t.content)
    assert repeats > 0


def test_rejects_an_empty_month() -> None:
    with pytest.raises(ValueError, match="days >= 1"):
        generate(locomo(), days=0, turns_per_day=100)
