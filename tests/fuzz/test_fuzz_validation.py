"""Fuzzing the one validator every entry point shares (client, HTTP, JSONL, stream): a Turn or a clear
InvalidTurn, never another exception; what it accepts survives the stream encoding unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.errors import InvalidTurn
from pipeline.core.models import SessionEnd, Turn
from pipeline.ingest.validation import (
    MAX_CONTENT_BYTES,
    MAX_YEAR,
    MIN_YEAR,
    decode_stream_fields,
    encode_event,
    parse_event,
)
from tests.fuzz.strategies import EXAMPLES, FIELDS, FUZZ_TIMEOUT_S, NOW, json_values, turn_fields

pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(FUZZ_TIMEOUT_S)]
T = TypeVar("T")
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


def _attempt(fn: Callable[[], T]) -> tuple[T | None, str | None]:
    """(result, None), or (None, the InvalidTurn reason); any other exception fails the test."""
    try:
        return fn(), None
    except InvalidTurn as exc:
        return None, exc.reason


KNOWN = {"entry", *FIELDS}


@FUZZ
@given(turn_fields())
def test_every_mapping_is_a_turn_or_a_clear_rejection(fields: dict[str, Any]) -> None:
    event, reason = _attempt(lambda: parse_event(fields, now=NOW))
    if event is None:
        assert reason
        # The reason starts with the field (or "entry") it is about.
        assert reason.split(":", 1)[0].split(".")[0] in KNOWN, reason
        return
    _check_accepted(event)


# A side check of the same surface, not a surface of its own: a tenth of the cases is plenty.
@settings(max_examples=max(EXAMPLES // 10, 100), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(json_values, st.lists(json_values, max_size=3)))
def test_anything_that_is_not_an_object_is_rejected(value: Any) -> None:
    if isinstance(value, dict):
        return
    with pytest.raises(InvalidTurn, match="entry: must be an object"):
        parse_event(value, now=NOW)


@FUZZ
@given(st.dictionaries(st.binary(max_size=12), st.binary(max_size=40), max_size=12))
def test_raw_stream_fields_decode_or_name_the_bad_field(raw: dict[bytes, bytes]) -> None:
    fields, reason = _attempt(lambda: decode_stream_fields(raw))
    if fields is None:
        assert reason
        assert "not valid UTF-8" in reason
        return
    event, reason = _attempt(lambda: parse_event(fields, now=NOW, require_ts=True))
    if event is None:
        assert reason
        return
    _check_accepted(event)
