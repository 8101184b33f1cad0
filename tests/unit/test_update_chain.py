"""Update detection links a chain, not a clique (issue 44): a newer statement supersedes only the current
value (the statements nothing superseded yet), so links grow linearly with the statements of a subject."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipeline.core.review_records import Statement
from pipeline.review.updates import detect

T0 = datetime(2026, 1, 1, 7, 0, tzinfo=UTC)


def _weights(n: int, *, start: int = 0) -> list[Statement]:
    """A daily log: every value differs from the day before's (80.0 .. 89.9 kg, cycling)."""
    return [
        Statement(
            i + 1,
            T0 + timedelta(days=i),
            "user",
            None,
            f"My weight this morning is {80 + (i % 100) / 10:.1f} kg",
        )
        for i in range(start, start + n)
    ]


def _messages(n: int) -> list[Statement]:
    return [
        Statement(i + 1, T0 + timedelta(minutes=i), "user", None, f"message number {i} about topic {i % 17}")
        for i in range(n)
    ]


@pytest.mark.parametrize("n", [30, 60, 120, 240, 2000])
@pytest.mark.parametrize("make", [_weights, _messages], ids=["daily-weight", "numbered-messages"])
def test_links_grow_linearly_with_the_statements(n: int, make: object) -> None:
    said = make(n)  # type: ignore[operator]
    links = detect(said, [])
    # Was 372 / 1,520 / 5,948 / 24,075 for 30 / 60 / 120 / 240 statements (every newer one to every older).
    assert len(links) <= n - 1
    assert len(links) >= (n - 1) // 2  # still an update detector: most of the chain is linked


def test_each_statement_is_superseded_by_exactly_its_successor() -> None:
    said = _weights(50)
    links = detect(said, [])
    assert sorted((x.old, x.new) for x in links) == [(i, i + 1) for i in range(1, 50)]
    assert all(x.valid_from == said[x.new - 1].ts for x in links)


def test_batches_reviewed_one_after_another_keep_the_chain() -> None:
    """What a review reads back from the store: the earlier statements, flagged when a live link ends them."""
    said = _weights(40)
    superseded: set[int] = set()
    links: list[tuple[int, int]] = []
    for k in range(0, 40, 7):
        earlier = [Statement(s.id, s.ts, s.role, s.speaker, s.text, s.id in superseded) for s in said[:k]]
        got = detect(said[k : k + 7], earlier, refused=set(links))
        links += [(x.old, x.new) for x in got]
        superseded |= {x.old for x in got}
    assert sorted(links) == [(i, i + 1) for i in range(1, 40)]


def test_the_current_value_is_superseded_with_its_echo_and_restatement_and_only_those() -> None:
    said = [
        Statement(1, T0, "user", None, "The Atlas budget is 50,000 dollars."),
        Statement(2, T0 + timedelta(minutes=1), "assistant", None, "Noted: 50,000 dollars."),
        Statement(3, T0 + timedelta(days=2), "user", None, "We bumped the Atlas budget to 80,000 dollars."),
        Statement(4, T0 + timedelta(days=2, minutes=1), "assistant", None, "Noted: 80,000 dollars."),
        Statement(
            5,
            T0 + timedelta(days=3),
            "user",
            None,
            "Just to repeat: we bumped the Atlas budget to 80,000 dollars.",
        ),
        Statement(
            6, T0 + timedelta(days=9), "user", None, "We raised the Atlas budget to 95,000 dollars now."
        ),
    ]
    links = {(x.old, x.new): x.reason["rule"] for x in detect(said, [])}
    assert set(links) == {(1, 3), (2, 3), (3, 6), (4, 6), (5, 6)}
    assert links[(2, 3)] == "echo"
    assert links[(4, 6)] == "echo"


def test_an_undone_link_leaves_both_current_and_the_next_value_supersedes_both() -> None:
    a, b, c = _weights(3)
    earlier = [a, b]  # the link a -> b was undone: neither is flagged superseded
    links = detect([c], earlier, refused={(1, 2)})
    assert sorted((x.old, x.new) for x in links) == [(1, 3), (2, 3)]


def test_a_late_batch_holding_the_older_statement_joins_the_chain_before_its_successor() -> None:
    a, b, c = _weights(3)
    # a and c were reviewed (c superseded a); b arrives late: it supersedes nothing already superseded and is
    # superseded by the newer c.
    earlier = [Statement(a.id, a.ts, a.role, a.speaker, a.text, True), c]
    links = detect([b], earlier, refused={(1, 3)})
    assert [(x.old, x.new) for x in links] == [(2, 3)]
