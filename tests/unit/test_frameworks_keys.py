"""The pure mappings of the framework adapters: namespace -> scope and fact keys, value -> turn text,
LangGraph's filter and namespace matching, Agents SDK items <-> turns."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_frameworks import keys
from hindsight_frameworks.openai_agents import item_turn, turn_item

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("namespace", "scope", "path", "entity"),
    [
        (("bot", "u1"), keys.Scope("bot", "u1"), (), "lg:/"),
        (("bot", "u1", "prefs"), keys.Scope("bot", "u1"), ("prefs",), "lg:/prefs/"),
        (("bot", "u1", "a b", "ç"), keys.Scope("bot", "u1"), ("a b", "ç"), "lg:/a%20b/%C3%A7/"),
    ],
)
def test_namespace_maps_to_scope_and_entity(
    namespace: tuple[str, ...], scope: keys.Scope, path: tuple[str, ...], entity: str
) -> None:
    assert keys.split_namespace(namespace) == (scope, path)
    assert keys.entity_of(path) == entity


@pytest.mark.parametrize("namespace", [(), ("bot",), ("bot", "u 1"), ("b\tot", "u1"), ("x" * 300, "u1")])
def test_a_namespace_that_names_no_scope_is_refused(namespace: tuple[str, ...]) -> None:
    with pytest.raises(keys.NamespaceError, match="namespace"):
        keys.split_namespace(namespace)


def test_a_path_prefix_is_an_entity_prefix_and_no_sibling_matches() -> None:
    assert keys.entity_of(("a", "b")).startswith(keys.entity_of(("a",)))
    assert not keys.entity_of(("ab",)).startswith(keys.entity_of(("a",)))


def test_put_turn_carries_the_item_and_its_fact_keys() -> None:
    t = keys.put_turn(
        ("bot", "u1", "prefs"), "food", {"text": "likes ramen"}, index=None, default_role="assistant", now=NOW
    )
    assert (t.scope, t.role, t.content, t.ts) == (keys.Scope("bot", "u1"), "assistant", "likes ramen", NOW)
    assert t.metadata["entity"] == "lg:/prefs/"
    assert t.metadata["attribute"] == "food"
    assert t.metadata["value"] == '{"text":"likes ramen"}'
    assert t.metadata["store"] == {
        "namespace": ["prefs"],
        "key": "food",
        "value": {"text": "likes ramen"},
        "index": True,
    }
    again = keys.put_turn(
        ("bot", "u1", "prefs"), "food", {"text": "likes ramen"}, index=None, default_role="assistant", now=NOW
    )
    assert again.turn_id != t.turn_id  # each put is a version of its own
    assert again.turn_id.split("@")[0] == t.turn_id.split("@")[0]


def test_a_value_names_its_role_and_index_false_is_kept() -> None:
    t = keys.put_turn(
        ("bot", "u1"),
        "k",
        {"role": "user", "text": "hi there"},
        index=False,
        default_role="assistant",
        now=NOW,
    )
    assert t.role == "user"
    assert t.metadata["store"]["index"] is False


def test_values_too_large_or_not_json_are_refused() -> None:
    with pytest.raises(ValueError, match="more than"):
        keys.put_turn(("bot", "u1"), "k", {"text": "x" * 20_000}, index=None, default_role="user", now=NOW)
    with pytest.raises(ValueError, match="JSON object"):
        keys.put_turn(("bot", "u1"), "k", {"when": NOW}, index=None, default_role="user", now=NOW)


@pytest.mark.parametrize(
    ("value", "index", "text"),
    [
        ({"text": "a note"}, None, "a note"),
        ({"memory": "m", "other": 1}, None, "m"),
        ({"city": "Lisbon", "since": 2024}, None, "city: Lisbon\nsince: 2024"),
        ({"a": {"b": "deep"}, "c": "top"}, ["a.b"], "deep"),
        ({"a": {"b": "deep"}, "c": "top"}, ["c", "a.b"], "top\ndeep"),
        ({"n": None}, None, '{"n":null}'),
    ],
)
def test_render(value: dict[str, object], index: list[str] | None, text: str) -> None:
    assert keys.render(value, index) == text


@pytest.mark.parametrize(
    ("value", "condition", "ok"),
    [
        ("hotel", "hotel", True),
        ("hotel", "flight", False),
        (3, {"$gte": 2}, True),
        (1, {"$gt": 1}, False),
        ("x", {"$ne": "y"}, True),
        ({"a": 1, "b": 2}, {"a": 1}, True),
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        ("abc", {"$lt": 3}, False),
    ],
)
def test_filter_matches_as_langgraph_does(value: object, condition: object, ok: bool) -> None:
    assert keys.matches(value, condition) is ok


def test_an_unknown_filter_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported operator"):
        keys.matches(1, {"$in": [1]})


@pytest.mark.parametrize(
    ("namespace", "kind", "path", "ok"),
    [
        (("a", "u", "x"), "prefix", ("a",), True),
        (("a", "u", "x"), "prefix", ("*", "u"), True),
        (("a", "u", "x"), "suffix", ("x",), True),
        (("a", "u", "x"), "suffix", ("u",), False),
        (("a",), "prefix", ("a", "u"), False),
    ],
)
def test_namespace_match_conditions(
    namespace: tuple[str, ...], kind: str, path: tuple[str, ...], ok: bool
) -> None:
    assert keys.namespace_matches(namespace, kind, path) is ok


@pytest.mark.parametrize(
    ("item", "role", "content"),
    [
        ({"role": "user", "content": "hello"}, "user", "hello"),
        (
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
            "assistant",
            "hi",
        ),
        ({"role": "developer", "content": "be brief"}, "system", "be brief"),
        (
            {"type": "function_call", "call_id": "c1", "name": "recall", "arguments": "{}"},
            "assistant",
            "called recall({})",
        ),
        ({"type": "function_call_output", "call_id": "c1", "output": "3 memories"}, "tool", "3 memories"),
    ],
)
def test_agents_items_become_turns_and_come_back(item: dict[str, object], role: str, content: str) -> None:
    got_role, got_content, rest = item_turn(item)
    assert (got_role, got_content) == (role, content)
    assert turn_item(got_content, rest) == item  # every field and part, as given


@pytest.mark.parametrize(
    "item",
    [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is this?\n"},
                {"type": "input_image", "image_url": "https://example.com/c.png", "detail": "auto"},
                {"type": "input_text", "text": " a\nb "},
            ],
        },
        {"role": "user", "content": "  padded  "},
        {"role": "assistant", "content": "   "},  # no text to recall: kept whole in metadata
        {
            "type": "function_call_output",
            "call_id": "c",
            "output": [{"type": "input_image", "file_id": "f1"}],
        },
        {"type": "reasoning", "id": "r1", "summary": []},
    ],
)
def test_agents_items_with_parts_or_no_text_come_back_exactly(item: dict[str, object]) -> None:
    _, content, rest = item_turn(item)
    assert content.strip()
    assert turn_item(content, rest) == item


def test_agents_items_stored_before_parts_were_kept_still_read() -> None:
    assert turn_item(
        "3 memories", {"type": "function_call_output", "call_id": "c", "_output_in_content": True}
    ) == {
        "type": "function_call_output",
        "call_id": "c",
        "output": "3 memories",
    }
    assert turn_item("hi", {"type": "message", "role": "assistant"})["content"] == "hi"
