"""Recall's ordering of updates (pipeline/recall/updates_order.py), on hits built by hand: review's links
demote and flag (flag only for a question about the previous value), the question decides the order of the
statements of a value among the first k (and never changes which k hits are returned); an operator's undo
is respected."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from pipeline.core.models import Hit
from pipeline.core.recall_rows import RecallEpisode
from pipeline.recall.tuning import DEFAULT_TUNING
from pipeline.recall.updates_order import order

T0 = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def _row(i: int, text: str, days: int, **kw: object) -> RecallEpisode:
    return RecallEpisode(i, f"t{i}", (), "s", text, T0 + timedelta(days=days), "user", 1.0, False, **kw)  # type: ignore[arg-type]


def _hit(row: RecallEpisode, score: float) -> Hit:
    return Hit(f"episode:{row.id}", "episode", row.content, score, 1.0, row.ts, None, (row.turn_id,), "s")


def _ranked(hits: list[Hit]) -> list[str]:
    return [h.id for h in sorted(hits, key=lambda h: (h.score, not h.superseded), reverse=True)]


OLD = _row(1, "The Atlas budget is 50k.", 0)
NEW = _row(2, "We bumped the Atlas budget to 80k.", 30)
OTHER = _row(3, "I like green tea.", 10)


def test_a_review_link_flags_and_demotes_the_older_statement() -> None:
    rows = {
        1: replace(OLD, superseded_by=(2,), superseded_at=NEW.ts),
        2: replace(NEW, supersedes=(1,)),
        3: OTHER,
    }
    hits = order(
        [_hit(rows[1], 0.9), _hit(rows[3], 0.6), _hit(rows[2], 0.3)], rows, DEFAULT_TUNING, "atlas budget"
    )
    by_id = {h.id: h for h in hits}
    assert _ranked(hits)[0] == "episode:2"
    assert by_id["episode:1"].superseded is True
    assert by_id["episode:1"].valid_to == NEW.ts
    assert by_id["episode:1"].score <= by_id["episode:2"].score * DEFAULT_TUNING.update_demotion
    assert by_id["episode:2"].supersedes == ("episode:1",)


def test_the_question_orders_the_statements_of_a_value_and_explain_says_which_ordering() -> None:
    rows = {1: OLD, 2: NEW, 3: OTHER}
    hits = order(
        [_hit(OLD, 0.9), _hit(OTHER, 0.6), _hit(NEW, 0.3)], rows, DEFAULT_TUNING, "What is the Atlas budget?"
    )
    by_id = {h.id: h for h in hits}
    assert _ranked(hits) == ["episode:2", "episode:3", "episode:1"]  # the two trade slots
    assert by_id["episode:1"].explain["earlier_value"] is True  # type: ignore[index]
    assert by_id["episode:2"].explain["value_order"] == "current"  # type: ignore[index]
    assert not any(h.superseded for h in hits)  # ordered, not judged: no link says it is stale
    past = order(
        [_hit(OLD, 0.3), _hit(OTHER, 0.6), _hit(NEW, 0.9)],
        rows,
        DEFAULT_TUNING,
        "What was the Atlas budget before?",
    )
    assert _ranked(past)[0] == "episode:1"


def test_a_previous_question_is_not_demoted_by_a_review_link() -> None:
    rows = {
        1: replace(OLD, superseded_by=(2,), superseded_at=NEW.ts),
        2: replace(NEW, supersedes=(1,)),
        3: OTHER,
    }
    hits = order(
        [_hit(rows[1], 0.9), _hit(rows[3], 0.6), _hit(rows[2], 0.3)],
        rows,
        DEFAULT_TUNING,
        "What was the previous Atlas budget?",
    )
    by_id = {h.id: h for h in hits}
    assert _ranked(hits)[0] == "episode:1"
    assert by_id["episode:1"].superseded is True  # still flagged with when it stopped holding


def test_the_ordering_never_changes_which_k_hits_are_returned() -> None:
    rows = {1: OLD, 2: NEW, 3: OTHER}
    hits = order(
        [_hit(OLD, 0.9), _hit(OTHER, 0.6), _hit(NEW, 0.3)], rows, DEFAULT_TUNING, "atlas budget", k=2
    )
    assert set(_ranked(hits)[:2]) == {"episode:1", "episode:3"}  # the newer one is outside the first k


def test_an_undone_pair_is_not_ordered_again() -> None:
    rows = {1: replace(OLD, undone_with=(2,)), 2: replace(NEW, undone_with=(1,)), 3: OTHER}
    hits = order(
        [_hit(rows[1], 0.9), _hit(OTHER, 0.6), _hit(rows[2], 0.3)], rows, DEFAULT_TUNING, "atlas budget"
    )
    assert _ranked(hits)[0] == "episode:1"
