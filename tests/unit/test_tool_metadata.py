"""A tool turn's call record (issue 30): validated at every door by `parse_event`, each refusal naming its
field; a tool turn without the keys, and other roles using them, work as before."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pipeline.core.errors import InvalidTurn
from pipeline.core.models import Turn
from pipeline.core.tool_calls import is_tool_call, tool_call_of
from pipeline.ingest.validation import decode_stream_fields, encode_event, parse_event

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
CALL = {
    "tool": "flights.search",
    "args": {"from": "PVG", "to": "NRT", "dates": ["2026-06-01", "2026-06-05"]},
    "status": "ok",
    "latency_ms": 1200,
    "task": "flight search",
}


def fields(role: str = "tool", **meta: Any) -> dict[str, Any]:
    return {
        "agent_id": "travel-bot",
        "user_id": "u1",
        "session_id": "s1",
        "turn_id": "t1",
        "role": role,
        "content": '{"flights": 3}',
        "ts": "2026-05-01T10:00:00+00:00",
        "metadata": meta,
    }


def reason(meta: dict[str, Any]) -> str:
    with pytest.raises(InvalidTurn) as info:
        parse_event(fields(**meta), now=NOW)
    return info.value.reason


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({**CALL, "tool": None}, "metadata.tool: missing"),
        ({"status": "ok", "latency_ms": 3}, "metadata.tool: missing"),
        ({**CALL, "tool": ""}, "metadata.tool: must be a non-empty string"),
        ({**CALL, "tool": 7}, "metadata.tool: must be a non-empty string"),
        ({**CALL, "tool": "a\nb"}, "metadata.tool: must be printable"),
        ({**CALL, "tool": "x" * 201}, "metadata.tool: must be printable and at most 200"),
        ({"tool": "t"}, "metadata.status: missing"),
        ({**CALL, "status": "failed"}, "metadata.status: must be one of ok, error, timeout"),
        ({**CALL, "status": None}, "metadata.status: must be one of ok, error, timeout"),
        ({**CALL, "args": ["a", "b"]}, "metadata.args: must be an object, got list"),
        ({**CALL, "args": "from=PVG"}, "metadata.args: must be an object, got str"),
        ({**CALL, "latency_ms": -1}, "metadata.latency_ms: must be a number >= 0"),
        ({**CALL, "latency_ms": "1200"}, "metadata.latency_ms: must be a number >= 0"),
        ({**CALL, "latency_ms": True}, "metadata.latency_ms: must be a number >= 0"),
        ({**CALL, "error": 504}, "metadata.error: must be a string"),
        ({**CALL, "task": ["flights"]}, "metadata.task: must be a string"),
        ({**CALL, "task": "x" * 501}, "metadata.task: longer than 500 characters"),
    ],
)
def test_a_bad_call_record_is_refused_naming_its_field(meta: dict[str, Any], expected: str) -> None:
    meta = {k: v for k, v in meta.items() if not (k == "tool" and v is None)}
    assert reason(meta).startswith(expected)


def test_a_good_call_record_survives_the_stream_unchanged() -> None:
    turn = parse_event(fields(**{**CALL, "error": "", "latency_ms": 0.5}), now=NOW)
    assert isinstance(turn, Turn)
    again = parse_event(decode_stream_fields(encode_event(turn)), now=NOW, require_ts=True)
    assert again == turn
    assert is_tool_call(turn.role, turn.metadata)
    call = tool_call_of(9, turn.turn_id, turn.ts, turn.metadata)
    assert (call.tool, call.arg_keys, call.status, call.latency_ms) == (
        "flights.search",
        ("dates", "from", "to"),
        "ok",
        0.5,
    )
    assert call.error is None  # an empty error says nothing
    assert call.task == "flight search"


def test_a_tool_turn_without_a_record_is_an_ordinary_turn() -> None:
    turn = parse_event(fields(), now=NOW)
    assert isinstance(turn, Turn)
    assert turn.metadata == {}
    assert not is_tool_call(turn.role, turn.metadata)


def test_other_roles_keep_these_keys_for_their_own_ends() -> None:
    turn = parse_event(fields("user", status="vip", tool=3), now=NOW)
    assert isinstance(turn, Turn)
    assert turn.metadata == {"status": "vip", "tool": 3}
    assert not is_tool_call(turn.role, turn.metadata)
