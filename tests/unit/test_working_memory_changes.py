"""Working memory changes (validation) and the turns that hand confirmed slots to the light review."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.core.errors import InvalidTurn
from pipeline.core.models import Turn
from pipeline.ingest.validation import encode_event, parse_event
from pipeline.ingest.working_memory import Limits, WorkingMemory, parse_change, slot_turn_id, slot_turns
from pipeline.review import fact_extraction

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_change_merges_slots_drops_null_ones_and_clears_an_empty_task() -> None:
    change = parse_change(task="", slots={"city": "Porto", "seat": None}, pending_questions=["when?"])
    assert change.set_slots == {"city": "Porto"}
    assert change.drop_slots == ("seat",)
    assert change.clear_task is True
    assert change.task is None
    assert change.pending_questions == ("when?",)
    assert change.replace is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slots": {"": "x"}}, "slots: name ''"),
        ({"slots": {"has space": "x"}}, "slots: name 'has space'"),
        ({"slots": {"-leading": "x"}}, "slots: name '-leading'"),
        ({"slots": {"x" * 65: "v"}}, "must be 1-64 characters"),
        ({"slots": {"city": "  "}}, "slots.city: expected a non-empty string"),
        ({"slots": {"city": 7}}, "slots.city: expected a non-empty string"),
        ({"slots": {"city": "a" * 11}}, "slots.city: longer than 10 characters"),
        ({"task": "a" * 11}, "task: longer than 10 characters"),
        ({"task": "a\x00b"}, "task: contains a NUL character"),
        ({"pending_questions": ["ok", 3]}, "pending_questions[1]: expected a string, got int"),
        ({"pending_questions": ["q"] * 3}, "pending_questions: at most 2, got 3"),
        ({"slots": {f"s{i}": "v" for i in range(3)}}, "slots: at most 2, got 3"),
    ],
)
def test_bad_changes_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidTurn) as err:
        parse_change(**kwargs, limits=Limits(max_slots=2, max_questions=2, max_chars=10))  # type: ignore[arg-type]
    assert message in err.value.reason


def test_slot_turns_are_valid_stream_entries_that_state_a_user_fact_with_full_confidence() -> None:
    state = WorkingMemory(task="book", slots={"seat": "aisle", "home_city": "Berlin"})
    fields = slot_turns(state, agent_id="a", user_id="u", session_id="s1", now=NOW)
    assert [f["metadata"]["attribute"] for f in fields] == ["home_city", "seat"]  # stable order
    event = parse_event(
        encode_event(parse_event(fields[0], now=NOW)), now=NOW
    )  # round trip through the stream
    assert isinstance(event, Turn)
    assert (event.role, event.source, event.session_id) == ("system", "user", "s1")
    found = fact_extraction.extract(
        event.content,
        role=event.role,
        source=event.source,
        ts=event.ts,
        turn_id=event.turn_id,
        metadata=event.metadata,
    )
    [fact] = found.facts
    assert (fact.entity, fact.attribute, fact.value) == ("user", "home_city", "Berlin")
    assert (fact.source, fact.confidence, fact.valid_from) == ("user", 1.0, NOW)
    assert fact.turn_ids == (slot_turn_id("a", "u", "s1", "home_city", "Berlin"),)


def test_slot_turn_ids_are_the_idempotency_key_of_one_value_in_one_session() -> None:
    same = slot_turn_id("a", "u", "s1", "city", "Porto")
    assert same == slot_turn_id("a", "u", "s1", "city", "Porto")
    others = {
        slot_turn_id("a", "u", "s2", "city", "Porto"),
        slot_turn_id("a", "u", "s1", "city", "Lisbon"),
        slot_turn_id("a", "v", "s1", "city", "Porto"),
        slot_turn_id("a", "u", "s1", "town", "Porto"),
    }
    assert same not in others
    assert len(others) == 4


def test_an_empty_state_hands_nothing_over() -> None:
    assert slot_turns(WorkingMemory(task="t"), agent_id="a", user_id="u", session_id="s", now=NOW) == []
    assert WorkingMemory().empty
    assert not WorkingMemory(pending_questions=("q",)).empty
