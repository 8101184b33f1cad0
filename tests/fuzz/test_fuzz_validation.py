"""Fuzzing the one validator every entry point shares (client, HTTP, JSONL, stream): a Turn or a clear
InvalidTurn, never another exception; what it accepts survives the stream encoding unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.errors import InvalidTurn
from pipeline.models import SessionEnd, Turn
from pipeline.validation import (
    MAX_CONTENT_BYTES,
    MAX_YEAR,
    MIN_YEAR,
    decode_stream_fields,
    encode_event,
    parse_event,
)
from tests.fuzz.strategies import EXAMPLES, NOW, json_values, turn_fields

pytestmark = pytest.mark.fuzz
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def _check_accepted(event: Turn | SessionEnd) -> None:
    assert MIN_YEAR <= event.ts.year <= MAX_YEAR
    assert event.ts.utcoffset() is not None
    if isinstance(event, Turn):
        assert event.content.strip()
        assert len(event.content.encode("utf-8")) <= MAX_CONTENT_BYTES
        assert "\x00" not in event.content
    # What the client and the API put on the stream is exactly what the scheduler reads back.
    encoded = encode_event(event)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in encoded.items())
    wire = {k.encode("utf-8"): v.encode("utf-8") for k, v in encoded.items()}
    assert parse_event(decode_stream_fields(wire), now=NOW, require_ts=True) == event


@FUZZ
@given(turn_fields())
def test_every_mapping_is_a_turn_or_a_clear_rejection(fields: dict[str, Any]) -> None:
    try:
        event = parse_event(fields, now=NOW)
    except InvalidTurn as exc:
        assert exc.reason
        head = exc.reason.split(":", 1)[0]
        # The reason starts with the field (or "entry") it is about.
        assert head.split(".")[0] in {
            *fields,
            "entry",
            "v",
            "kind",
            "ts",
            "content",
            "role",
            "source",
            "metadata",
            "turn_id",
            "agent_id",
            "user_id",
            "session_id",
        }, exc.reason
        return
    _check_accepted(event)


@FUZZ
@given(st.one_of(json_values, st.lists(json_values, max_size=3)))
def test_anything_that_is_not_an_object_is_rejected(value: Any) -> None:
    if isinstance(value, dict):
        return
    with pytest.raises(InvalidTurn, match="entry: must be an object"):
        parse_event(value, now=NOW)


@FUZZ
@given(st.dictionaries(st.binary(max_size=12), st.binary(max_size=40), max_size=12))
def test_raw_stream_fields_decode_or_name_the_bad_field(raw: dict[bytes, bytes]) -> None:
    try:
        fields = decode_stream_fields(raw)
    except InvalidTurn as exc:
        assert "not valid UTF-8" in exc.reason
        return
    try:
        event = parse_event(fields, now=NOW, require_ts=True)
    except InvalidTurn as exc:
        assert exc.reason
        return
    _check_accepted(event)
