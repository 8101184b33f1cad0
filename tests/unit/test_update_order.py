"""Recall's ordering of updates (pipeline/recall/updates_order.py), on hits built by hand: review's links
demote and flag, recall's own reading of reviewed pairs only orders, for a question about the present, and
never changes which k hits are returned; an operator's undo is respected."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np

from pipeline.core.models import Hit
from pipeline.core.recall_rows import RecallEpisode
from pipeline.recall.tuning import DEFAULT_TUNING
from pipeline.recall.updates_order import asks_present, order

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


def test_recall_orders_a_reviewed_pair_newer_first_without_flagging_it_for_a_question_about_now() -> None:
    rows = {1: OLD, 2: NEW, 3: OTHER}
    hits = order(
        [_hit(OLD, 0.9), _hit(OTHER, 0.6), _hit(NEW, 0.3)],
        rows,
        DEFAULT_TUNING,
        "What is the Atlas budget now?",
    )
    assert _ranked(hits)[:2] == ["episode:2", "episode:1"]
    assert not any(h.superseded for h in hits)
    # A question about the past keeps the order the question gave.
    past = order(
        [_hit(OLD, 0.9), _hit(OTHER, 0.6), _hit(NEW, 0.3)],
        rows,
        DEFAULT_TUNING,
        "What was the Atlas budget before?",
    )
    assert _ranked(past)[0] == "episode:1"


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


def test_two_answers_that_read_alike_are_ordered_only_when_they_read_alike() -> None:
    a = _row(4, "I get to work on foot.", 0)
    b = _row(5, "I commute on an e-scooter.", 20)  # no word in common, no word of change
    rows = {4: a, 5: b}
    q = "How does the user get to work these days?"
    alike = order(
        [_hit(a, 0.9), _hit(b, 0.8)],
        rows,
        DEFAULT_TUNING,
        q,
        vectors=lambda ids: {i: np.ones(4) for i in ids},
    )
    apart = order(
        [_hit(a, 0.9), _hit(b, 0.8)],
        rows,
        DEFAULT_TUNING,
        q,
        vectors=lambda ids: {i: np.eye(4)[i - 4] for i in ids},
    )
    assert _ranked(alike)[0] == "episode:5"
    assert _ranked(apart)[0] == "episode:4"


def test_a_question_about_the_past_is_told_apart() -> None:
    assert asks_present("Where does the user live now?")
    assert not asks_present("Where did the user live before?")
    assert not asks_present("用户以前住在哪里？")
