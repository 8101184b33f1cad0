"""scheduler.policy (when to review what) and pipeline.core.vector_ids (stable point ids). Both pure."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from pipeline.core.models import Dispatch, Scope, ScopeBacklog, SessionBacklog, Trigger
from pipeline.core.vector_ids import point_id
from scheduler.policy import decide, on_demand

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
BATCH = 30
IDLE_S = 600.0

ALICE = Scope("agent-1", "alice")
BOB = Scope("agent-1", "bob")
CAROL = Scope("agent-2", "alice")  # same user, other agent: a different scope


def session(
    session_id: str = "s1", *, pending: int = 1, idle_s: float = 0.0, ended: bool = False
) -> SessionBacklog:
    return SessionBacklog(
        session_id=session_id,
        pending_light=pending,
        last_received_at=NOW - timedelta(seconds=idle_s),
        ended=ended,
    )


def scope(s: Scope = ALICE, *sessions: SessionBacklog, pending_full: int | None = None) -> ScopeBacklog:
    """A scope backlog; pending_full defaults to the sessions' pending episodes."""
    if pending_full is None:
        pending_full = sum(x.pending_light for x in sessions)
    return ScopeBacklog(scope=s, pending_full=pending_full, sessions=tuple(sessions))


def full(s: Scope, trigger: Trigger = "batch_size") -> Dispatch:
    return Dispatch(s, "full", trigger)


def light(s: Scope, session_id: str, trigger: Trigger) -> Dispatch:
    return Dispatch(s, "light", trigger, session_id)


# -- decide ------------------------------------------------------------------------------------------

DECIDE: list[tuple[str, list[ScopeBacklog], list[Dispatch]]] = [
    ("no backlog", [], []),
    ("batch reached", [scope(ALICE, pending_full=BATCH)], [full(ALICE)]),
    (
        "batch reached takes the whole scope: no light reviews beside it",
        [
            scope(
                ALICE,
                session("ended", pending=5, ended=True),
                session("idle", pending=5, idle_s=IDLE_S * 10),
                pending_full=BATCH + 5,
            )
        ],
        [full(ALICE)],
    ),
    ("one short of the batch", [scope(ALICE, session("s1", pending=BATCH - 1))], []),
    (
        "light-reviewed episodes count toward the batch",
        [scope(ALICE, session("s1", pending=0), pending_full=BATCH)],
        [full(ALICE)],
    ),
    (
        "ended session with pending episodes",
        [scope(ALICE, session("s1", pending=3, ended=True))],
        [light(ALICE, "s1", "session_end")],
    ),
    (
        "ended wins over idle",
        [scope(ALICE, session("s1", pending=3, ended=True, idle_s=IDLE_S * 2))],
        [light(ALICE, "s1", "session_end")],
    ),
    (
        "idle exactly idle_s",
        [scope(ALICE, session("s1", pending=2, idle_s=IDLE_S))],
        [light(ALICE, "s1", "idle")],
    ),
    ("idle one second short", [scope(ALICE, session("s1", pending=2, idle_s=IDLE_S - 1))], []),
    ("active session", [scope(ALICE, session("s1", pending=2, idle_s=0))], []),
    ("ended but nothing pending", [scope(ALICE, session("s1", pending=0, ended=True))], []),
    ("idle but nothing pending", [scope(ALICE, session("s1", pending=0, idle_s=IDLE_S * 10))], []),
    (
        "each session on its own",
        [
            scope(
                ALICE,
                session("ended", pending=1, ended=True),
                session("idle", pending=1, idle_s=IDLE_S + 1),
                session("active", pending=1, idle_s=1),
                session("empty", pending=0, ended=True),
            )
        ],
        [light(ALICE, "ended", "session_end"), light(ALICE, "idle", "idle")],
    ),
    (
        "scopes are independent",
        [
            scope(ALICE, session("a1", pending=1, ended=True), pending_full=BATCH),
            scope(BOB, session("b1", pending=4, ended=True)),
            scope(CAROL, session("c1", pending=BATCH - 1, idle_s=IDLE_S)),
            scope(Scope("agent-3", "dave"), session("d1", pending=2)),
        ],
        [full(ALICE), light(BOB, "b1", "session_end"), light(CAROL, "c1", "idle")],
    ),
]


@pytest.mark.parametrize(
    ("backlogs", "expected"), [(b, e) for _, b, e in DECIDE], ids=[n for n, _, _ in DECIDE]
)
def test_decide(backlogs: list[ScopeBacklog], expected: list[Dispatch]) -> None:
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == expected


def test_decide_uses_the_now_it_is_given() -> None:
    backlogs = [scope(ALICE, session("s1", pending=1, idle_s=0))]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == []
    later = NOW + timedelta(seconds=IDLE_S)
    assert decide(backlogs, now=later, batch_size=BATCH, idle_s=IDLE_S) == [light(ALICE, "s1", "idle")]


def test_decide_with_fractional_idle() -> None:
    backlogs = [scope(ALICE, session("s1", pending=1, idle_s=0.5))]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=0.5) == [light(ALICE, "s1", "idle")]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=0.6) == []


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_batch_threshold_is_inclusive(batch_size: int) -> None:
    at = [scope(ALICE, pending_full=batch_size)]
    below = [scope(ALICE, pending_full=batch_size - 1)]
    assert decide(at, now=NOW, batch_size=batch_size, idle_s=IDLE_S) == [full(ALICE)]
    assert decide(below, now=NOW, batch_size=batch_size, idle_s=IDLE_S) == []


# -- on_demand ---------------------------------------------------------------------------------------

BACKLOGS = [
    scope(ALICE, session("a1", pending=2), session("a2", pending=0), session("a3", pending=1, ended=True)),
    scope(BOB, session("b1", pending=0), pending_full=3),  # only light-reviewed episodes left
    scope(CAROL, session("c1", pending=0), pending_full=0),  # nothing at all
]

ON_DEMAND: list[tuple[str, bool, Scope | None, list[Dispatch]]] = [
    ("full, every scope", True, None, [full(ALICE, "manual"), full(BOB, "manual")]),
    ("full, one scope", True, BOB, [full(BOB, "manual")]),
    ("full, a scope with nothing pending", True, CAROL, []),
    ("full, an unknown scope", True, Scope("nobody", "nobody"), []),
    ("light, every scope", False, None, [light(ALICE, "a1", "manual"), light(ALICE, "a3", "manual")]),
    ("light, one scope", False, ALICE, [light(ALICE, "a1", "manual"), light(ALICE, "a3", "manual")]),
    ("light, a scope with only light-reviewed episodes", False, BOB, []),
]


@pytest.mark.parametrize(
    ("is_full", "only", "expected"),
    [(f, s, e) for _, f, s, e in ON_DEMAND],
    ids=[n for n, _, _, _ in ON_DEMAND],
)
def test_on_demand(is_full: bool, only: Scope | None, expected: list[Dispatch]) -> None:
    assert on_demand(BACKLOGS, full=is_full, scope=only) == expected


def test_on_demand_does_not_wait_for_a_trigger() -> None:
    """An active session below the batch size gets nothing from decide, but a review when asked."""
    backlogs = [scope(ALICE, session("s1", pending=1, idle_s=0))]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == []
    assert on_demand(backlogs, full=False) == [light(ALICE, "s1", "manual")]
    assert on_demand(backlogs, full=True) == [full(ALICE, "manual")]


# -- vector point ids --------------------------------------------------------------------------------


def test_point_id_is_deterministic() -> None:
    assert point_id("semantic", 42) == point_id("semantic", 42)
    # a fixed value: replaying an outbox written by an older process must hit the same point
    assert point_id("semantic", 42) == "fadcf1cb-b4e8-5ce9-bca0-9261ec2cae30"


def test_point_id_differs_by_kind_and_by_id() -> None:
    ids = {point_id(kind, ref) for kind in ("semantic", "episode") for ref in (0, 1, 2, 10, 11)}
    assert len(ids) == 10


@pytest.mark.parametrize(("kind", "ref_id"), [("semantic", 0), ("episode", 1), ("episode", 2**63 - 1)])
def test_point_id_is_a_uuid_string(kind: str, ref_id: int) -> None:
    value = point_id(kind, ref_id)
    parsed = uuid.UUID(value)
    assert str(parsed) == value
    assert parsed.version == 5


# -- urgency under backlog ----------------------------------------------------------------------------


def prioritised(s: Scope, top: int, *, pending: int = BATCH, first: int = 0) -> ScopeBacklog:
    sess = SessionBacklog("s1", pending, NOW, ended=True, top_priority=top, first_pending_id=first)
    return ScopeBacklog(scope=s, pending_full=pending, sessions=(sess,))


def test_decide_puts_scopes_waiting_on_user_turns_first() -> None:
    # Regression (fault suite, backlog): decisions came out in backlog order, so a scheduler that may
    # dispatch only a few batches spent them on tool turns while user turns waited.
    backlogs = [prioritised(ALICE, 3), prioritised(BOB, 1), prioritised(CAROL, 2)]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == [full(BOB), full(CAROL), full(ALICE)]


def test_decide_orders_light_reviews_by_urgency_too() -> None:
    backlogs = [prioritised(ALICE, 3, pending=2), prioritised(BOB, 1, pending=2)]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == [
        light(BOB, "s1", "session_end"),
        light(ALICE, "s1", "session_end"),
    ]


def test_decide_rotates_equally_urgent_scopes_by_who_waited_longest() -> None:
    # Regression (fault suite, backlog): with one free slot per tick, the first scope in backlog order won
    # every time, ran out of user turns and had its agent turns reviewed while other scopes' users waited.
    backlogs = [
        prioritised(ALICE, 1, first=900),
        prioritised(BOB, 1, first=12),
        prioritised(CAROL, 2, first=1),
    ]
    assert decide(backlogs, now=NOW, batch_size=BATCH, idle_s=IDLE_S) == [full(BOB), full(ALICE), full(CAROL)]


# -- one busy scope cannot starve the others (issue 44) -------------------------------------------------


def test_a_scope_with_batches_in_flight_goes_after_one_without() -> None:
    # ALICE holds the oldest backlog (thousands of statements) and already has a batch running: BOB's newer
    # turns go first, instead of queueing behind every batch ALICE could fill.
    backlogs = [prioritised(ALICE, 1, pending=2000, first=1), prioritised(BOB, 1, first=5000)]
    assert decide(
        backlogs,
        now=NOW,
        batch_size=BATCH,
        idle_s=IDLE_S,
        in_flight={ALICE: 100},
        per_scope=200,
        max_batch=100,
    ) == [
        full(BOB),
        full(ALICE),
    ]


def test_a_scope_at_its_in_flight_cap_gets_no_new_batch() -> None:
    backlogs = [prioritised(ALICE, 1, pending=2000, first=1), prioritised(BOB, 1, first=5000)]
    assert decide(
        backlogs,
        now=NOW,
        batch_size=BATCH,
        idle_s=IDLE_S,
        in_flight={ALICE: 200},
        per_scope=200,
        max_batch=100,
    ) == [full(BOB)]
    # Its light reviews are capped too: as many of the most urgent sessions as its room holds.
    sessions = tuple(
        SessionBacklog(f"s{i}", 2, NOW, ended=True, top_priority=1, first_pending_id=100 - i)
        for i in range(5)
    )
    many = [ScopeBacklog(scope=ALICE, pending_full=10, sessions=sessions)]
    assert decide(many, now=NOW, batch_size=BATCH, idle_s=IDLE_S, in_flight={ALICE: 2}, per_scope=4) == [
        light(ALICE, "s4", "session_end")
    ]
    # No cap: as before.
    assert len(decide(many, now=NOW, batch_size=BATCH, idle_s=IDLE_S)) == 5


def test_a_scope_of_small_light_reviews_is_capped_in_episodes_not_batches() -> None:
    # Issue 44 (bench busy-scope): BOB, one short session every 2 s, was capped at 2 batches like the busy
    # scope, got 2 reviews per busy batch ahead of them and fell behind. Its one-turn reviews hold nobody up.
    sessions = tuple(
        SessionBacklog(f"s{i}", 1, NOW, ended=True, top_priority=1, first_pending_id=5000 + i)
        for i in range(5)
    )
    backlogs = [prioritised(ALICE, 1, pending=2000, first=1), ScopeBacklog(BOB, 5, sessions)]
    decided = decide(
        backlogs,
        now=NOW,
        batch_size=BATCH,
        idle_s=IDLE_S,
        in_flight={ALICE: 200, BOB: 2},
        per_scope=200,
        max_batch=100,
    )
    assert decided == [light(BOB, f"s{i}", "session_end") for i in range(5)]  # ALICE is at its cap
    # A busy scope with one full batch in flight gets one more, not a third.
    one_more = decide(
        backlogs[:1],
        now=NOW,
        batch_size=BATCH,
        idle_s=IDLE_S,
        in_flight={ALICE: 100},
        per_scope=200,
        max_batch=100,
    )
    assert one_more == [full(ALICE)]
    none_more = decide(
        backlogs[:1],
        now=NOW,
        batch_size=BATCH,
        idle_s=IDLE_S,
        in_flight={ALICE: 150},
        per_scope=200,
        max_batch=100,
    )
    assert none_more == []
